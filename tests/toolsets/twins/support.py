"""The support agent: its own AdminTools (closes tickets), and a Rockets class
whose snake name a settings toolset has already."""

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset

from agents.adk.offline import OfflineStep
from tests.toolsets.scripted import RecordingLlm
from tests.toolsets.twins import CLOSED


def close_ticket(ticket: str) -> dict:
    """Close a support ticket.

    Args:
        ticket: Which ticket.
    """
    CLOSED.append(f"ticket {ticket}")
    return {"status": "success", "ticket": ticket}


def count_rockets() -> dict:
    """Count the rockets."""
    return {"status": "success", "rockets": 3}


class AdminTools(BaseToolset):
    """Support administration."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(close_ticket)]


class Rockets(BaseToolset):
    """Rockets, as support sees them."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(count_rockets)]


def support_agent() -> LlmAgent:
    """Closes ticket 9, whatever it was offered, then answers."""
    script = [OfflineStep.call("close_ticket", ticket="9"), OfflineStep.say("done")]
    return LlmAgent(
        name="support_agent",
        model=RecordingLlm(script=script),
        tools=[AdminTools(), Rockets()],
    )
