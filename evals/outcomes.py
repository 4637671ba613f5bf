"""The governance outcomes a session's turns met, as a case's expectations.

Read from governance's audit (toolsets.models.ToolCall, one row per call, by the
call's id) and the event log (a turn stopped by a budget: its `error` event with
code BUDGET_EXCEEDED), so a case made from a session asserts what governance did
then: a grant change that lets the call through fails the case.
"""

from collections.abc import Sequence
from typing import Any

from agents.models import Event, Session
from toolsets.models import ToolCall

HELD = {
    ToolCall.Status.AWAITING_APPROVAL,
    ToolCall.Status.APPROVED,
    ToolCall.Status.REJECTED,
    ToolCall.Status.EXPIRED,
}
OUTSIDE_CONDITION = "outside the condition"
BUDGET_CODE = "BUDGET_EXCEEDED"


def expectations_met(
    *, session: Session, conversation: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """An expectation per governed call of `conversation` (ADK Invocations as
    stored) that governance denied, refused by a condition or held for approval,
    and one per turn a budget stopped; in the conversation's order."""
    calls = {
        call["id"]: index
        for index, invocation in enumerate(conversation)
        for call in _tool_uses(invocation)
        if call.get("id")
    }
    rows = ToolCall.objects.filter(session_id=session.pk, call_id__in=list(calls))
    found = []
    for row in rows.order_by("started_at", "id"):
        kind = _kind(row)
        if kind:
            found.append(
                {"kind": kind, "tool": row.tool_name, "invocation": calls[row.call_id]}
            )
    found += _budget_stops(session=session, conversation=conversation)
    return sorted(found, key=lambda item: item["invocation"])


def _tool_uses(invocation: dict[str, Any]) -> list[dict[str, Any]]:
    return (invocation.get("intermediate_data") or {}).get("tool_uses") or []


def _kind(row: ToolCall) -> str:
    if row.status in HELD:
        return "held_for_approval"
    if row.status != ToolCall.Status.DENIED:
        return ""
    if OUTSIDE_CONDITION in row.access_rule:
        return "refused_by_condition"
    return "denied"


def _budget_stops(
    *, session: Session, conversation: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    turns = {
        invocation.get("invocation_id"): index
        for index, invocation in enumerate(conversation)
    }
    errors = Event.objects.filter(
        session=session, kind="error", invocation_id__in=[t for t in turns if t]
    )
    return [
        {"kind": "budget_stops", "invocation": turns[invocation_id]}
        for invocation_id, data in errors.values_list("invocation_id", "data")
        if ((data or {}).get("error") or {}).get("code") == BUDGET_CODE
    ]
