"""Per-tool execution policies set by admins (issue 7).

`Tool.policy` holds an admin's override of the policy the tool's code declares;
`ToolCall` records how a call ended under it (new statuses) and how many times the
tool ran (`attempts`)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("toolsets", "0004_activation")]

    operations = [
        migrations.AddField(
            model_name="tool",
            name="policy",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Admin override of the execution policy (toolsets.policies), "
                'e.g. {"timeout": 5, "retries": 2}; keys left out keep the default.',
            ),
        ),
        migrations.AddField(
            model_name="toolcall",
            name="attempts",
            field=models.PositiveSmallIntegerField(
                default=1,
                help_text="Times the tool ran: 0 if refused or cached, >1 retried.",
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
                ],
                max_length=16,
            ),
        ),
    ]
