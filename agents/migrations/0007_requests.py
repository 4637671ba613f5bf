"""Placeholder (issue 15): one Request model for every pause for a person."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0006_session_scoping"),
    ]

    operations = []
