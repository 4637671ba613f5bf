"""Tools marked as needing approval in the catalog (issue 6).

Schema filled in by the change that owns it (see the docstring); kept in this chain
so parallel work on the toolsets app never makes two leaf migrations."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("toolsets", "0005_policies"),
    ]

    operations = [
        migrations.AddField(
            model_name="tool",
            name="requires_approval",
            field=models.BooleanField(
                default=False, help_text="Every call waits for a person's approval."
            ),
        ),
        migrations.AddField(
            model_name="tool",
            name="approver_group",
            field=models.ForeignKey(
                blank=True,
                help_text="Who approves (never the requester); blank: the session owner.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="auth.group",
            ),
        ),
        migrations.AddField(
            model_name="tool",
            name="approval_timeout",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Seconds before an undecided approval is rejected; blank: never.",
                null=True,
            ),
        ),
    ]
