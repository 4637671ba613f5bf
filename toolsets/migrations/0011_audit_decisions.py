"""Placeholder (issue 16): who decided a paused call, and when, in the audit."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0010_audit_statuses"),
    ]

    operations = []
