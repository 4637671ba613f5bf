"""Approvals move to agents' one Request model (issue 15).

Copies every toolsets.Approval into agents.Request (kind "approval") and deletes
Approval. A run id that names no Run any more is left out rather than refused by
the foreign key the Request has and the Approval had not.
"""

from django.db import migrations

BATCH = 500


def approvals_to_requests(apps, schema_editor):
    Request = apps.get_model("agents", "Request")
    approvals = list(apps.get_model("toolsets", "Approval").objects.order_by("pk"))
    named = {row.run_id for row in approvals} | {row.answer_run_id for row in approvals}
    runs = _existing(apps.get_model("agents", "Run"), named - {None})
    rows = [_from_approval(Request, row, runs) for row in approvals]
    _bulk_create_as_created(Request, rows)


def requests_to_approvals(apps, schema_editor):
    Request = apps.get_model("agents", "Request")
    Approval = apps.get_model("toolsets", "Approval")
    found = Request.objects.filter(kind="approval", session__owner__isnull=False)
    rows = [_to_approval(Approval, row) for row in found.select_related("session")]
    _bulk_create_as_created(Approval, rows)
    Request.objects.filter(kind="approval").delete()


def _existing(Run, ids) -> set:
    """Which of these run ids name a Run (asked in batches of BATCH ids)."""
    ids = list(ids)
    found = set()
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        found |= set(Run.objects.filter(pk__in=batch).values_list("pk", flat=True))
    return found


def _bulk_create_as_created(model, rows) -> None:
    """bulk_create that keeps each row's `created_at` (auto_now_add would reset it)."""
    field = model._meta.get_field("created_at")
    field.auto_now_add = False
    try:
        model.objects.bulk_create(rows, batch_size=BATCH)
    finally:
        field.auto_now_add = True


def _from_approval(Request, row, runs):
    return Request(
        kind="approval",
        status=row.status,
        session_id=row.session_id,
        run_id=row.run_id if row.run_id in runs else None,
        call_id=row.call_id,
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        args=row.args,
        agent=row.agent,
        invocation_id=row.invocation_id,
        hint=row.hint,
        answer_group=row.approver_group,
        answered_by_id=row.decided_by_id,
        answered_at=row.decided_at,
        answer_run_id=row.answer_run_id if row.answer_run_id in runs else None,
        expires_at=row.expires_at,
        created_at=row.created_at,
    )


def _to_approval(Approval, row):
    return Approval(
        session_id=row.session_id,
        owner_id=row.session.owner_id,
        run_id=row.run_id,
        invocation_id=row.invocation_id,
        agent=row.agent,
        call_id=row.call_id,
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        args=row.args,
        hint=row.hint,
        approver_group=row.answer_group,
        status=row.status,
        decided_by_id=row.answered_by_id,
        decided_at=row.answered_at,
        answer_run_id=row.answer_run_id,
        expires_at=row.expires_at,
        created_at=row.created_at,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0008_risky_granted_only"),
        ("agents", "0007_requests"),
    ]

    operations = [
        migrations.RunPython(approvals_to_requests, requests_to_approvals),
        migrations.DeleteModel(name="Approval"),
    ]
