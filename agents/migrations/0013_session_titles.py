"""Sessions get a title and can be archived; their messages and titles are searched
by the database's full-text engine (issue 19, agents/search.py).

- `title`: existing sessions take theirs from their first user message, as a new
  session does when it accepts its first message (agents/titles.py; the rule is
  copied here, so this migration stays what it was if that module changes).
- `archived_at`: archived sessions leave the default list.
- Search: on SQLite, FTS5 tables kept by triggers (filled from the stored events
  and titles here); on PostgreSQL, GIN indexes over the same text, which
  PostgreSQL keeps itself.

On SQLite a table Django remakes (an AlterField on agents_event or agents_session,
say) loses its triggers: a migration that does must create them again
(SQLITE_TRIGGERS); tests/agents/test_session_search.py fails until it does.
"""

import re

from django.db import migrations, models

TOKENIZER = "porter unicode61 remove_diacritics 2"
# agents.search.MESSAGE_KINDS: a user's message, the model's words (beside a call too).
KINDS = "('user_message', 'text', 'function_call', 'transfer', 'escalation')"
# The text parts of a stored message, thoughts left out, one per line.
MESSAGE_TEXT = """
    SELECT group_concat(json_extract(part.value, '$.text'), char(10))
    FROM json_each({row}.data, '$.content.parts') AS part
    WHERE json_extract(part.value, '$.text') IS NOT NULL
      AND coalesce(json_extract(part.value, '$.thought'), 0) = 0
"""
INSERT_MESSAGE = f"""
    INSERT INTO agents_search_text (rowid, session_id, body)
    SELECT new.id, new.session_id, ({MESSAGE_TEXT.format(row="new")})
    WHERE new.kind IN {KINDS};
"""
SQLITE_TABLES = [
    f"CREATE VIRTUAL TABLE agents_search_text USING fts5("
    f"session_id UNINDEXED, body, tokenize = '{TOKENIZER}')",
    f"CREATE VIRTUAL TABLE agents_search_title USING fts5("
    f"session_id UNINDEXED, title, tokenize = '{TOKENIZER}')",
]
SQLITE_TRIGGERS = [
    f"""CREATE TRIGGER agents_search_event_insert AFTER INSERT ON agents_event
    BEGIN {INSERT_MESSAGE} END""",
    """CREATE TRIGGER agents_search_event_delete AFTER DELETE ON agents_event
    BEGIN DELETE FROM agents_search_text WHERE rowid = old.id; END""",
    f"""CREATE TRIGGER agents_search_event_update AFTER UPDATE OF kind, data
    ON agents_event BEGIN
        DELETE FROM agents_search_text WHERE rowid = old.id; {INSERT_MESSAGE}
    END""",
    """CREATE TRIGGER agents_search_session_insert AFTER INSERT ON agents_session
    WHEN new.title != '' BEGIN
        INSERT INTO agents_search_title (session_id, title)
        VALUES (new.id, new.title);
    END""",
    """CREATE TRIGGER agents_search_session_title AFTER UPDATE OF title
    ON agents_session WHEN old.title IS NOT new.title BEGIN
        DELETE FROM agents_search_title WHERE session_id = old.id;
        INSERT INTO agents_search_title (session_id, title)
        SELECT new.id, new.title WHERE new.title != '';
    END""",
    """CREATE TRIGGER agents_search_session_delete AFTER DELETE ON agents_session
    BEGIN DELETE FROM agents_search_title WHERE session_id = old.id; END""",
]
SQLITE_FILL = [
    f"""INSERT INTO agents_search_text (rowid, session_id, body)
    SELECT e.id, e.session_id, ({MESSAGE_TEXT.format(row="e")})
    FROM agents_event AS e WHERE e.kind IN {KINDS}""",
    """INSERT INTO agents_search_title (session_id, title)
    SELECT id, title FROM agents_session WHERE title != ''""",
]
SQLITE_DROP = [
    *(
        f"DROP TRIGGER IF EXISTS {name}"
        for name in (
            "agents_search_event_insert",
            "agents_search_event_delete",
            "agents_search_event_update",
            "agents_search_session_insert",
            "agents_search_session_title",
            "agents_search_session_delete",
        )
    ),
    "DROP TABLE IF EXISTS agents_search_text",
    "DROP TABLE IF EXISTS agents_search_title",
]
POSTGRESQL_INDEXES = [
    f"""CREATE INDEX agents_event_search ON agents_event USING gin ((
        to_tsvector('english'::regconfig, jsonb_path_query_array(data,
        '$.content.parts[*] ? (!(@.thought == true)).text'::jsonpath))
    )) WHERE kind IN {KINDS}""",
    """CREATE INDEX agents_session_title_search ON agents_session
    USING gin ((to_tsvector('english'::regconfig, (title)::text)))""",
]
POSTGRESQL_DROP = [
    "DROP INDEX IF EXISTS agents_event_search",
    "DROP INDEX IF EXISTS agents_session_title_search",
]

AUTO_TITLE_CHARS = 60
_SPACES = re.compile(r"\s+")
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def title_from_message(text):
    line = next((line for line in text.splitlines() if line.strip()), "")
    line = _SPACES.sub(" ", _UNSHOWN.sub(" ", line)).strip()
    if len(line) <= AUTO_TITLE_CHARS:
        return line
    cut = line[: AUTO_TITLE_CHARS - 1]
    word_end = cut.rfind(" ")
    if word_end > AUTO_TITLE_CHARS // 2:
        cut = cut[:word_end]
    return cut.rstrip(" ,.;:-") + "…"


def name_sessions(apps, schema_editor):
    """Each untitled session takes its title from its first user message."""
    Session = apps.get_model("agents", "Session")
    Event = apps.get_model("agents", "Event")
    for pk in Session.objects.filter(title="").values_list("pk", flat=True).iterator():
        first = (
            Event.objects.filter(session_id=pk, kind="user_message")
            .order_by("seq")
            .values_list("data", flat=True)
            .first()
        )
        parts = ((first or {}).get("content") or {}).get("parts") or []
        text = "".join(
            part["text"]
            for part in parts
            if isinstance(part.get("text"), str) and not part.get("thought")
        )
        title = title_from_message(text)
        if title:
            Session.objects.filter(pk=pk).update(title=title)


def create_search(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        _run(schema_editor, [*SQLITE_TABLES, *SQLITE_TRIGGERS, *SQLITE_FILL])
    elif vendor == "postgresql":
        _run(schema_editor, POSTGRESQL_INDEXES)


def drop_search(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        _run(schema_editor, SQLITE_DROP)
    elif vendor == "postgresql":
        _run(schema_editor, POSTGRESQL_DROP)


def _run(schema_editor, statements):
    for statement in statements:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("agents", "0012_run_cancelled")]

    operations = [
        migrations.AddField(
            model_name="session",
            name="title",
            field=models.CharField(
                blank=True,
                help_text="What the session is about: its first message's start "
                "until renamed (agents.titles).",
                max_length=200,
            ),
        ),
        migrations.AddField(
            model_name="session",
            name="archived_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Archived: left out of the sessions list.",
                null=True,
            ),
        ),
        # The search first, so the titles given next are indexed by its triggers.
        migrations.RunPython(create_search, drop_search),
        migrations.RunPython(name_sessions, migrations.RunPython.noop),
    ]
