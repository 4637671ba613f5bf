"""Placeholder (issue 17): an agent's and a message's tool_choice."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0009_request_answers"),
    ]

    operations = []
