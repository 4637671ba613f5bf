"""SQLite: a session's search rows go with it, whichever is deleted first.

0027's event trigger finds a message's row by its session's owner. Django's cascade
deletes a session's events before it, but a plain `DELETE FROM agents_session`
before its events (a flush, a hand-made cleanup, deferred foreign keys) left the
rows of its messages in `agents_search_text` for good: never shown (their session
is gone), but kept, and read by anything that reads the table. The session's
delete trigger now deletes the rows of the events it still has, by rowid (the
events' index by session, then one lookup each); when the cascade went first it
finds none.

A migration that remakes agents_session must create SESSION_DELETE (this one),
not 0027's, with the rest of 0027's SQLITE_TRIGGERS.
"""

from importlib import import_module

from django.db import migrations

BEFORE = import_module("agents.migrations.0027_session_list_keyset_search_by_owner")

OWNER_SPAN = BEFORE.OWNER_SPAN
KINDS = BEFORE.KINDS
TITLE_ROWID = BEFORE.TITLE_ROWID

SESSION_DELETE = f"""CREATE TRIGGER agents_search_session_delete AFTER DELETE
ON agents_session BEGIN
    DELETE FROM agents_search_title WHERE rowid = {TITLE_ROWID.format(row="old")};
    DELETE FROM agents_search_text WHERE rowid IN (
        SELECT coalesce(old.owner_id, 0) * {OWNER_SPAN} + e.id
        FROM agents_event AS e
        WHERE e.session_id = old.id AND e.kind IN {KINDS}
    );
END"""
DROP = "DROP TRIGGER IF EXISTS agents_search_session_delete"
# 0027's trigger, for the reverse.
(BEFORE_DELETE,) = [
    statement
    for statement in BEFORE.SQLITE_TRIGGERS
    if "agents_search_session_delete" in statement
]


def remake(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(DROP, params=None)
        schema_editor.execute(SESSION_DELETE, params=None)


def unmake(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(DROP, params=None)
        schema_editor.execute(BEFORE_DELETE, params=None)


class Migration(migrations.Migration):
    dependencies = [("agents", "0029_approvals_edit_quorum")]

    operations = [migrations.RunPython(remake, unmake)]
