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
APPROVAL_TIMEOUT = "toolcrib_approval_timeout"
ADK_REQUEST_PREFIX = "adk_request_"
# In a confirmation's payload, set by whoever asks for it (the catalog's approval
# gate): who decides, and in how many seconds it expires.
PAYLOAD_APPROVER_GROUP = "toolcrib_approver_group"
PAYLOAD_TIMEOUT = "toolcrib_approval_timeout"


def answered_by(tool: BaseTool, *, group: str) -> BaseTool:
    """Mark a long-running tool as answered by members of `group` (or staff).

    The user who made the request may then never answer it themselves.
    """
    tool.custom_metadata = {**(tool.custom_metadata or {}), ANSWERED_BY: group}
    return tool


def approval_timeout(tool: BaseTool, *, seconds: float) -> BaseTool:
    """Mark a tool's approvals as expiring (rejected) `seconds` after they are asked."""
    tool.custom_metadata = {**(tool.custom_metadata or {}), APPROVAL_TIMEOUT: seconds}
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


def _marks(root: BaseAgent, *, author: str, tool_name: str) -> dict:
    agent = root.find_agent(author)
    for tool in getattr(agent, "tools", None) or []:
        if isinstance(tool, BaseTool) and tool.name == tool_name:
            return dict(tool.custom_metadata or {})
    return {}


def answering_group(root: BaseAgent, *, author: str, tool_name: str) -> str:
    """The group a tool of agent `author` is answered by; "" for the session owner."""
    return str(_marks(root, author=author, tool_name=tool_name).get(ANSWERED_BY, ""))


def approval_rule(
    root: BaseAgent, *, author: str, tool_name: str, payload: dict
) -> tuple[str, float | None]:
    """Who decides an approval of this tool, and in how many seconds it expires.

    The tool's own marks (answered_by, approval_timeout) win; the confirmation's
    payload (what the catalog's approval gate set) fills in what they leave out.
    """
    marks = _marks(root, author=author, tool_name=tool_name)
    group = str(marks.get(ANSWERED_BY) or payload.get(PAYLOAD_APPROVER_GROUP) or "")
    timeout = marks.get(APPROVAL_TIMEOUT)
    if timeout is None:
        timeout = payload.get(PAYLOAD_TIMEOUT)
    return group, float(timeout) if timeout is not None else None
