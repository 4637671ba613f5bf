"""Who decided a held call, and when, in the audit (issue 16).

`decided_by` named the access rule that let a call through: it is `access_rule`
now, and `decided_by` is the person who approved or rejected a held call, with
`decided_at`. A held call's row reads its decision (`approved`, `rejected`,
`expired`) once made; rows held before this migration take the decision their
request (agents.Request) recorded.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

DECIDED = ("approved", "rejected", "expired")


def decisions_from_requests(apps, schema_editor):
    ToolCall = apps.get_model("toolsets", "ToolCall")
    Request = apps.get_model("agents", "Request")
    held = ToolCall.objects.filter(status="awaiting_approval").exclude(call_id="")
    for row in held.iterator():
        request = (
            Request.objects.filter(
                kind="approval",
                session_id=row.session_id,
                tool_call_id=row.call_id,
                status__in=DECIDED,
            )
            .values("status", "answered_by_id", "answered_at")
            .first()
        )
        if request is None:
            continue
        ToolCall.objects.filter(pk=row.pk).update(
            status=request["status"],
            decided_by_id=request["answered_by_id"],
            decided_at=request["answered_at"],
        )


def decisions_to_held(apps, schema_editor):
    ToolCall = apps.get_model("toolsets", "ToolCall")
    ToolCall.objects.filter(status__in=DECIDED).exclude(decided_at=None).update(
        status="awaiting_approval"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0010_audit_statuses"),
        ("agents", "0007_requests"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField(
            model_name="toolcall", old_name="decided_by", new_name="access_rule"
        ),
        migrations.AlterField(
            model_name="toolcall",
            name="access_rule",
            field=models.TextField(
                blank=True, help_text="The access rule that allowed or denied the call."
            ),
        ),
        migrations.AddField(
            model_name="toolcall",
            name="decided_by",
            field=models.ForeignKey(
                blank=True,
                help_text="Who approved or rejected a held call; blank if nobody "
                "(expired).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="decided_tool_calls",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="toolcall",
            name="decided_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When a held call was decided, or expired.",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="toolcall",
            name="status",
            field=models.CharField(
                choices=[
                    ("ok", "Ok"),
                    ("error", "Error"),
                    ("denied", "Denied"),
                    ("timeout", "Timeout"),
                    ("invalid_args", "Invalid Args"),
                    ("rate_limited", "Rate Limited"),
                    ("cached", "Cached"),
                    ("gated", "Gated"),
                    ("busy", "Busy"),
                    ("inactive", "Inactive"),
                    ("not_offered", "Not Offered"),
                    ("awaiting_approval", "Awaiting Approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("expired", "Expired"),
                    ("refused", "Refused"),
                ],
                max_length=32,
            ),
        ),
        migrations.RunPython(decisions_from_requests, decisions_to_held),
    ]
