"""Placeholder (issue 16): whether a requester may approve her own calls."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0011_audit_decisions"),
    ]

    operations = []
