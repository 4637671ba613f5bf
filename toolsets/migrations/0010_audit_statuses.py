"""The audit's status per governance check (issue 15).

Each check of governance that refuses a call audits it with a status of its own,
never `error`: `not_offered` (availability: not offered at that step),
`awaiting_approval` and `rejected` (the approval gate), `refused` (the agent's own
before_tool_callback). `awaiting_approval` needs a longer column.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0009_requests"),
    ]

    operations = [
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
                    ("rejected", "Rejected"),
                    ("refused", "Refused"),
                ],
                max_length=32,
            ),
        ),
    ]
