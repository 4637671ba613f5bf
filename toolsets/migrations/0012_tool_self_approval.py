"""Whether a requester may approve her own calls of a tool: issue 16."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0011_audit_decisions"),
    ]

    operations = [
        migrations.AddField(
            model_name="tool",
            name="requester_may_approve",
            field=models.BooleanField(
                default=False,
                help_text="The requester may decide her own calls (even with an "
                'approver group), and "always allow" the tool for the rest of her '
                "session.",
            ),
        ),
    ]
