"""Day 100 (issue 43): the audit filtered by agent reads a range of an index, newest
first, however deep its page (`?before=`), never a sort of every call of the agent.

The index of (agent, started_at) replaces the one of agent alone, which it also
serves. The old one is dropped by name: an AlterField would remake the whole
table on SQLite to drop an index. SQLite analyzes the table, as 0017's day-100
indexes are, so its planner knows the new index's spread at once.
"""

from django.conf import settings
from django.db import migrations, models

OLD_INDEXES = [
    "toolsets_toolcall_agent_fed1c776",
    "toolsets_toolcall_agent_fed1c776_like",  # PostgreSQL's, for LIKE
]
AGENT = dict(max_length=100, blank=True, help_text="The agent (app) name.")


def drop_agent_index(apps, schema_editor):
    for name in OLD_INDEXES:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"', params=None)


def make_agent_index(apps, schema_editor):
    model = apps.get_model("toolsets", "ToolCall")
    without = models.CharField(**AGENT)
    without.set_attributes_from_name("agent")
    schema_editor.alter_field(model, without, model._meta.get_field("agent"))


def analyze(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute("ANALYZE toolsets_toolcall", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("toolsets", "0028_remote_a2a_agents"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="toolcall",
                    name="agent",
                    field=models.CharField(**AGENT),
                ),
            ],
            database_operations=[
                migrations.RunPython(drop_agent_index, make_agent_index),
            ],
        ),
        migrations.AddIndex(
            model_name="toolcall",
            index=models.Index(
                fields=["agent", "started_at"], name="toolcall_agent_started"
            ),
        ),
        migrations.RunPython(analyze, migrations.RunPython.noop),
    ]
