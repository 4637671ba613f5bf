"""Session ids unique per (app, user) and credentials per app (hardening: ADK scoping).

Reserved in the chain by the hardening change (issue 14) so parallel work on this
app never makes two leaf migrations; filled in by the change that owns it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0005_token_digests"),
    ]

    operations = []
