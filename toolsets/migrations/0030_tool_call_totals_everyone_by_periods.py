"""Staff's Overview reads every user's calls by weeks and six hours too (issue 43).

toolsets.call_totals now counts each call also under user_id EVERYONE_SIX_HOURS
(-3), a row of its six hours (UTC: `hour` 00:00, 06:00, 12:00 or 18:00), and
EVERYONE_WEEKS (-4), a row of its week (`hour` a Thursday's midnight UTC: weeks are
aligned on the epoch), and by status alone (agent and tool blank) under -11 (a
day), -12 (an hour) and -13 (six hours). This back-fills those rows from the rows
for everyone as they are: the six hours' from the hours' (-2), the weeks' from the
days' (-1), each period's by status from that period's; never the calls: retention
may have deleted some, the totals keep them. The reverse deletes them. Staff's
denials by user are read from an index of the users' rows alone.
"""

from django.db import migrations, models

EVERYONE = -1  # call_totals.EVERYONE: a day's row
EVERYONE_HOURS = -2  # call_totals.EVERYONE_HOURS
EVERYONE_SIX_HOURS = -3  # call_totals.EVERYONE_SIX_HOURS
EVERYONE_WEEKS = -4  # call_totals.EVERYONE_WEEKS
# Each new row's user_id: the rows it is summed from, its period in seconds, and
# whether by status alone (agent and tool blank), in the order they are filled.
FILLS = {
    EVERYONE_SIX_HOURS: (EVERYONE_HOURS, 6 * 3600, False),
    EVERYONE_WEEKS: (EVERYONE, 7 * 86400, False),
    # call_totals.STATUSES_BY_PERIOD: a day's, an hour's, six hours'.
    -11: (EVERYONE, 86400, True),
    -12: (EVERYONE_HOURS, 3600, True),
    -13: (EVERYONE_SIX_HOURS, 6 * 3600, True),
}
COLUMNS = [
    "calls",
    "le_10ms",
    "le_25ms",
    "le_50ms",
    "le_100ms",
    "le_250ms",
    "le_500ms",
    "le_1s",
    "le_2500ms",
    "le_5s",
    "le_10s",
    "le_30s",
    "le_60s",
    "over_60s",
]
# A period's start from its rows' `hour`, as each backend stores a datetime (SQLite:
# UTC text 'YYYY-MM-DD HH:MM:SS'), as call_totals.PeriodStart computes it.
START = {
    "sqlite": "datetime(CAST(strftime('%s', hour) AS INTEGER) / {size} * {size}, 'unixepoch')",
    "postgresql": "to_timestamp(FLOOR(EXTRACT(EPOCH FROM hour) / {size}) * {size})",
}


def fill(apps, schema_editor):
    # No parameters: the statements' % are SQL's, not placeholders.
    with schema_editor.connection.cursor() as cursor:
        for user_id, (source, size, by_status) in FILLS.items():
            start = START[schema_editor.connection.vendor].format(size=size)
            kind = "'', ''" if by_status else "agent, tool"
            cursor.execute(
                "INSERT INTO toolsets_toolcalltotal (hour, user_id, agent, tool, "
                f"status, {', '.join(COLUMNS)}, max_ms) "
                f"SELECT {start}, {user_id}, {kind}, status, "
                f"{', '.join(f'SUM({c})' for c in COLUMNS)}, MAX(max_ms) "
                f"FROM toolsets_toolcalltotal WHERE user_id = {source} "
                f"GROUP BY {start}, status{'' if by_status else ', agent, tool'}"
            )


def empty(apps, schema_editor):
    schema_editor.execute(
        "DELETE FROM toolsets_toolcalltotal WHERE user_id IN "
        f"({', '.join(str(user_id) for user_id in FILLS)})"
    )


class Migration(migrations.Migration):
    dependencies = [("toolsets", "0029_tool_call_agent_started")]

    operations = [
        migrations.RemoveIndex(model_name="toolcalltotal", name="toolcalltotal_status"),
        migrations.AlterField(
            model_name="toolcalltotal",
            name="user_id",
            field=models.IntegerField(
                help_text="The caller, 0 if none (kept after deletion); below 0: "
                "every user's."
            ),
        ),
        migrations.AddIndex(
            model_name="toolcalltotal",
            index=models.Index(
                condition=models.Q(("user_id__gte", 0)),
                fields=["status", "hour", "user_id", "tool", "calls"],
                name="toolcalltotal_denials",
            ),
        ),
        migrations.RunPython(fill, empty),
    ]
