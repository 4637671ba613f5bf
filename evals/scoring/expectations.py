"""Governance outcomes a case asserts, checked against the audit of its session:
policy regression tests, so a grant change is tested like code.

An expectation is {"kind": ..., "tool": name?}; with no tool, any call will do.

- `denied`: a call audited `denied` (no grant lets it run, or outside its
  condition);
- `held_for_approval`: a call held for a person (the eval never approves it: the
  case ends there);
- `refused_by_condition`: a call refused, or held, because its arguments are
  outside the condition of the grant that allowed the tool;
- `budget_stops`: a budget stopped a turn of the case.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from agents.models import Run
from toolsets.models import ToolCall

KINDS = ("denied", "held_for_approval", "refused_by_condition", "budget_stops")
HELD = (
    ToolCall.Status.AWAITING_APPROVAL,
    ToolCall.Status.APPROVED,
    ToolCall.Status.REJECTED,
    ToolCall.Status.EXPIRED,
)
OUTSIDE_CONDITION = "outside the condition"


def malformed(expectation: Any) -> str | None:
    """Why an expectation cannot be checked, or None."""
    if not isinstance(expectation, Mapping) or expectation.get("kind") not in KINDS:
        return (
            f"unknown expectation {expectation!r}: a kind is one of {', '.join(KINDS)}"
        )
    tool = expectation.get("tool")
    if tool is not None and not isinstance(tool, str):
        return f"expectation {expectation!r}: tool is a tool's name"
    return None


def check(
    expectations: Iterable[Mapping[str, Any]], *, session_id: str
) -> list[dict[str, Any]]:
    """Each expectation with `met` and what the audit holds of its tool."""
    calls = list(
        ToolCall.objects.filter(session_id=session_id)
        .order_by("started_at", "id")
        .values("tool_name", "status", "access_rule")
    )
    stopped = _budget_stopped(session_id)
    return [
        {**expectation, **_met(expectation, calls, stopped)}
        for expectation in expectations
    ]


def _met(expectation: Mapping[str, Any], calls: list[dict], stopped: bool) -> dict:
    kind, tool = expectation["kind"], expectation.get("tool")
    if kind == "budget_stops":
        return {"met": stopped, "seen": ["budget stopped a turn"] if stopped else []}
    mine = [c for c in calls if tool is None or c["tool_name"] == tool]
    seen = [c["status"] for c in mine]
    if kind == "denied":
        met = any(c["status"] == ToolCall.Status.DENIED for c in mine)
    elif kind == "held_for_approval":
        met = any(c["status"] in HELD for c in mine)
    else:  # refused_by_condition
        met = any(
            c["status"] in (ToolCall.Status.DENIED, *HELD)
            and OUTSIDE_CONDITION in (c["access_rule"] or "")
            for c in mine
        )
    return {"met": met, "seen": seen}


def _budget_stopped(session_id: str) -> bool:
    errors = Run.objects.filter(session_id=session_id).values_list("error", flat=True)
    return any("budget" in (error or "").lower() for error in errors)
