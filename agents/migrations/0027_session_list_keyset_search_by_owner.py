"""Day 100 (issue 43): the sessions list pages by key, and a search starts from its
user's own messages.

- Two partial indexes of a user's sessions by last activity and id, one for the
  list and one for the archive, so a page is a range of an index, however deep.
- SQLite's search tables (agents/search.py) are made again with each row's rowid
  carrying its session's owner in its high bits (`owner * OWNER_SPAN + id`): a
  search reads one user's rows, a rowid range, and never another user's, however
  often they use a word. Event rows keep the event's id below the owner (a delete
  finds its row by rowid, so a session's events are deleted before it, as Django's
  cascade does; a row left by a session deleted first is never shown, its session
  being gone), title rows the session's rowid; a session given to another owner
  takes its rows to that owner's range.
- SQLite's statistics: ANALYZE once here on the data as it is (project/sqlite.py
  keeps them current later). With them SQLite takes a pending request for one
  status of five and would read every request for the inbox: a partial index of
  the pending ones, `request_pending`.

Like 0013: on SQLite a table Django remakes (an AlterField on agents_event or
agents_session, say) loses its triggers, and a remade agents_session numbers its
rowids anew: a migration that does must create SQLITE_TRIGGERS again and refill the
title table (SQLITE_FILL's second statement, after deleting its rows);
tests/agents/test_query_plans.py checks the triggers are there.
"""

from importlib import import_module

from django.db import migrations, models

# 0013's search, by owner-less rowids: what the reverse remakes.
BEFORE = import_module("agents.migrations.0013_session_titles")

OWNER_SPAN = 2**36  # agents.search.OWNER_SPAN: ids below it, owners above
TOKENIZER = "porter unicode61 remove_diacritics 2"
KINDS = "('user_message', 'text', 'function_call', 'transfer', 'escalation')"
MESSAGE_TEXT = """
    SELECT group_concat(json_extract(part.value, '$.text'), char(10))
    FROM json_each({row}.data, '$.content.parts') AS part
    WHERE json_extract(part.value, '$.text') IS NOT NULL
      AND coalesce(json_extract(part.value, '$.thought'), 0) = 0
"""
EVENT_ROWID = (
    "(SELECT coalesce(s.owner_id, 0) FROM agents_session AS s"
    " WHERE s.id = {row}.session_id) * " + str(OWNER_SPAN) + " + {row}.id"
)
TITLE_ROWID = "coalesce({row}.owner_id, 0) * " + str(OWNER_SPAN) + " + {row}.rowid"
INSERT_MESSAGE = f"""
    INSERT INTO agents_search_text (rowid, session_id, body)
    SELECT {EVENT_ROWID.format(row="new")}, new.session_id,
        ({MESSAGE_TEXT.format(row="new")})
    WHERE new.kind IN {KINDS};
"""
DELETE_MESSAGE = f"""
    DELETE FROM agents_search_text WHERE rowid = {EVENT_ROWID.format(row="old")};
"""
TRIGGERS = (
    "agents_search_event_insert",
    "agents_search_event_delete",
    "agents_search_event_update",
    "agents_search_session_insert",
    "agents_search_session_title",
    "agents_search_session_delete",
    "agents_search_session_owner",
)
SQLITE_DROP = [
    *(f"DROP TRIGGER IF EXISTS {name}" for name in TRIGGERS),
    "DROP TABLE IF EXISTS agents_search_text",
    "DROP TABLE IF EXISTS agents_search_title",
]
SQLITE_TABLES = [
    f"CREATE VIRTUAL TABLE agents_search_text USING fts5("
    f"session_id UNINDEXED, body, tokenize = '{TOKENIZER}')",
    f"CREATE VIRTUAL TABLE agents_search_title USING fts5("
    f"session_id UNINDEXED, title, tokenize = '{TOKENIZER}')",
]
SQLITE_TRIGGERS = [
    f"""CREATE TRIGGER agents_search_event_insert AFTER INSERT ON agents_event
    WHEN new.kind IN {KINDS} BEGIN {INSERT_MESSAGE} END""",
    f"""CREATE TRIGGER agents_search_event_delete AFTER DELETE ON agents_event
    WHEN old.kind IN {KINDS} BEGIN {DELETE_MESSAGE} END""",
    f"""CREATE TRIGGER agents_search_event_update AFTER UPDATE OF kind, data
    ON agents_event BEGIN {DELETE_MESSAGE} {INSERT_MESSAGE} END""",
    f"""CREATE TRIGGER agents_search_session_insert AFTER INSERT ON agents_session
    WHEN new.title != '' BEGIN
        INSERT INTO agents_search_title (rowid, session_id, title)
        VALUES ({TITLE_ROWID.format(row="new")}, new.id, new.title);
    END""",
    f"""CREATE TRIGGER agents_search_session_title AFTER UPDATE OF title
    ON agents_session WHEN old.title IS NOT new.title BEGIN
        DELETE FROM agents_search_title WHERE rowid = {TITLE_ROWID.format(row="old")};
        INSERT INTO agents_search_title (rowid, session_id, title)
        SELECT {TITLE_ROWID.format(row="new")}, new.id, new.title
        WHERE new.title != '';
    END""",
    f"""CREATE TRIGGER agents_search_session_delete AFTER DELETE ON agents_session
    WHEN old.title != '' BEGIN
        DELETE FROM agents_search_title WHERE rowid = {TITLE_ROWID.format(row="old")};
    END""",
]
# A session given to another owner (the admin) takes its rows to their range.
_OLD = f"coalesce(old.owner_id, 0) * {OWNER_SPAN}"
OLD_RANGE = (
    f"rowid BETWEEN {_OLD} AND {_OLD} + {OWNER_SPAN - 1} AND session_id = old.id"
)
SQLITE_TRIGGERS.append(
    f"""CREATE TRIGGER agents_search_session_owner AFTER UPDATE OF owner_id
    ON agents_session WHEN old.owner_id IS NOT new.owner_id BEGIN
        INSERT INTO agents_search_text (rowid, session_id, body)
        SELECT coalesce(new.owner_id, 0) * {OWNER_SPAN} + rowid % {OWNER_SPAN},
            session_id, body
        FROM agents_search_text WHERE {OLD_RANGE};
        DELETE FROM agents_search_text WHERE {OLD_RANGE};
        DELETE FROM agents_search_title WHERE rowid = {TITLE_ROWID.format(row="old")};
        INSERT INTO agents_search_title (rowid, session_id, title)
        SELECT {TITLE_ROWID.format(row="new")}, new.id, new.title
        WHERE new.title != '';
    END"""
)
SQLITE_FILL = [
    f"""INSERT INTO agents_search_text (rowid, session_id, body)
    SELECT coalesce(s.owner_id, 0) * {OWNER_SPAN} + e.id, e.session_id,
        ({MESSAGE_TEXT.format(row="e")})
    FROM agents_event AS e JOIN agents_session AS s ON s.id = e.session_id
    WHERE e.kind IN {KINDS}""",
    f"""INSERT INTO agents_search_title (rowid, session_id, title)
    SELECT {TITLE_ROWID.format(row="agents_session")}, id, title
    FROM agents_session WHERE title != ''""",
]


def remake_search(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in [*SQLITE_DROP, *SQLITE_TABLES, *SQLITE_TRIGGERS, *SQLITE_FILL]:
        schema_editor.execute(statement, params=None)
    schema_editor.execute("PRAGMA analysis_limit=1000", params=None)
    schema_editor.execute("ANALYZE", params=None)


def unmake_search(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    before = [*BEFORE.SQLITE_TABLES, *BEFORE.SQLITE_TRIGGERS, *BEFORE.SQLITE_FILL]
    for statement in [*SQLITE_DROP, *before]:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("agents", "0026_run_totals_backfill")]

    operations = [
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                condition=models.Q(("archived_at__isnull", True)),
                fields=["owner", "updated_at", "id"],
                name="session_list",
            ),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                condition=models.Q(("archived_at__isnull", False)),
                fields=["owner", "updated_at", "id"],
                name="session_archive",
            ),
        ),
        migrations.AddIndex(
            model_name="request",
            index=models.Index(
                condition=models.Q(("status", "pending")),
                fields=["id"],
                name="request_pending",
            ),
        ),
        migrations.RunPython(remake_search, unmake_search),
    ]
