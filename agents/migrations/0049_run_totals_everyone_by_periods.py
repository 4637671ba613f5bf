"""Staff's usage by day, agent or model reads every user's runs in the fewest
periods (issue 43), as the Overview reads the calls' (toolsets 0030).

agents.usage now counts each ended run also under the user_ids of every user's
week (-4), day (-1) and six hours (-3) (project.periods; `hour` the period's start,
UTC, aligned on the epoch), beside the hour's (-2); this back-fills those rows from
the hours' rows for everyone as they are (never the runs: retention may have deleted
some, the totals keep them). The reverse deletes them. Staff's usage by user reads
every user's hours from an index alone (their sums in it).
"""

from django.db import migrations, models

EVERYONE_HOURS = -2  # project.periods.EVERYONE_HOURS
# project.periods.EVERYONE_BY_PERIOD's longer periods: user_id, seconds.
PERIODS = {-4: 7 * 86400, -1: 86400, -3: 6 * 3600}
SUMS = ["runs", "prompt_tokens", "completion_tokens", "total_tokens", "cost_micros"]
# A period's start from its hours' `hour`, as each backend stores a datetime (SQLite:
# UTC text 'YYYY-MM-DD HH:MM:SS'), as project.periods.PeriodStart computes it.
START = {
    "sqlite": "datetime(CAST(strftime('%s', hour) AS INTEGER) / {size} * {size}, "
    "'unixepoch')",
    "postgresql": "to_timestamp(FLOOR(EXTRACT(EPOCH FROM hour) / {size}) * {size})",
}


def fill(apps, schema_editor):
    # No parameters: the statements' % are SQL's, not placeholders.
    with schema_editor.connection.cursor() as cursor:
        for user_id, size in PERIODS.items():
            start = START[schema_editor.connection.vendor].format(size=size)
            cursor.execute(
                "INSERT INTO agents_runtotal (hour, user_id, agent, model, outcome, "
                f"{', '.join(SUMS)}) "
                f"SELECT {start}, {user_id}, agent, model, outcome, "
                f"{', '.join(f'SUM({c})' for c in SUMS)} "
                f"FROM agents_runtotal WHERE user_id = {EVERYONE_HOURS} "
                f"GROUP BY {start}, agent, model, outcome"
            )


def empty(apps, schema_editor):
    users = ", ".join(str(user_id) for user_id in PERIODS)
    schema_editor.execute(f"DELETE FROM agents_runtotal WHERE user_id IN ({users})")


class Migration(migrations.Migration):
    dependencies = [("agents", "0048_postgresql_search_owner_epochs")]

    operations = [
        migrations.RemoveIndex(model_name="runtotal", name="runtotal_user"),
        migrations.AddIndex(
            model_name="runtotal",
            index=models.Index(
                fields=[
                    "user_id",
                    "hour",
                    "runs",
                    "prompt_tokens",
                    "completion_tokens",
                    "total_tokens",
                    "cost_micros",
                ],
                name="runtotal_user_sums",
            ),
        ),
        migrations.RunPython(fill, empty),
    ]
