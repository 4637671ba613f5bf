"""Placeholder (issue 17): OAuth2 authorization-code flows."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0010_tool_choice"),
    ]

    operations = []
