"""One Request model for every pause for a person (issue 15).

Creates agents.Request, copies every LongRunningCall (kind "call") and
CredentialRequest (kind "credential") into it, then deletes those two models.
toolsets' 0009_requests copies the approvals. The copies keep each row's
creation time; the ids are the Request's own.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

BATCH = 500


def calls_and_credentials_to_requests(apps, schema_editor):
    Request = apps.get_model("agents", "Request")
    calls = apps.get_model("agents", "LongRunningCall").objects.order_by("pk")
    asked = apps.get_model("agents", "CredentialRequest").objects.order_by("pk")
    rows = [_from_call(Request, call) for call in calls.iterator()]
    rows += [_from_credential_request(Request, row) for row in asked.iterator()]
    bulk_create_as_created(Request, rows)


def requests_to_calls_and_credentials(apps, schema_editor):
    Request = apps.get_model("agents", "Request")
    LongRunningCall = apps.get_model("agents", "LongRunningCall")
    CredentialRequest = apps.get_model("agents", "CredentialRequest")
    found = Request.objects.order_by("pk")
    bulk_create_as_created(
        LongRunningCall,
        [_to_call(LongRunningCall, row) for row in found.filter(kind="call")],
    )
    bulk_create_as_created(
        CredentialRequest,
        [
            _to_credential_request(CredentialRequest, row)
            for row in found.filter(kind="credential")
        ],
    )


def bulk_create_as_created(model, rows) -> None:
    """bulk_create that keeps each row's `created_at` (auto_now_add would reset it)."""
    field = model._meta.get_field("created_at")
    field.auto_now_add = False
    try:
        model.objects.bulk_create(rows, batch_size=BATCH)
    finally:
        field.auto_now_add = True


def _from_call(Request, call):
    return Request(
        kind="call",
        status=call.status,
        session_id=call.session_id,
        run_id=call.run_id,
        call_id=call.call_id,
        tool_call_id=call.call_id,
        tool_name=call.name,
        args=call.args,
        agent=call.agent,
        invocation_id=call.invocation_id,
        answer_group=call.answered_by_group,
        answered_by_id=call.answered_by_id,
        answered_at=call.answered_at,
        answer_run_id=call.answer_run_id,
        response=call.response,
        created_at=call.created_at,
    )


def _from_credential_request(Request, row):
    return Request(
        kind="credential",
        status=row.status,
        session_id=row.session_id,
        run_id=row.run_id,
        call_id=row.call_id,
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        agent=row.agent,
        invocation_id=row.invocation_id,
        answered_at=row.answered_at,
        answer_run_id=row.answer_run_id,
        credential_key=row.credential_key,
        scheme=row.scheme,
        auth_config=row.auth_config,
        created_at=row.created_at,
    )


def _to_call(LongRunningCall, row):
    return LongRunningCall(
        session_id=row.session_id,
        run_id=row.run_id,
        call_id=row.call_id,
        name=row.tool_name,
        args=row.args,
        agent=row.agent,
        invocation_id=row.invocation_id,
        answered_by_group=row.answer_group,
        status=row.status,
        response=row.response,
        answered_by_id=row.answered_by_id,
        answer_run_id=row.answer_run_id,
        created_at=row.created_at,
        answered_at=row.answered_at,
    )


def _to_credential_request(CredentialRequest, row):
    return CredentialRequest(
        session_id=row.session_id,
        run_id=row.run_id,
        call_id=row.call_id,
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        agent=row.agent,
        invocation_id=row.invocation_id,
        credential_key=row.credential_key,
        scheme=row.scheme,
        auth_config=row.auth_config,
        status=row.status,
        answer_run_id=row.answer_run_id,
        created_at=row.created_at,
        answered_at=row.answered_at,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0006_session_scoping"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Request",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True,
                        primary_key=True,
                        serialize=False,
                        verbose_name="ID",
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("call", "Call"),
                            ("approval", "Approval"),
                            ("credential", "Credential"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("answered", "Answered"),
                            ("approved", "Approved"),
                            ("rejected", "Rejected"),
                            ("expired", "Expired"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                (
                    "call_id",
                    models.CharField(
                        help_text="The id of the function call that pauses.",
                        max_length=128,
                    ),
                ),
                (
                    "tool_call_id",
                    models.CharField(
                        blank=True,
                        help_text="The id of the tool's own call.",
                        max_length=128,
                    ),
                ),
                ("tool_name", models.CharField(blank=True, max_length=255)),
                ("args", models.JSONField(blank=True, default=dict)),
                ("agent", models.CharField(blank=True, max_length=128)),
                ("invocation_id", models.CharField(blank=True, max_length=128)),
                ("hint", models.TextField(blank=True)),
                (
                    "answer_group",
                    models.CharField(
                        blank=True,
                        help_text="Who answers besides the owner: blank, the owner (or staff).",
                        max_length=150,
                    ),
                ),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
                (
                    "expires_at",
                    models.DateTimeField(
                        blank=True,
                        help_text="Answered as expired after this; blank: never.",
                        null=True,
                    ),
                ),
                (
                    "response",
                    models.JSONField(
                        blank=True,
                        help_text="A call's posted result; never a secret.",
                        null=True,
                    ),
                ),
                ("credential_key", models.CharField(blank=True, max_length=255)),
                (
                    "scheme",
                    models.CharField(
                        blank=True,
                        help_text="apiKey, http, oauth2, openIdConnect.",
                        max_length=32,
                    ),
                ),
                (
                    "auth_config",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="The AuthConfig asked, secrets blanked.",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "answer_run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="agents.run",
                    ),
                ),
                (
                    "answered_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="agents.run",
                    ),
                ),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="requests",
                        to="agents.session",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
                "indexes": [
                    models.Index(
                        fields=["kind", "status", "answer_group"],
                        name="agents_requ_kind_f9b424_idx",
                    ),
                    models.Index(
                        fields=["status", "expires_at"],
                        name="agents_requ_status_6e18af_idx",
                    ),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("session", "call_id"), name="request_unique_call"
                    )
                ],
            },
        ),
        migrations.RunPython(
            calls_and_credentials_to_requests, requests_to_calls_and_credentials
        ),
        migrations.DeleteModel(name="CredentialRequest"),
        migrations.DeleteModel(name="LongRunningCall"),
    ]
