"""Placeholder (issue 16): a Run that waits for a person, and the run that resumes it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0007_requests"),
    ]

    operations = []
