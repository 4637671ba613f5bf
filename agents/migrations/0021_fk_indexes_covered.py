"""Drop the single-column indexes of Event.session and RunSpan.run.

Each is covered by an index that starts with the same column (Event's two unique
constraints, RunSpan's (run, start) index), which serves every read by session or
run and their cascades; each insert of an event or a span updated one index more.

Only the indexes are dropped, by the names the database gives them (on PostgreSQL
also the `_like` one a text key gets). Django's own AlterField would rebuild the
whole table on SQLite, and a rebuilt agents_event loses the search triggers
(migration 0013) that keep the session search index.
"""

import django.db.models.deletion
from django.db import migrations, models

COVERED = [("event", "session"), ("runspan", "run")]


def drop_indexes(apps, schema_editor):
    for model_name, field_name in COVERED:
        model = apps.get_model("agents", model_name)
        column = model._meta.get_field(field_name).column
        for name in schema_editor._constraint_names(model, [column], index=True):
            schema_editor.execute(schema_editor._delete_index_sql(model, name))


def create_indexes(apps, schema_editor):
    for model_name, field_name in COVERED:
        model = apps.get_model("agents", model_name)
        field = model._meta.get_field(field_name)
        schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0020_history_default_50"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_indexes, create_indexes)],
            state_operations=[
                migrations.AlterField(
                    model_name="event",
                    name="session",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="agents.session",
                    ),
                ),
                migrations.AlterField(
                    model_name="runspan",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="spans",
                        to="agents.run",
                    ),
                ),
            ],
        ),
    ]
