"""Per-session toolset activation (issue 7): a default on each toolset, and each
session's own choice (toolsets.activation)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0001_initial"),
        ("toolsets", "0003_imports"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="toolset",
            name="active_by_default",
            field=models.BooleanField(
                default=True,
                help_text="Active in a new session; each session may switch it on or off.",
            ),
        ),
        migrations.CreateModel(
            name="SessionToolset",
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
                ("active", models.BooleanField()),
                ("changed_at", models.DateTimeField()),
                (
                    "changed_by",
                    models.ForeignKey(
                        blank=True,
                        help_text="Blank: the model switched it.",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="toolset_choices",
                        to="agents.session",
                    ),
                ),
                (
                    "toolset",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="session_choices",
                        to="toolsets.toolset",
                    ),
                ),
            ],
            options={
                "ordering": ["session", "toolset"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("session", "toolset"), name="session_toolset_unique"
                    )
                ],
            },
        ),
    ]
