"""Per-user encrypted credentials and auth requests (issue 6).

Schema filled in by the change that owns it (see the docstring); kept in this chain
so parallel work on the toolsets app never makes two leaf migrations."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0003_budget"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Credential",
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
                    "key",
                    models.CharField(
                        help_text="The AuthConfig's credential_key.", max_length=255
                    ),
                ),
                (
                    "auth_type",
                    models.CharField(
                        help_text="apiKey, http, oauth2, ...", max_length=32
                    ),
                ),
                ("scheme", models.CharField(blank=True, max_length=32)),
                ("agent", models.CharField(blank=True, max_length=128)),
                ("tool_name", models.CharField(blank=True, max_length=255)),
                ("sealed", models.TextField(editable=False)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="tool_credentials",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-updated_at"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("owner", "key"), name="credential_unique_key_per_owner"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="CredentialRequest",
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
                ("call_id", models.CharField(max_length=128)),
                ("tool_call_id", models.CharField(blank=True, max_length=128)),
                ("tool_name", models.CharField(blank=True, max_length=255)),
                ("agent", models.CharField(blank=True, max_length=128)),
                ("invocation_id", models.CharField(blank=True, max_length=128)),
                ("credential_key", models.CharField(max_length=255)),
                (
                    "scheme",
                    models.CharField(
                        blank=True,
                        help_text="apiKey, http, oauth2, openIdConnect.",
                        max_length=32,
                    ),
                ),
                ("auth_config", models.JSONField(blank=True, default=dict)),
                (
                    "status",
                    models.CharField(
                        choices=[("pending", "Pending"), ("answered", "Answered")],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
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
                        related_name="credential_requests",
                        to="agents.session",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("session", "call_id"),
                        name="credential_request_unique_id",
                    )
                ],
            },
        ),
    ]
