"""A decision's comment, what a person reads of a request, and standing approvals
("always allow for me" in a session): issue 16."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0008_run_waiting"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="request",
            name="comment",
            field=models.TextField(blank=True, help_text="The decider's comment."),
        ),
        migrations.AddField(
            model_name="request",
            name="description",
            field=models.TextField(
                blank=True,
                help_text="What the tool does, first line of its description.",
            ),
        ),
        migrations.AddField(
            model_name="request",
            name="self_approval",
            field=models.BooleanField(
                default=False,
                help_text="The catalog lets the requester decide it herself, and "
                "allow the tool for the rest of the session.",
            ),
        ),
        migrations.CreateModel(
            name="StandingApproval",
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
                ("tool_name", models.CharField(max_length=255)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "granted_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="standing_approvals",
                        to="agents.session",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("session", "tool_name"),
                        name="standing_approval_unique_tool",
                    )
                ],
            },
        ),
    ]
