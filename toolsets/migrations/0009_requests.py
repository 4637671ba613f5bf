"""Placeholder (issue 15): approvals move to agents' one Request model."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0008_risky_granted_only"),
        ("agents", "0007_requests"),
    ]

    operations = []
