"""Placeholder (issue 17): catalog fields of issue 17 (policies, built-ins, conditional toolsets)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0012_tool_self_approval"),
    ]

    operations = []
