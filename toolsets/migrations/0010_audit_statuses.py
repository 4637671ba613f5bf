"""Placeholder (issue 15): the audit's status per governance stage."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0009_requests"),
    ]

    operations = []
