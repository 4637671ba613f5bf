"""A held call's decision, in the audit: its row reads what a person decided.

A call held for approval leaves one audit row, `awaiting_approval` (plugin.py).
When its request is decided (agents.requests.signals.request_decided), that row
becomes the decision: `approved` or `rejected` with who decided and when, or
`expired` (nobody decided in time, or the session went first) with when; an
approval with changed arguments keeps them beside the asked ones (`args`), and
who changed them; a rejection answered with a text in the tool's place keeps it
as the row's summary of what the caller received. An
approved call that ADK runs again gets a row of its own, with how that run ended;
a rejected or expired one never runs, and its held row says so.
"""

from datetime import datetime
from typing import Any

from agents.models import Request
from agents.pauses import request_decided
from toolsets.call_totals import recount
from toolsets.models import ToolCall

# A held row's summary when a person answered in the tool's place.
RESPONDED = "Not run: answered by a person instead: "
SUMMARY_CHARS = 1000

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
    **decided: Any,
) -> int:
    """Mark the held call's audit row with its decision, moving it between the
    Overview's totals; how many rows were held.

    `decided`: what else the decision says (approved_args, args_edited_by_id,
    result_summary), for the row's fields of those names."""
    held = ToolCall.objects.filter(
        session_id=session_id,
        call_id=call_id,
        status=ToolCall.Status.AWAITING_APPROVAL,
    )
    return recount(
        held,
        status=status,
        decided_by_id=decided_by_id,
        decided_at=decided_at,
        **decided,
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
        **_beyond_yes_or_no(request),
    )


def _beyond_yes_or_no(request: Request) -> dict[str, Any]:
    """The changed arguments and who changed them, or the text answered in the
    tool's place (as the summary of what the caller received)."""
    decided: dict[str, Any] = {}
    if request.approved_args is not None:
        decided["approved_args"] = request.approved_args
        decided["args_edited_by_id"] = request.args_edited_by_id
    stored = request.response if isinstance(request.response, dict) else {}
    text = stored.get("response")
    if request.status == Request.Status.REJECTED and isinstance(text, str):
        decided["result_summary"] = (RESPONDED + text)[:SUMMARY_CHARS]
    return decided


def connect() -> None:
    """Connect the receiver (from ToolsetsConfig.ready)."""
    request_decided.connect(_on_request_decided, dispatch_uid="audit-decisions")
