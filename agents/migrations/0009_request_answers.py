"""Placeholder (issue 16): a decision's comment, and standing approvals."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0008_run_waiting"),
    ]

    operations = []
