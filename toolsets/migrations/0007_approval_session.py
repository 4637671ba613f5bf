"""Approvals belong to their session: a foreign key, deleted with it (hardening).

`Approval.session_id` was a bare string, so a deleted session left its approvals
behind, and an expiring one failed every listing of approvals. The approvals of
sessions already gone are deleted first (nobody could ever answer them), then the
column becomes a foreign key under the same name, `session_id`.
"""

import django.db.models.deletion
from django.db import migrations, models


def delete_orphans(apps, schema_editor) -> None:
    Approval = apps.get_model("toolsets", "Approval")
    Session = apps.get_model("agents", "Session")
    sessions = Session.objects.values("pk")
    Approval.objects.exclude(session_id__in=sessions).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0001_initial"),
        ("toolsets", "0006_approval_catalog"),
    ]

    operations = [
        migrations.RunPython(delete_orphans, migrations.RunPython.noop),
        migrations.RemoveConstraint(model_name="approval", name="approval_unique_call"),
        # Renamed first so the foreign key below keeps the column `session_id`.
        migrations.RenameField(
            model_name="approval", old_name="session_id", new_name="session"
        ),
        migrations.AlterField(
            model_name="approval",
            name="session",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="approvals",
                to="agents.session",
            ),
        ),
        migrations.AddConstraint(
            model_name="approval",
            constraint=models.UniqueConstraint(
                fields=("session", "call_id"), name="approval_unique_call"
            ),
        ),
    ]
