"""What Toolcrib reads from ADK about long-running calls, and how a tool says who answers.

A long-running tool's call event carries `long_running_tool_ids`; those calls wait
for a result that someone posts later. ADK's own requests (`adk_request_credential`,
`adk_request_confirmation`) are long-running too, but they are answered through
credentials and approvals, never as plain function responses. ADK 2.x's
`adk_request_input` (a workflow asking a person) is answered as a call is, but
one: a workflow tool node's call held by the catalog's approval gate asks for its
node's confirmation (node_approval), and is decided as an approval is.
"""

from collections.abc import Mapping
from typing import Any

from google.adk.agents.context import Context
from google.adk.events import Event as AdkEvent
from google.adk.events import RequestInput
from google.adk.tools import BaseTool
from google.adk.workflow import BaseNode
from google.adk.workflow.utils._workflow_hitl_utils import (
    create_confirmation_request_input,
)
from google.genai import types

from agents.adk.nodes import find_node, is_tool_node, node_tools, walk

ANSWERED_BY = "toolcrib_answered_by"
APPROVAL_TIMEOUT = "toolcrib_approval_timeout"
# ADK's requests that are answered through credentials and approvals. Any other
# long-running call waits for a result a person posts: a tool's, or ADK 2.x's
# `adk_request_input` (a workflow node's `RequestInput`, a human-input node, a
# function node's `require_confirmation`), whose result resumes the workflow.
ANSWERED_ELSEWHERE = frozenset({"adk_request_credential", "adk_request_confirmation"})
REQUEST_INPUT_CALL = "adk_request_input"
# In a confirmation's payload, set by whoever asks for it (the catalog's approval
# gate): who decides, in how many seconds it expires, whether the requester may
# decide it herself, and what the tool does, in the catalog's words.
PAYLOAD_APPROVER_GROUP = "toolcrib_approver_group"
PAYLOAD_TIMEOUT = "toolcrib_approval_timeout"
PAYLOAD_SELF_APPROVAL = "toolcrib_requester_may_approve"
PAYLOAD_DESCRIPTION = "toolcrib_description"
# How many people must approve (the two-person rule), and the catalog tool asked of.
PAYLOAD_APPROVALS = "toolcrib_approvals_required"
PAYLOAD_CATALOG_TOOL = "toolcrib_catalog_tool"
# In a workflow tool node's approval: the id of the held call (its audit row's).
PAYLOAD_CALL_ID = "toolcrib_call_id"
# In an approval's answer (ToolConfirmation.payload, agents.requests.kinds): the
# arguments an approver changed the call to and who did; or the text the tool's
# caller gets instead of a run ("respond").
ANSWER_ARGUMENTS = "toolcrib_arguments"
ANSWER_EDITED_BY = "toolcrib_edited_by"
ANSWER_RESPONSE = "toolcrib_response"


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
        and (call.name or "") not in ANSWERED_ELSEWHERE
        and node_approval(call) is None
    ]


def ask_node_approval(
    context: Context, *, tool: BaseTool, args: Mapping[str, Any]
) -> RequestInput | None:
    """The request a workflow's tool node makes when the catalog's approval gate
    held its call (the confirmation it asked for, taken off the call's actions);
    None if the gate asked nothing.

    ADK's tool node turns a confirmation into its node's request for input only
    when no plugin answered the call; the gate answers it (the tool must not run),
    so governance hands the node this request instead, the one ADK itself makes
    for a tool's own `require_confirmation` (`wf_tool_confirmation:<node path>`):
    once decided, the node runs again with the decision as its confirmation. Its
    payload names the held call, whose audit row reads the decision.
    """
    call_id = context.function_call_id
    asked = context.actions.requested_tool_confirmations.pop(call_id or "", None)
    if asked is None:
        return None
    payload = dict(asked.payload or {})
    payload[PAYLOAD_CALL_ID] = call_id
    return create_confirmation_request_input(
        node_path=context.node_path,
        tool_name=tool.name,
        args=dict(args),
        hint=asked.hint,
        confirmation_payload=payload,
    )


def node_approval(call: types.FunctionCall) -> dict | None:
    """The request of a workflow tool node held by the catalog's approval gate
    (ask_node_approval): its payload (`tool_name`, `args`, `confirmation_payload`);
    None for any other call, among them a node's own confirmation (answered as a
    call is: agents.requests.kinds)."""
    if call.name != REQUEST_INPUT_CALL:
        return None
    payload = (call.args or {}).get("payload")
    if not isinstance(payload, dict):
        return None
    confirmation = payload.get("confirmation_payload")
    if not isinstance(confirmation, dict) or not confirmation.get(PAYLOAD_CALL_ID):
        return None
    if not confirmation.get(PAYLOAD_CATALOG_TOOL):
        return None
    return payload


def _tool(root: BaseNode, *, author: str, tool_name: str) -> BaseTool | None:
    agent = find_node(root, author) if author else None
    for tool in node_tools(agent) if agent is not None else []:
        if isinstance(tool, BaseTool) and tool.name == tool_name:
            return tool
    # A workflow's tool node: the event's author is the workflow, not the node.
    for node in walk(root):
        tool = getattr(node, "tool", None)
        if is_tool_node(node) and tool.name == tool_name:
            return tool
    return None


def _marks(root: BaseNode, *, author: str, tool_name: str) -> dict:
    tool = _tool(root, author=author, tool_name=tool_name)
    return dict(tool.custom_metadata or {}) if tool is not None else {}


def tool_description(
    root: BaseNode, *, author: str, tool_name: str, payload: dict | None = None
) -> str:
    """What a tool does, in a line a person reads: its catalog entry's (the
    confirmation's payload), else its own declaration's first line; "" if unknown."""
    text = str((payload or {}).get(PAYLOAD_DESCRIPTION) or "")
    if not text:
        tool = _tool(root, author=author, tool_name=tool_name)
        text = tool.description if tool is not None else ""
    return first_line(text)


def first_line(text: str) -> str:
    """The first non-blank line of a text, stripped."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def requester_may_approve(payload: dict) -> bool:
    """Whether the catalog lets the requester decide this approval herself."""
    return payload.get(PAYLOAD_SELF_APPROVAL) is True


def answering_group(root: BaseNode, *, author: str, tool_name: str) -> str:
    """The group a tool of agent `author` is answered by; "" for the session owner."""
    return str(_marks(root, author=author, tool_name=tool_name).get(ANSWERED_BY, ""))


def approval_rule(
    root: BaseNode, *, author: str, tool_name: str, payload: dict
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


def approvals_required(payload: dict) -> int:
    """How many people must approve a call (the catalog's two-person rule); 1 at least."""
    value = payload.get(PAYLOAD_APPROVALS)
    if isinstance(value, bool) or not isinstance(value, int):
        return 1
    return max(value, 1)
