"""The billing agent: its own AdminTools (closes invoices) and a LedgerTools no
other agent's class is named like."""

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset

from agents.adk.offline import OfflineStep
from tests.toolsets.scripted import RecordingLlm
from tests.toolsets.twins import CLOSED


def close_invoice(invoice: str) -> dict:
    """Close an invoice.

    Args:
        invoice: Which invoice.
    """
    CLOSED.append(f"invoice {invoice}")
    return {"status": "success", "invoice": invoice}


def read_ledger() -> dict:
    """Read the ledger."""
    return {"status": "success", "balance": 10}


class AdminTools(BaseToolset):
    """Billing administration."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(close_invoice)]


class LedgerTools(BaseToolset):
    """The ledger."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(read_ledger)]


def billing_agent() -> LlmAgent:
    """Closes invoice 7, whatever it was offered, then answers."""
    script = [OfflineStep.call("close_invoice", invoice="7"), OfflineStep.say("done")]
    return LlmAgent(
        name="billing_agent",
        model=RecordingLlm(script=script),
        tools=[AdminTools(), LedgerTools()],
    )
