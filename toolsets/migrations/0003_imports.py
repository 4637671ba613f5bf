"""Stored MCP / OpenAPI import registrations (issue 8): ToolImport."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0002_approval"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ToolImport",
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
                ("name", models.CharField(max_length=63, unique=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[("mcp", "MCP server"), ("openapi", "OpenAPI spec")],
                        max_length=16,
                    ),
                ),
                (
                    "registration",
                    models.JSONField(
                        help_text=(
                            "The registration's fields; may hold secrets (env, headers)."
                        )
                    ),
                ),
                (
                    "document",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text=(
                            "An OpenAPI import's spec as last read; "
                            "agents are built from it."
                        ),
                    ),
                ),
                (
                    "enabled",
                    models.BooleanField(
                        default=True,
                        help_text="Off: never connected nor offered; tools kept.",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("last_refreshed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "last_error",
                    models.TextField(
                        blank=True,
                        help_text="Why the last connection or refresh failed; blank: ok.",
                    ),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "toolset",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="stored_import",
                        to="toolsets.toolset",
                    ),
                ),
            ],
            options={"ordering": ["name"]},
        ),
    ]
