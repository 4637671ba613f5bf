"""A governed call's audit record: its row, written in one INSERT and counted in the
Overview's totals in the same transaction, and its result summarized for it.

GovernancePlugin (plugin.py) writes one row per call through `record_call`, and
brings it up to what the model received (`record_received`) when a later callback
changed the result. Arguments and results are redacted by agents/redaction.py.
"""

import json
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import OuterRef, Subquery
from google.adk.sessions import Session as AdkSession

from agents.models import Run
from agents.runtime import mask_turn_secrets, redact_secrets, session_rows
from project import metrics
from project.patches.rows import Insert
from toolsets.call_totals import count_call
from toolsets.models import Tool, ToolCall
from toolsets.turn import Audited

SUMMARY_CHARS = 1000


def summarize(result: Any) -> str:
    """The result as short JSON, for the audit: secret fields redacted at any
    depth (in a JSON text too), and the running turn's secret values masked."""
    redacted = redact_secrets(result)
    if isinstance(redacted, str):
        text = redacted
    else:
        text = json.dumps(redacted, default=str, ensure_ascii=False)
    text = mask_turn_secrets(text)
    if len(text) > SUMMARY_CHARS:
        return text[: SUMMARY_CHARS - 1] + "…"
    return text


def as_received(result: Any) -> Any:
    # ADK hands the model a result that is not a dict as {"result": ...}.
    return result if isinstance(result, dict) else {"result": result}


@sync_to_async
def record_received(
    *,
    audited: Audited | None,
    call_id: str | None,
    started_at: datetime,
    summary: str,
    raw_summary: str,
) -> None:
    """Bring a call's row to what the model received, the tool's result beside."""
    if audited is None or not call_id:
        return
    # An approved call's run shares its held row's call id: told apart by start.
    ToolCall.objects.filter(
        session_id=audited.session_id, call_id=call_id, started_at=started_at
    ).update(result_summary=summary, raw_result_summary=raw_summary)


@sync_to_async
def held_decision(
    session_id: str, call_id: str | None
) -> tuple[int | None, datetime | None]:
    """Who approved a held call and when, from its held row: the row of the call ADK
    runs once approved says it too, so the audit's Decided column shows it."""
    if not call_id:
        return None, None
    held = ToolCall.objects.filter(
        session_id=session_id, call_id=call_id, status=ToolCall.Status.APPROVED
    )
    found = held.values_list("decided_by_id", "decided_at").first()
    return found if found is not None else (None, None)


@sync_to_async
def audited_of(session: AdkSession) -> Audited:
    """The row of an ADK session (scoped by app and user, as ADK scopes its ids)
    and its running Run, in one query; a session not stored keeps its ADK id."""
    runs = Run.objects.filter(session=OuterRef("pk"), status=Run.Status.RUNNING)
    running = Subquery(runs.order_by("-started_at").values("pk")[:1])
    found = session_rows(session).annotate(run=running).values_list("pk", "run")
    row = found.first()
    if row is None:
        return Audited(session_id=session.id, run_id=None)
    return Audited(session_id=row[0], run_id=row[1])


# The audit row's columns; its Tool is looked up by name within the INSERT itself.
AUDIT_ROW = Insert(
    ToolCall,
    [
        "user",
        "session_id",
        "run_id",
        "invocation_id",
        "agent",
        "adk_agent",
        "call_id",
        "tool_name",
        "tool_full_name",
        "tool",
        "args",
        "asked_args",
        "args_edited_by",
        "decided_by",
        "decided_at",
        "result_summary",
        "raw_result_summary",
        "status",
        "access_rule",
        "started_at",
        "finished_at",
        "duration_ms",
        "attempts",
    ],
    expressions={
        "tool": f"(SELECT id FROM {Tool._meta.db_table} WHERE full_name = %s LIMIT 1)"
    },
)


@sync_to_async
def record_call(*, tool_full_name: str, **fields: Any) -> None:
    """Insert the audit row (project.patches.rows: no model instance, no ORM compiler)
    and count it in the Overview's totals, in one transaction; its Tool is the
    catalog's tool of that full name, if there is one."""
    # An unedited call (no approver changed its arguments) names neither field.
    row = {
        "asked_args": None,
        "args_edited_by": None,
        "decided_by": None,
        "decided_at": None,
        **fields,
        "user": fields["user_id"],
        "tool_full_name": tool_full_name,
    }
    row["tool"] = tool_full_name or None  # AUDIT_ROW's expression finds it by name
    with transaction.atomic():
        AUDIT_ROW.rows([AUDIT_ROW.values_of(row)])
        count_call(
            user_id=fields["user_id"],
            agent=fields["agent"],
            tool_full_name=tool_full_name,
            tool_name=fields["tool_name"],
            status=fields["status"],
            started_at=fields["started_at"],
            duration_ms=fields["duration_ms"],
        )
    metrics.observe_tool_call(
        tool=tool_full_name or fields["tool_name"],
        outcome=fields["status"],
        seconds=fields["duration_ms"] / 1000,
    )
