"""The requests' door for the apps above agents: a pause for a person (a
long-running call, an approval, a credential request) recorded, worded, answered
and decided, and the names a tool's long-running payload and its answer carry.

Part of agents' public door (agents.runtime says which modules it is).
`complete_call` is how trusted code (a task, a service) posts a long-running
call's result (docs/tools.md).
"""

from agents.adk.long_running import (
    ANSWER_ARGUMENTS,
    ANSWER_EDITED_BY,
    ANSWER_RESPONSE,
    PAYLOAD_APPROVALS,
    PAYLOAD_APPROVER_GROUP,
    PAYLOAD_CATALOG_TOOL,
    PAYLOAD_DESCRIPTION,
    PAYLOAD_SELF_APPROVAL,
    PAYLOAD_TIMEOUT,
    answered_by,
    approval_rule,
    approvals_required,
    ask_node_approval,
    first_line,
    requester_may_approve,
    tool_description,
)
from agents.answers import answer
from agents.answers.answer import complete_call
from agents.requests import record, wording
from agents.requests.errors import ArgumentsRefused
from agents.requests.signals import request_decided

__all__ = [
    # Recorded (a gateway call's approval: record.arecord_gateway_approval),
    # worded, answered (the one answer path), and decided (the signal).
    "record",
    "wording",
    "answer",
    "complete_call",
    "request_decided",
    "ArgumentsRefused",
    # What a long-running tool's payload and its answer carry.
    "ANSWER_ARGUMENTS",
    "ANSWER_EDITED_BY",
    "ANSWER_RESPONSE",
    "PAYLOAD_APPROVALS",
    "PAYLOAD_APPROVER_GROUP",
    "PAYLOAD_CATALOG_TOOL",
    "PAYLOAD_DESCRIPTION",
    "PAYLOAD_SELF_APPROVAL",
    "PAYLOAD_TIMEOUT",
    "answered_by",
    "approval_rule",
    "ask_node_approval",
    "approvals_required",
    "first_line",
    "requester_may_approve",
    "tool_description",
]
