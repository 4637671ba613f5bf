"""The agents of the ToolSet architecture reference (seed 002), from its examples.

The seed's context returns several toolsets (QueryTools active, AdminTools not), or
returns AdminTools only `if (this.data.adminMode)`; the agent switches several at
once with activateToolSets(names[]). In Toolcrib the toolsets are BaseToolsets,
the model switches with the activation tools (`names: [...]`), and the condition is
settings.TOOLCRIB_CONDITIONAL_TOOLSETS (the tests set it). Factories, registered by
the tests through settings.TOOLCRIB_AGENTS.
"""

from google.adk.agents import LlmAgent
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool, ToolContext
from google.adk.tools.base_toolset import BaseToolset

from agents.adk.offline import OfflineStep
from tests.toolsets.scripted import RecordingLlm
from toolsets.activation import activation_tools

RECORDS = {"r1": "open"}


def query_records() -> dict:
    """Query the records."""
    return {"status": "success", "records": dict(RECORDS)}


def close_record(record_id: str) -> dict:
    """Close a record.

    Args:
        record_id: Which record.
    """
    RECORDS[record_id] = "closed"
    return {"status": "success", "record": record_id}


def purge_records() -> dict:
    """Remove every closed record."""
    for key in [k for k, v in RECORDS.items() if v == "closed"]:
        del RECORDS[key]
    return {"status": "success"}


def echo(text: str) -> dict:
    """Say something back.

    Args:
        text: What to say.
    """
    return {"status": "success", "text": text}


def enter_admin_mode(tool_context: ToolContext) -> dict:
    """Enter admin mode: the admin tools are yours from your next step."""
    tool_context.state["admin_mode"] = True
    return {"status": "success"}


class QueryTools(BaseToolset):
    """Tools for querying data."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(query_records)]


class AdminTools(BaseToolset):
    """Tools for administrative tasks."""

    catalog_defaults = {"active_by_default": False}  # 默认不激活

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(close_record)]


class MaintenanceTools(BaseToolset):
    """Tools for maintenance."""

    catalog_defaults = {"active_by_default": False}

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(purge_records)]


class BasicTools(BaseToolset):
    """Essential tools for this context."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(echo), FunctionTool(enter_admin_mode)]


class RestrictedAdminTools(BaseToolset):
    """Administrative tools (restricted)."""

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        return [FunctionTool(purge_records)]


def multi_agent() -> LlmAgent:
    """Activates two toolsets in one call, uses them, deactivates both."""
    script = [
        OfflineStep.call(
            "activate_toolset", names=["admin_tools", "maintenance_tools"]
        ),
        OfflineStep.call("close_record", record_id="r1"),
        OfflineStep.call("purge_records"),
        OfflineStep.call(
            "deactivate_toolset", names=["admin_tools", "maintenance_tools"]
        ),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="multi_agent",
        model=RecordingLlm(script=script),
        tools=[QueryTools(), AdminTools(), MaintenanceTools(), *activation_tools()],
    )


def careless_agent() -> LlmAgent:
    """Activates a known and an unknown toolset in one call: neither changes."""
    script = [
        OfflineStep.call("activate_toolset", names=["admin_tools", "no_such_tools"]),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="careless_agent",
        model=RecordingLlm(script=script),
        tools=[QueryTools(), AdminTools(), MaintenanceTools(), *activation_tools()],
    )


def mode_agent() -> LlmAgent:
    """BasicTools always; RestrictedAdminTools only in admin mode (a state key)."""
    script = [
        OfflineStep.call("purge_records"),
        OfflineStep.call("enter_admin_mode"),
        OfflineStep.call("purge_records"),
        OfflineStep.say("done"),
    ]
    return LlmAgent(
        name="mode_agent",
        model=RecordingLlm(script=script),
        tools=[BasicTools(), RestrictedAdminTools(), *activation_tools()],
    )
