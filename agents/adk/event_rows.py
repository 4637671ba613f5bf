"""The statements that store one event row under its session's next seq.

Every stored event takes the next `seq` of its session by an UPDATE ... RETURNING
on the session row (`advance`), then its row is inserted with that seq. `store`
does both, one of two ways:

- `insert_in_one`: on PostgreSQL, outside a transaction, both in one statement
  (a data-modifying WITH): one round trip, atomic on its own, instead of BEGIN,
  the UPDATE, the INSERT and COMMIT (four). A turn stores six to eight events.
- otherwise (SQLite, which has no data-modifying WITH; or inside a caller's
  transaction, whose savepoint must hold a refused INSERT), `advance` and then
  `insert`, in `transaction.atomic()`. A caller that writes more in the same
  transaction (an event's state delta) runs those two itself.

Toolcrib's own events (`fresh`: a new uuid4 for an id, no INSERT of it refused)
need no savepoint: in a caller's transaction (a turn's end, agents.turns.drive)
they are written as outside one.

Both INSERTs are written here, not by the ORM's `save()`: the row's fields are
prepared as the ORM prepares them, without the rest of a save's machinery, which
cost more than SQLite's own work on an event. No signal is connected to Event.

Either way a duplicate event id raises IntegrityError with nothing changed, and an
UPDATE that matches no row (a stale or missing session) stores nothing.
"""

from datetime import datetime
from functools import lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

from agents.models import Event, Session
from project.patches.rows import preparer

# The session's columns the UPDATE returns, in this order.
RETURNED = "RETURNING id, last_seq, revision"
# The event's fields both INSERTs write from the row; session and seq come from
# the UPDATE, the id from the database.
ROW_FIELDS = [
    field
    for field in Event._meta.concrete_fields
    if field.name not in ("id", "session", "seq")
]
# Each field with how its value is prepared (project.patches.rows.preparer).
PREPARED_FIELDS = [(field, preparer(field)) for field in ROW_FIELDS]


def advance(sql: str, params: list[Any]) -> tuple[Any, ...] | None:
    """One UPDATE ... RETURNING on the session table (SQLite 3.35+ and PostgreSQL
    both have it; Django's update() returns only a count): its row, or None.

    `sql` names the table as `{table}`; datetimes in `params` are adapted here."""
    with connection.cursor() as cursor:
        cursor.execute(sql.format(table=_table(Session)), _adapted(params))
        return cursor.fetchone()


def store(
    sql: str, params: list[Any], row: Event, *, fresh: bool = False
) -> int | None:
    """Take the session's next seq by the UPDATE `sql` (ending in RETURNED) and
    insert `row` under it, atomically. The session's new revision, with the row's
    pk, session and seq set; or None, with nothing stored, when the UPDATE matched
    no row.

    `fresh`: the row's event id is new (one of Toolcrib's own events, a uuid4), so
    its INSERT cannot be refused as a duplicate and needs no savepoint to hold the
    refusal: inside a caller's transaction it is written as outside one (on
    PostgreSQL in one statement), without a transaction of its own."""
    if one_statement(fresh=fresh):
        return insert_in_one(sql, params, row)
    if fresh and connection.in_atomic_block:
        return _advance_and_insert(sql, params, row)
    with transaction.atomic():
        return _advance_and_insert(sql, params, row)


def _advance_and_insert(sql: str, params: list[Any], row: Event) -> int | None:
    taken = advance(sql, params)
    if taken is None:
        return None
    row.session_id, row.seq, revision = taken
    insert(row)
    return revision


def one_statement(*, fresh: bool = False) -> bool:
    """Whether this connection stores an event in one statement (insert_in_one):
    on PostgreSQL, outside a transaction, or for a `fresh` row (see store)."""
    return connection.vendor == "postgresql" and (
        fresh or not connection.in_atomic_block
    )


def insert_in_one(sql: str, params: list[Any], row: Event) -> int | None:
    """PostgreSQL: the session UPDATE `sql` (ending in RETURNED) and the INSERT of
    `row` with the session id and seq it returned, in one statement.

    The session's new revision, with the row's pk, session and seq set; or None
    when the UPDATE matched no row. `row` is an unsaved Event: its fields are
    prepared as the ORM's INSERT prepares them (an auto_now_add field is set)."""
    values = _values(row)
    statement = (
        f"WITH taken AS ({sql.format(table=_table(Session))})"
        f" INSERT INTO {_table(Event)} ({_columns()})"
        f" SELECT taken.id, taken.last_seq, {', '.join(['%s'] * len(values))}"
        " FROM taken RETURNING id, session_id, seq, (SELECT revision FROM taken)"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, _adapted(params) + values)
        written = cursor.fetchone()
    if written is None:
        return None
    row.pk, row.session_id, row.seq, revision = written
    _saved(row)
    return revision


def insert(row: Event) -> int:
    """INSERT `row`, its session and seq set (by `advance`), as the ORM's
    save(force_insert=True) would store it: its new pk, set on the row too."""
    values = [row.session_id, row.seq, *_values(row)]
    statement = (
        f"INSERT INTO {_table(Event)} ({_columns()})"
        f" VALUES ({', '.join(['%s'] * len(values))}) RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, values)
        row.pk = cursor.fetchone()[0]
    _saved(row)
    return row.pk


def _saved(row: Event) -> None:
    """Mark `row` as the ORM marks a row it has inserted."""
    row._state.adding, row._state.db = False, connection.alias


def _values(row: Event) -> list[Any]:
    """The row's ROW_FIELDS, prepared as the ORM's INSERT prepares them (an
    auto_now_add field is set on the row)."""
    db = connections[DEFAULT_DB_ALIAS]  # once: the proxy finds it on every read
    return [
        prepare(field.pre_save(row, add=True), db) for field, prepare in PREPARED_FIELDS
    ]


def _columns() -> str:
    """The INSERT's columns: the session's id and the seq, then ROW_FIELDS'."""
    return _columns_of(connection.vendor)


@lru_cache(maxsize=4)
def _columns_of(vendor: str) -> str:
    quote = connection.ops.quote_name
    names = ["session_id", "seq", *(field.column for field in ROW_FIELDS)]
    return ", ".join(quote(name) for name in names)


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _adapted(params: list[Any]) -> list[Any]:
    return [
        connection.ops.adapt_datetimefield_value(value)
        if isinstance(value, datetime)
        else value
        for value in params
    ]
