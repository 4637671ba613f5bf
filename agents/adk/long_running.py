"""What Toolcrib reads from ADK about long-running calls, and how a tool says who answers.

A long-running tool's call event carries `long_running_tool_ids`; those calls wait
for a result that someone posts later. ADK's own requests (`adk_request_credential`,
`adk_request_confirmation`) are long-running too, but they are answered through
credentials and approvals, never as plain function responses.
"""

from google.adk.agents import BaseAgent
from google.adk.events import Event as AdkEvent
from google.adk.tools import BaseTool
from google.genai import types

ANSWERED_BY = "toolcrib_answered_by"
ADK_REQUEST_PREFIX = "adk_request_"


def answered_by(tool: BaseTool, *, group: str) -> BaseTool:
    """Mark a long-running tool as answered by members of `group` (or staff).

    The user who made the request may then never answer it themselves.
    """
    tool.custom_metadata = {**(tool.custom_metadata or {}), ANSWERED_BY: group}
    return tool


def long_running_calls(event: AdkEvent) -> list[types.FunctionCall]:
    """The calls of an event that wait for a result posted later."""
    if event.partial or not event.long_running_tool_ids:
        return []
    return [
        call
        for call in event.get_function_calls()
        if call.id in event.long_running_tool_ids
        and not (call.name or "").startswith(ADK_REQUEST_PREFIX)
    ]


def answering_group(root: BaseAgent, *, author: str, tool_name: str) -> str:
    """The group a tool of agent `author` is answered by; "" for the session owner."""
    agent = root.find_agent(author)
    for tool in getattr(agent, "tools", None) or []:
        if isinstance(tool, BaseTool) and tool.name == tool_name:
            return str((tool.custom_metadata or {}).get(ANSWERED_BY, ""))
    return ""
