# Issue 20: per-run traces (RunSpan) and a run's model, model and tool call counts.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0017_agent_history"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="model",
            field=models.CharField(
                blank=True,
                help_text="The root agent's model name, as resolved for the turn.",
                max_length=200,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="model_calls",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="run",
            name="tool_calls",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.CreateModel(
            name="RunSpan",
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
                ("span_id", models.CharField(max_length=16)),
                ("parent_id", models.CharField(blank=True, max_length=16)),
                ("name", models.CharField(max_length=200)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("turn", "Turn"),
                            ("agent", "Agent"),
                            ("model", "Model"),
                            ("tool", "Tool"),
                            ("governance", "Governance"),
                            ("execute", "Execute"),
                            ("store", "Store"),
                            ("publish", "Publish"),
                            ("wait", "Wait"),
                            ("other", "Other"),
                        ],
                        default="other",
                        max_length=16,
                    ),
                ),
                ("start", models.DateTimeField()),
                ("duration_ms", models.FloatField()),
                (
                    "status",
                    models.CharField(
                        choices=[("ok", "Ok"), ("error", "Error")],
                        default="ok",
                        max_length=8,
                    ),
                ),
                (
                    "attributes",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="The span's attributes, redacted by agents.redaction's rule.",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="spans",
                        to="agents.run",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["run", "start"], name="agents_runs_run_id_d0bbf4_idx"
                    )
                ],
            },
        ),
    ]
