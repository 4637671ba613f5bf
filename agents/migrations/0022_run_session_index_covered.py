"""Drop Run.session's single-column index, as 0021 did Event.session's.

The (session, status, created_at) index starts with the same column and serves
every read by session (the turn queue's, a session's runs) and the cascade; the
Run's insert and its two status updates (claim, end) each wrote one index more,
two on PostgreSQL (the `_like` one a text key gets, which no query uses).

Dropped by the names the database gives them, as in 0021.
"""

import django.db.models.deletion
from django.db import migrations, models


def drop_index(apps, schema_editor):
    model = apps.get_model("agents", "run")
    column = model._meta.get_field("session").column
    for name in schema_editor._constraint_names(model, [column], index=True):
        schema_editor.execute(schema_editor._delete_index_sql(model, name))


def create_index(apps, schema_editor):
    model = apps.get_model("agents", "run")
    field = model._meta.get_field("session")
    schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))
    if schema_editor.connection.vendor == "postgresql":
        like = schema_editor._create_like_index_sql(model, field)
        if like is not None:
            schema_editor.execute(like)


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0021_fk_indexes_covered"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_index, create_index)],
            state_operations=[
                migrations.AlterField(
                    model_name="run",
                    name="session",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="runs",
                        to="agents.session",
                    ),
                ),
            ],
        ),
    ]
