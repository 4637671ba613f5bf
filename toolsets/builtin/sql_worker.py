"""The sql tool's worker: runs one read-only query in a process of its own.

`toolsets.builtin.sql` starts this file with `python -I` for every query, writes
one JSON request on its standard input and reads one JSON answer on its standard
output. Before it connects, the worker bounds itself: its address space may grow
by `max_memory_bytes` (RLIMIT_AS), its CPU time by the timeout plus a margin
(RLIMIT_CPU), and SQLite's heap by `max_memory_bytes` (a hard heap limit, which is
per process: never set in the server). A query that asks for more fails inside
the worker, which answers `{"error": "memory"}`; if it dies instead, only the
worker dies. The server never holds more than one bounded answer.

Only the standard library and psycopg are imported (`-I` keeps the script's own
folder, where `http.py` would shadow the standard library, off sys.path), so the
worker starts in milliseconds and knows nothing of Django; it gets none of the
server's environment variables either, only the one database of its request.

Request: {"engine": "sqlite" | "postgresql", "database": {name, host, port, user,
password, options}, "statement", "limits": {max_rows, max_result_bytes,
max_cell_chars, max_memory_bytes, timeout, work_mem_kb}}.
Answer: {"columns", "rows", "truncated"}, or {"error": kind, "message"} where kind
is memory, timeout, too_large or database.
"""

import datetime
import decimal
import importlib
import itertools
import json
import math
import resource
import sqlite3
import sys
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

SQLITE_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
)
# PostgreSQL's SQLSTATEs for out_of_memory and query_canceled (the timeout).
POSTGRES_OUT_OF_MEMORY = "53200"
POSTGRES_CANCELED = "57014"
# libpq's own messages when the client cannot allocate (no SQLSTATE).
LIBPQ_OUT_OF_MEMORY = ("out of memory", "cannot allocate memory")
CPU_MARGIN_SECONDS = 5


@dataclass(frozen=True)
class Limits:
    max_rows: int
    max_result_bytes: int
    max_cell_chars: int
    max_memory_bytes: int
    timeout: float
    work_mem_kb: int


class Stopped(Exception):
    """The query did not finish; `kind` says why (memory, timeout, too_large,
    database)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# Bounding the process (the worker only).


def limit_process(limits: Limits) -> None:
    """Cap this process's address space, CPU time and SQLite heap."""
    grown = _virtual_memory_bytes() + limits.max_memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (grown, grown))
    cpu = math.ceil(limits.timeout) + CPU_MARGIN_SECONDS
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(f"PRAGMA hard_heap_limit = {int(limits.max_memory_bytes)}")


def _virtual_memory_bytes() -> int:
    """The address space the interpreter already uses (Linux), so the bound is
    what a query may add, whatever the libraries mapped."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


# Cells and rows as JSON.


def json_value(value: Any, max_chars: int) -> Any:
    """A cell as JSON: numbers, text, null; long text cut; bytes as a note."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    text = str(value)
    return text if len(text) <= max_chars else text[:max_chars] + "..."


def collect(
    description: Sequence[Any] | None, rows: Iterable[Sequence[Any]], limits: Limits
) -> dict[str, Any]:
    """Rows read one at a time, up to the row and byte limits."""
    columns = [str(column[0]) for column in description or []]
    budget = limits.max_result_bytes - _size(columns)
    if budget < 0:
        raise _too_large(limits)
    kept: list[list[Any]] = []
    for row in rows:
        if len(kept) == limits.max_rows:
            return _answer(columns, kept, truncated=True)
        values = [json_value(value, limits.max_cell_chars) for value in row]
        budget -= _size(values)
        if budget < 0 and not kept:
            raise _too_large(limits)
        if budget < 0:
            return _answer(columns, kept, truncated=True)
        kept.append(values)
    return _answer(columns, kept, truncated=False)


def _size(values: list[Any]) -> int:
    return len(json.dumps(values))  # ASCII: characters are bytes


def _answer(columns: list[str], rows: list[list[Any]], *, truncated: bool) -> dict:
    return {"columns": columns, "rows": rows, "truncated": truncated}


def _too_large(limits: Limits) -> Stopped:
    return Stopped(
        "too_large",
        f"a single row is larger than the {limits.max_result_bytes} bytes a result "
        "may hold; select fewer or shorter columns",
    )


# SQLite.


def run_sqlite(db: Mapping[str, Any], statement: str, limits: Limits) -> dict:
    """The statement's rows, read from a read-only connection to the file."""
    try:
        return _read_sqlite(db, statement, limits)
    except sqlite3.Error as exc:
        raise sqlite_stop(exc) from exc


def _read_sqlite(db: Mapping[str, Any], statement: str, limits: Limits) -> dict:
    uri = Path(db["name"]).resolve().as_uri() + "?mode=ro"
    deadline = time.monotonic() + limits.timeout
    with closing(sqlite3.connect(uri, uri=True, timeout=limits.timeout)) as conn:
        conn.execute("PRAGMA query_only = ON")
        # Sorts and temporary tables stay in memory, under the heap limit, and
        # never fill the disk.
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.set_authorizer(sqlite_authorizer)
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        cursor = conn.execute(statement)
        return collect(cursor.description, cursor, limits)


def sqlite_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
) -> int:
    """Reads only: SELECT, reading columns, functions, recursive CTEs."""
    if action in SQLITE_READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and arg2 != "load_extension":
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def sqlite_stop(exc: sqlite3.Error) -> Stopped:
    """Why SQLite stopped a query: a limit it reached, or its refusal."""
    if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_TOOBIG:
        return Stopped("memory", _first_line(exc))
    if str(exc) == "interrupted":
        return Stopped("timeout", _first_line(exc))
    return Stopped("database", _first_line(exc))


# PostgreSQL.


def run_postgres(db: Mapping[str, Any], statement: str, limits: Limits) -> dict:
    """The statement's rows, streamed from a READ ONLY transaction."""
    try:
        return _read_postgres(db, statement, limits)
    except _psycopg().Error as exc:
        raise postgres_stop(exc) from exc


def _psycopg() -> ModuleType:
    """psycopg, imported by a PostgreSQL worker only (it takes ~0.15 s)."""
    return importlib.import_module("psycopg")


def _read_postgres(db: Mapping[str, Any], statement: str, limits: Limits) -> dict:
    millis = max(1, int(limits.timeout * 1000))
    settings = (
        f"-c default_transaction_read_only=on -c statement_timeout={millis} "
        f"-c work_mem={limits.work_mem_kb}kB"
    )
    conn = _psycopg().connect(
        dbname=db["name"],
        host=db["host"] or None,
        port=db["port"],
        user=db["user"] or None,
        password=db["password"] or None,
        connect_timeout=max(1, int(limits.timeout)),
        options=settings,
        **db["options"],
    )
    with closing(conn), conn.cursor() as cursor:  # closed without a commit
        cursor.execute("SET TRANSACTION READ ONLY")
        cursor.execute(f"SET LOCAL statement_timeout = {millis}")
        cursor.execute(f"SET LOCAL work_mem = '{limits.work_mem_kb}kB'")
        # Rows one at a time: the client never holds more than it returns. The
        # description is known once the first row (or the end) has arrived.
        with closing(cursor.stream(statement)) as stream:
            first = next(stream, None)
            rows = stream if first is None else itertools.chain([first], stream)
            return collect(cursor.description, rows, limits)


def postgres_stop(exc: Exception) -> Stopped:
    """Why PostgreSQL (or libpq) stopped a query: a limit, or its refusal."""
    message, code = _first_line(exc), getattr(exc, "sqlstate", None)
    if code == POSTGRES_OUT_OF_MEMORY:
        return Stopped("memory", message)
    if any(words in message for words in LIBPQ_OUT_OF_MEMORY):
        return Stopped("memory", message)
    if code == POSTGRES_CANCELED:
        return Stopped("timeout", message)
    return Stopped("database", message)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# One request, one answer.

RUNNERS = {"sqlite": run_sqlite, "postgresql": run_postgres}


def answer(request: Mapping[str, Any]) -> dict[str, Any]:
    """The rows a request asks for, or the reason the query stopped."""
    limits = Limits(**request["limits"])
    runner = RUNNERS[request["engine"]]
    try:
        return runner(request["database"], request["statement"], limits)
    except Stopped as exc:
        return {"error": exc.kind, "message": str(exc)}
    except MemoryError:
        return {"error": "memory", "message": "out of memory"}


def main() -> None:
    """Read a request, bound the process, answer."""
    request = json.load(sys.stdin)
    if request["engine"] == "postgresql":
        _psycopg()  # mapped before the bound is measured, like the interpreter
    limit_process(Limits(**request["limits"]))
    json.dump(answer(request), sys.stdout)


if __name__ == "__main__":
    main()
