"""API tokens stored as digests (hardening: hashed tokens).

Reserved in the chain by the hardening change (issue 14) so parallel work on this
app never makes two leaf migrations; filled in by the change that owns it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0004_credentials"),
    ]

    operations = []
