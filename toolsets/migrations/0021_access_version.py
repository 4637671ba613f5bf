"""The access decisions' version counters move from the cache to the database.

They were keys in Django's cache (Redis in production): a grant saved while
Redis was away either failed (the bump raised) or, once that was caught, left
every process serving the decisions it had cached. A row bumped as each change
commits cannot be lost with the doorbell (toolsets.access).
"""

from django.db import migrations, models


def create_the_row(apps, schema_editor) -> None:
    apps.get_model("toolsets", "AccessVersion").objects.get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0020_toolcall_raw_result_summary"),
    ]

    operations = [
        migrations.CreateModel(
            name="AccessVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True,
                        primary_key=True,
                        serialize=False,
                        verbose_name="ID",
                    ),
                ),
                ("catalog", models.BigIntegerField(default=1)),
                ("grants", models.BigIntegerField(default=1)),
            ],
        ),
        migrations.RunPython(create_the_row, migrations.RunPython.noop),
    ]
