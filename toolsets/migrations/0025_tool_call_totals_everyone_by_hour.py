"""Staff's Overview by the hour reads an hour's row of every user's calls (issue 43).

toolsets.call_totals now counts each call also under user_id EVERYONE_HOURS (-2),
an hour's row of every user's calls; this back-fills those rows from the users'
hourly totals as they are (never the calls: retention may have deleted some, the
totals keep them). The reverse deletes them.
"""

from django.db import migrations

EVERYONE_HOURS = -2  # call_totals.EVERYONE_HOURS
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
FILL = (
    "INSERT INTO toolsets_toolcalltotal (hour, user_id, agent, tool, status, "
    f"{', '.join(COLUMNS)}, max_ms) "
    f"SELECT hour, {EVERYONE_HOURS}, agent, tool, status, "
    f"{', '.join(f'SUM({c})' for c in COLUMNS)}, MAX(max_ms) "
    "FROM toolsets_toolcalltotal WHERE user_id >= 0 "
    "GROUP BY hour, agent, tool, status"
)
EMPTY = f"DELETE FROM toolsets_toolcalltotal WHERE user_id = {EVERYONE_HOURS}"


class Migration(migrations.Migration):
    dependencies = [("toolsets", "0024_approvals_edit_quorum")]

    operations = [migrations.RunSQL(FILL, EMPTY)]
