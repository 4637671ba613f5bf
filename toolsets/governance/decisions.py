"""A held call's decision, in the audit: its row reads what a person decided.

A call held for approval leaves one audit row, `awaiting_approval` (plugin.py).
When its request is decided (agents.requests.signals.request_decided), that row
becomes the decision: `approved` or `rejected` with who decided and when, or
`expired` (nobody decided in time, or the session went first) with when. An
approved call that ADK runs again gets a row of its own, with how that run ended;
a rejected or expired one never runs, and its held row says so.
"""

from datetime import datetime

from agents.models import Request
from agents.requests.signals import request_decided
from toolsets.call_totals import recount
from toolsets.models import ToolCall

# A decided approval's status, as the audit reads it.
DECIDED = {
    Request.Status.APPROVED: ToolCall.Status.APPROVED,
    Request.Status.REJECTED: ToolCall.Status.REJECTED,
    Request.Status.EXPIRED: ToolCall.Status.EXPIRED,
}


def record_decision(
    *,
    session_id: str,
    call_id: str,
    status: str,
    decided_by_id: int | None,
    decided_at: datetime | None,
) -> int:
    """Mark the held call's audit row with its decision, moving it between the
    Overview's totals; how many rows were held."""
    held = ToolCall.objects.filter(
        session_id=session_id,
        call_id=call_id,
        status=ToolCall.Status.AWAITING_APPROVAL,
    )
    return recount(
        held, status=status, decided_by_id=decided_by_id, decided_at=decided_at
    )


def _on_request_decided(sender, request: Request, **kwargs) -> None:
    status = DECIDED.get(request.status)
    if request.kind != Request.Kind.APPROVAL or status is None:
        return
    record_decision(
        # A gateway call's row, like every direct call's, names no session.
        session_id=request.session_id or "",
        call_id=request.tool_call_id,
        status=status,
        decided_by_id=request.answered_by_id,
        decided_at=request.answered_at,
    )


def connect() -> None:
    """Connect the receiver (from ToolsetsConfig.ready)."""
    request_decided.connect(_on_request_decided, dispatch_uid="audit-decisions")
