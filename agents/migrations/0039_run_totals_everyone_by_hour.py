"""Staff's usage by day, agent or model reads an hour's row of every user's runs
(issue 43), as the Overview reads the calls' (toolsets 0025).

agents.usage now counts each ended run also under user_id EVERYONE_HOURS (-2); this
back-fills those rows from the users' hourly totals as they are (never the runs:
retention may have deleted some, the totals keep them). The reverse deletes them.
"""

from django.db import migrations

EVERYONE_HOURS = -2  # agents.usage.EVERYONE_HOURS
SUMS = ["runs", "prompt_tokens", "completion_tokens", "total_tokens", "cost_micros"]
FILL = (
    "INSERT INTO agents_runtotal (hour, user_id, agent, model, outcome, "
    f"{', '.join(SUMS)}) "
    f"SELECT hour, {EVERYONE_HOURS}, agent, model, outcome, "
    f"{', '.join(f'SUM({c})' for c in SUMS)} "
    "FROM agents_runtotal WHERE user_id >= 0 "
    "GROUP BY hour, agent, model, outcome"
)
EMPTY = f"DELETE FROM agents_runtotal WHERE user_id = {EVERYONE_HOURS}"


class Migration(migrations.Migration):
    dependencies = [("agents", "0038_agent_builder")]

    operations = [migrations.RunSQL(FILL, EMPTY)]
