"""The catalog's approval gate: hold a call of a tool an administrator marks as needing approval.

An administrator marks a tool in the catalog (Tool.requires_approval, with an
optional approver group and timeout). For such a tool, whose code asks nothing,
the gate asks ADK's tool confirmation itself, so the request, the decision and the
resumed call are exactly those of a tool built with `require_confirmation=True`
(agents.requests). The confirmation's payload carries who decides and when it
expires, so the runtime records the request without reading the catalog.
"""

from google.adk.agents.context import Context
from google.adk.tools import BaseTool

from agents.adk.long_running import PAYLOAD_APPROVER_GROUP, PAYLOAD_TIMEOUT
from toolsets import access

# In a catalog-asked confirmation's payload: the Tool row that asked.
CATALOG_TOOL = "toolcrib_catalog_tool"


async def acatalog_gate(
    *, tool: BaseTool, tool_context: Context, full_name: str
) -> dict | None:
    """Hold a call of a tool the catalog marks as needing approval; None lets it run.

    The first call asks (ADK's request_confirmation) and does not run; the call
    ADK re-runs once approved carries the decision, so it is not asked twice.
    """
    row = await access.acatalog_tool(full_name)
    if row is None or not row.requires_approval:
        return None
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(
            hint=f"An administrator requires approval for each call of {tool.name}.",
            payload={
                CATALOG_TOOL: full_name,
                PAYLOAD_APPROVER_GROUP: row.approver_group or "",
                PAYLOAD_TIMEOUT: row.approval_timeout,
            },
        )
        # A pause, not a result: the model must not be asked to go on.
        tool_context.actions.skip_summarization = True
        return {"error": "This tool call requires approval, please approve or reject."}
    if not confirmation.confirmed:
        return {"error": "This tool call is rejected."}
    return None
