"""The event inspector's governance half: the audit rows of the tool calls an event
carries, with the decision, the rule that made it, the check that refused, the
policy's outcome, attempts and timings (GET /api/sessions/{id}/events/{seq}/inspect/).

The runtime's half (the event, its ids, its model step) is agents.events.inspector;
this module adds what only governance knows, since the runtime never reads toolsets.
"""

from collections.abc import Sequence
from typing import Any

from agents.models import Session
from agents.runtime import redact_secrets
from agents.timeline import inspect_event
from toolsets.governance.checks import CHECKS
from toolsets.models import ToolCall

ALLOWED = "allowed"
Status = ToolCall.Status

# The check whose refusal (or answer) each audit status is: the first of CHECKS
# with that status; a held call's decision is the approval gate's.
_CHECK_OF = {str(c.status): type(c).__name__ for c in reversed(CHECKS)}
for _held in (Status.APPROVED, Status.REJECTED, Status.EXPIRED):
    _CHECK_OF[str(_held)] = _CHECK_OF[str(Status.AWAITING_APPROVAL)]
# Statuses of a call governance (or a person, or the agent's own callback) did
# not let run as asked; any other status was allowed.
REFUSALS = frozenset(
    {
        Status.DENIED,
        Status.INACTIVE,
        Status.NOT_OFFERED,
        Status.GATED,
        Status.INVALID_ARGS,
        Status.RATE_LIMITED,
        Status.AWAITING_APPROVAL,
        Status.REJECTED,
        Status.EXPIRED,
        Status.REFUSED,
    }
)


def inspect(*, session: Session, seq: int) -> dict[str, Any]:
    """What the inspector shows of event `seq` of a session its reader may see."""
    found = inspect_event(session=session, seq=seq)
    return {
        "event": found.frame,
        "ids": found.ids(),
        "model_step": found.model_step,
        "tool_calls": tool_calls(session_id=session.pk, call_ids=found.call_ids),
    }


def tool_calls(*, session_id: str, call_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The audit rows of these calls of a session, oldest first, in one query."""
    if not call_ids:
        return []
    rows = ToolCall.objects.filter(session_id=session_id, call_id__in=call_ids)
    rows = rows.select_related("decided_by").order_by("started_at", "pk")
    return [call_out(row) for row in rows]


def call_out(row: ToolCall) -> dict[str, Any]:
    """One audit row as the inspector shows it, its arguments redacted."""
    return {
        "call_id": row.call_id,
        "tool": row.tool_full_name or row.tool_name,
        "status": row.status,
        "decision": row.status if row.status in REFUSALS else ALLOWED,
        "rule": row.access_rule,
        "check": _CHECK_OF.get(row.status, ""),
        "attempts": row.attempts,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "duration_ms": row.duration_ms,
        "decided_by": row.decided_by.get_username() if row.decided_by else None,
        "args": redact_secrets(row.args),
        "result_summary": row.result_summary,
        "raw_result_summary": row.raw_result_summary,
    }
