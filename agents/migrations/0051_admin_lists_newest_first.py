"""The admin's lists of sessions and runs newest first from an index (issue 43,
project.admin_lists): on a team's day 100 they sorted every row to show a page
(87 ms at 20,000 sessions, 158 ms at 166,000 runs on SQLite). Both columns are set
once, as the row is made: neither index changes with a turn's events."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0050_request_kind_newest"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["-created_at", "-id"], name="run_newest"),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(fields=["-created_at"], name="session_newest"),
        ),
    ]
