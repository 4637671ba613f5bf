"""Approvals belong to their session: a foreign key, deleted with it (hardening).

Reserved in the chain by the hardening change (issue 14) so parallel work on this
app never makes two leaf migrations; filled in by the change that owns it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0006_approval_catalog"),
    ]

    operations = []
