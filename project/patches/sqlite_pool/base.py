"""Django's SQLite backend, with connections lent again instead of reopened.

Django opens a new SQLite connection for every request, every turn and every
socket's database call (each runs on a thread of its own, and `CONN_MAX_AGE` is 0),
and a new connection costs: the file opened, Django's ~40 SQL functions registered,
the schema parsed again on its first statement. PostgreSQL has a pool for this
(psycopg_pool, settings.py); this is SQLite's. A connection Django closes outside
a transaction is rolled back to no transaction and kept, up to `MAX_IDLE` a database;
the next `connect()` of any thread takes it, and Django's own connect() then resets
what it owns (autocommit, the per-connection pragmas run again below). A connection
closed inside an atomic block, an in-memory database's, or one whose file was
replaced since it was opened is really closed.

A thread that lives on for more units of work of the same kind (a turn's ORM
thread, agents/turns/orm_threads.py) `release()`s its connection between them
instead: kept open on that thread when the unit left nothing behind on it (no
transaction, no error) and its file is the one it opened, closed as above when not.
Lending it to the pool and taking it back cost a turn 5 to 10% of its CPU
(bench/README.md).

Its cursors convert each statement's placeholders once (cursor.py), and a file's
WAL is checkpointed on a thread of the process's own, not in a writer's commit
(checkpoints.py).
"""

import threading
from typing import Any

from django.conf import settings
from django.db.backends.sqlite3 import base
from django.db.backends.sqlite3.creation import DatabaseCreation as SQLiteCreation

from project.patches.sqlite_pool import checkpoints
from project.patches.sqlite_pool.cursor import CursorWrapper

MAX_IDLE = 8  # connections kept open per database file, per process

_lock = threading.Lock()
# (file, connect parameters) -> idle connections, each with the file's inode when opened
_idle: dict[tuple[str, str], list[tuple[Any, int]]] = {}


class DatabaseCreation(SQLiteCreation):
    """Test databases are made and deleted by path: no kept connection, and no
    checkpointing thread's, survives that."""

    def _create_test_db(self, *args, **kwargs):
        close_idle()
        checkpoints.stop_all()
        return super()._create_test_db(*args, **kwargs)

    def _destroy_test_db(self, *args, **kwargs):
        close_idle()
        checkpoints.stop_all()
        return super()._destroy_test_db(*args, **kwargs)


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation

    # The pool and file inode of the open connection; None: not one to keep.
    _pool: tuple[tuple[str, str], int] | None = None

    def get_new_connection(self, conn_params):
        key, inode = _key(conn_params), _inode(conn_params)
        self._pool = None if key is None or inode is None else (key, inode)
        if self._pool is None:
            return super().get_new_connection(conn_params)
        # The file's log checkpointed on a thread of its own (checkpoints.py).
        checkpoints.watch(key[0], interval=settings.TOOLCRIB_SQLITE_CHECKPOINT_SECONDS)
        while (idle := _take(key)) is not None:
            conn, opened_on = idle
            if opened_on == inode:
                _reset(conn, self.init_commands)
                return conn
            conn.close()  # the file was replaced: that connection reads the old one
        return super().get_new_connection(conn_params)

    def release(self) -> None:
        """The end of one unit of a long-lived thread's work: its connection stays
        open on the thread for the next one, what it left uncommitted rolled back,
        unless it is not one to keep (see `_close`), was left out of autocommit or
        inside an atomic block, saw an error, or its file was replaced; then it is
        closed as close() does (the pool resets what Django owns when it lends it)."""
        conn = self.connection
        if conn is None:
            return
        pool = self._pool
        if (
            pool is None
            or not self.autocommit  # left so by set_autocommit(False)
            or self.in_atomic_block
            or self.needs_rollback
            or self.errors_occurred
            or checkpoints.file_inode(pool[0][0]) != pool[1]
        ):
            self.close()
            return
        with self.wrap_database_errors:
            if conn.in_transaction:
                conn.rollback()

    def create_cursor(self, name=None):
        return self.connection.cursor(factory=CursorWrapper)

    def _close(self):
        conn = self.connection
        if conn is None:
            return None
        if self._pool is None or self.in_atomic_block:
            return super()._close()
        key, inode = self._pool
        with self.wrap_database_errors:
            try:
                if conn.in_transaction:
                    conn.rollback()
            except Exception:
                conn.close()  # not lent in a state nobody can vouch for
                raise
            if not _give_back(key, (conn, inode)):
                conn.close()
        return None


def _key(conn_params: dict[str, Any]) -> tuple[str, str] | None:
    """The pool a connection belongs to; None for an in-memory database."""
    name = str(conn_params.get("database", ""))
    if not name or name == ":memory:" or "mode=memory" in name:
        return None
    return name, repr(sorted(conn_params.items()))


def _inode(conn_params: dict[str, Any]) -> int | None:
    if "database" not in conn_params:
        return None
    return checkpoints.file_inode(str(conn_params["database"]))


def _take(key: tuple[str, str]) -> tuple[Any, int] | None:
    with _lock:
        idle = _idle.get(key)
        return idle.pop() if idle else None


def _give_back(key: tuple[str, str], entry: tuple[Any, int]) -> bool:
    with _lock:
        idle = _idle.setdefault(key, [])
        if len(idle) >= MAX_IDLE:
            return False
        idle.append(entry)
        return True


def _reset(conn: Any, init_commands: list[str]) -> None:
    """What Django's get_new_connection sets on a connection, set again: a lender
    may have changed it (the schema editor turns foreign keys off and on)."""
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA legacy_alter_table = OFF")
    for command in init_commands:
        if command := command.strip():
            conn.execute(command)


def close_idle() -> None:
    """Close every kept connection (a test that deletes its database file)."""
    with _lock:
        entries = [entry for idle in _idle.values() for entry in idle]
        _idle.clear()
    for conn, _ in entries:
        conn.close()
