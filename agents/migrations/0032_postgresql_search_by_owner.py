"""PostgreSQL: a search starts from its user's own messages (issue 43), as SQLite's does.

0013's GIN indexes covered every user's messages: a word the team uses daily found
all of them, then the user's were kept, and ranking computed each one's vector
again. Now `agents_search_doc` holds one narrow row per message (its event) and per
titled session: the session's owner, and the text's `tsvector`, stored. A GIN index
on (owner, vector) — `btree_gin` lets the owner's number be a GIN key — finds one
user's rows holding a word, and ranking reads the stored vector. Triggers keep it,
as SQLite's FTS5 rows are kept: an event stored, changed or deleted; a session
titled, retitled, given to another owner or deleted; a TRUNCATE (a test's flush).
The old expression indexes go: a message's vector is computed once, into the row.

`btree_gin` is a trusted extension (PostgreSQL 13+): the database's owner may
create it; docs/deployment.md says so. On SQLite this migration does nothing.
"""

from importlib import import_module

from django.db import migrations

BEFORE = import_module("agents.migrations.0013_session_titles")

KINDS = "('user_message', 'text', 'function_call', 'transfer', 'escalation')"


def message_vector(row: str) -> str:
    """0013's indexed expression: a message's text parts, thoughts left out."""
    return (
        f"to_tsvector('english'::regconfig, jsonb_path_query_array({row}.data, "
        "'$.content.parts[*] ? (!(@.thought == true)).text'::jsonpath))"
    )


def title_vector(row: str) -> str:
    return f"to_tsvector('english'::regconfig, ({row}.title)::text)"


TABLE = [
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    """CREATE TABLE agents_search_doc (
        session_id varchar(128) NOT NULL,
        event_id bigint NULL,
        owner_id integer NOT NULL,
        vector tsvector NOT NULL
    )""",
    """CREATE UNIQUE INDEX agents_search_doc_event ON agents_search_doc (event_id)
    WHERE event_id IS NOT NULL""",
    "CREATE INDEX agents_search_doc_session ON agents_search_doc (session_id)",
    """CREATE INDEX agents_search_doc_owner_vector ON agents_search_doc
    USING gin (owner_id, vector)""",
]

INSERT_EVENTS = f"""
    INSERT INTO agents_search_doc (session_id, event_id, owner_id, vector)
    SELECT e.session_id, e.id, coalesce(s.owner_id, 0), {message_vector("e")}
    FROM {{rows}} AS e JOIN agents_session AS s ON s.id = e.session_id
    WHERE e.kind IN {KINDS}
    ON CONFLICT (event_id) WHERE event_id IS NOT NULL DO UPDATE
    SET session_id = excluded.session_id, owner_id = excluded.owner_id,
        vector = excluded.vector;
"""
INSERT_TITLES = f"""
    INSERT INTO agents_search_doc (session_id, event_id, owner_id, vector)
    SELECT s.id, NULL, coalesce(s.owner_id, 0), {title_vector("s")}
    FROM {{rows}} AS s WHERE s.title != '';
"""


def _function(name: str, body: str) -> str:
    return f"""CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN {body} RETURN NULL; END $$"""


FUNCTIONS = {
    "agents_search_doc_events_added": INSERT_EVENTS.format(rows="new_rows"),
    "agents_search_doc_events_gone": """
        DELETE FROM agents_search_doc AS d USING old_rows AS o WHERE d.event_id = o.id;
    """,
    "agents_search_doc_event_changed": f"""
        DELETE FROM agents_search_doc WHERE event_id = old.id;
        INSERT INTO agents_search_doc (session_id, event_id, owner_id, vector)
        SELECT new.session_id, new.id, coalesce(s.owner_id, 0), {message_vector("new")}
        FROM agents_session AS s WHERE s.id = new.session_id AND new.kind IN {KINDS};
    """,
    "agents_search_doc_sessions_added": INSERT_TITLES.format(rows="new_rows"),
    "agents_search_doc_title_changed": f"""
        DELETE FROM agents_search_doc WHERE session_id = old.id AND event_id IS NULL;
        INSERT INTO agents_search_doc (session_id, event_id, owner_id, vector)
        SELECT new.id, NULL, coalesce(new.owner_id, 0), {title_vector("new")}
        WHERE new.title != '';
    """,
    "agents_search_doc_owner_changed": """
        UPDATE agents_search_doc SET owner_id = coalesce(new.owner_id, 0)
        WHERE session_id = new.id;
    """,
    "agents_search_doc_sessions_gone": """
        DELETE FROM agents_search_doc AS d USING old_rows AS o WHERE d.session_id = o.id;
    """,
    "agents_search_doc_truncated": "TRUNCATE agents_search_doc;",
}

TRIGGERS = [
    """CREATE TRIGGER agents_search_doc_events_added AFTER INSERT ON agents_event
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION agents_search_doc_events_added()""",
    """CREATE TRIGGER agents_search_doc_events_gone AFTER DELETE ON agents_event
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION agents_search_doc_events_gone()""",
    """CREATE TRIGGER agents_search_doc_event_changed AFTER UPDATE OF kind, data
    ON agents_event FOR EACH ROW
    WHEN (old.kind IS DISTINCT FROM new.kind OR old.data IS DISTINCT FROM new.data)
    EXECUTE FUNCTION agents_search_doc_event_changed()""",
    """CREATE TRIGGER agents_search_doc_events_truncated AFTER TRUNCATE ON agents_event
    FOR EACH STATEMENT EXECUTE FUNCTION agents_search_doc_truncated()""",
    """CREATE TRIGGER agents_search_doc_sessions_added AFTER INSERT ON agents_session
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION agents_search_doc_sessions_added()""",
    """CREATE TRIGGER agents_search_doc_title_changed AFTER UPDATE OF title
    ON agents_session FOR EACH ROW WHEN (old.title IS DISTINCT FROM new.title)
    EXECUTE FUNCTION agents_search_doc_title_changed()""",
    """CREATE TRIGGER agents_search_doc_owner_changed AFTER UPDATE OF owner_id
    ON agents_session FOR EACH ROW WHEN (old.owner_id IS DISTINCT FROM new.owner_id)
    EXECUTE FUNCTION agents_search_doc_owner_changed()""",
    """CREATE TRIGGER agents_search_doc_sessions_gone AFTER DELETE ON agents_session
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION agents_search_doc_sessions_gone()""",
    """CREATE TRIGGER agents_search_doc_sessions_truncated AFTER TRUNCATE
    ON agents_session FOR EACH STATEMENT EXECUTE FUNCTION agents_search_doc_truncated()""",
]
TRIGGER_TABLES = {
    "agents_search_doc_events_added": "agents_event",
    "agents_search_doc_events_gone": "agents_event",
    "agents_search_doc_event_changed": "agents_event",
    "agents_search_doc_events_truncated": "agents_event",
    "agents_search_doc_sessions_added": "agents_session",
    "agents_search_doc_title_changed": "agents_session",
    "agents_search_doc_owner_changed": "agents_session",
    "agents_search_doc_sessions_gone": "agents_session",
    "agents_search_doc_sessions_truncated": "agents_session",
}
FILL = [
    INSERT_EVENTS.format(rows="agents_event"),
    INSERT_TITLES.format(rows="agents_session"),
]
DROP = [
    *(
        f"DROP TRIGGER IF EXISTS {name} ON {table}"
        for name, table in TRIGGER_TABLES.items()
    ),
    *(f"DROP FUNCTION IF EXISTS {name}()" for name in FUNCTIONS),
    "DROP TABLE IF EXISTS agents_search_doc",
]


def make(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    statements = [
        *TABLE,
        *(_function(name, body) for name, body in FUNCTIONS.items()),
        *TRIGGERS,
        *FILL,
        *BEFORE.POSTGRESQL_DROP,
        "ANALYZE agents_search_doc",
    ]
    for statement in statements:
        schema_editor.execute(statement, params=None)


def unmake(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in [*DROP, *BEFORE.POSTGRESQL_INDEXES]:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("agents", "0031_change_audit")]

    operations = [migrations.RunPython(make, unmake)]
