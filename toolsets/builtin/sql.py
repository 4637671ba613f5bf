"""The sql toolset: read-only queries against a database an administrator names.

Policy (Django settings, read on every call):
- TOOLCRIB_BUILTIN_SQL_DATABASE_URL: the database (sqlite:///path or
  postgres://...); empty, the default, refuses every query.
- TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE: Toolcrib's own database (users, tokens,
  credentials) is refused unless this is true.
- TOOLCRIB_BUILTIN_SQL_MAX_ROWS: rows returned; more are cut and marked truncated.
- TOOLCRIB_BUILTIN_SQL_TIMEOUT: seconds a statement may run.

A query is refused unless it is one statement that starts with SELECT, WITH or
EXPLAIN and names no write (INSERT, UPDATE, DELETE, MERGE, SELECT INTO, DDL,
PRAGMA, ATTACH, COPY...). The database enforces it too: SQLite opens the file
read-only (`mode=ro`, `query_only`) behind an authorizer that permits reads only;
PostgreSQL runs each query in a READ ONLY transaction with a statement_timeout.
"""

import asyncio
import datetime
import decimal
import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dj_database_url
import psycopg
import sqlparse
from django.conf import settings
from sqlparse import tokens as T

from toolsets.builtin.base import BuiltinTool, BuiltinToolset, Refusal, text_limit

MAX_QUERY_CHARS = 20_000
MAX_CELL_CHARS = 2_000
READ_STARTS = frozenset({"SELECT", "WITH", "EXPLAIN"})
FORBIDDEN_KEYWORDS = frozenset(
    "INTO COPY PRAGMA ATTACH DETACH VACUUM GRANT REVOKE LOCK CALL LOAD NOTIFY LISTEN "
    "REINDEX CLUSTER REFRESH TRUNCATE".split()
)
SQLITE_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
)
SQLITE_LIST_TABLES = (
    "SELECT name AS table_name, type AS table_type, sql AS definition "
    "FROM sqlite_master WHERE type IN ('table', 'view') "
    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
)
POSTGRES_LIST_TABLES = (
    "SELECT c.table_schema || '.' || c.table_name AS table_name, t.table_type, "
    "c.column_name, c.data_type FROM information_schema.columns AS c "
    "JOIN information_schema.tables AS t USING (table_schema, table_name) "
    "WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') "
    "ORDER BY c.table_schema, c.table_name, c.ordinal_position"
)


class QueryRefused(Refusal):
    """A query that is not a single read."""


# Reading the statement.


def read_only_statement(query: Any) -> str:
    """The one read statement in `query`, or QueryRefused saying why not."""
    if not isinstance(query, str) or not query.strip():
        raise QueryRefused("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryRefused(f"the query is longer than {MAX_QUERY_CHARS} characters")
    if "\0" in query:
        raise QueryRefused("the query contains NUL")
    statements = [s for s in sqlparse.parse(query) if _words(s)]
    if len(statements) != 1:
        raise QueryRefused("send exactly one statement (no ';' between statements)")
    words = _words(statements[0])
    first = words[0].normalized.upper()
    if first not in READ_STARTS:
        raise QueryRefused(f"only SELECT, WITH and EXPLAIN are allowed, not {first}")
    for token in words:
        _check_token(token)
    return str(statements[0]).strip().rstrip(";").strip()


def _words(statement: sqlparse.sql.Statement) -> list[sqlparse.sql.Token]:
    return [
        t
        for t in statement.flatten()
        if not t.is_whitespace and t.ttype not in T.Comment and t.value != ";"
    ]


def _check_token(token: sqlparse.sql.Token) -> None:
    word = token.normalized.upper()
    if token.ttype in T.Keyword.DML and word != "SELECT":
        raise QueryRefused(f"{word} writes; only reads are allowed")
    if token.ttype in T.Keyword.DDL:
        raise QueryRefused(f"{word} changes the schema; only reads are allowed")
    if token.ttype in T.Keyword and word in FORBIDDEN_KEYWORDS:
        raise QueryRefused(f"{word} is not allowed in a read-only query")


# The database.


@dataclass(frozen=True)
class Database:
    engine: str
    name: str
    host: str = ""
    port: int | None = None
    user: str = ""
    password: str = field(default="", repr=False)
    options: dict[str, Any] = field(default_factory=dict)


ENGINES = {
    "django.db.backends.sqlite3": "sqlite",
    "django.db.backends.postgresql": "postgresql",
}


def configured_database() -> Database:
    """The database the sql tool may read, from settings."""
    url = settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL
    if not url:
        raise Refusal("no database is configured for the sql tool")
    try:
        config = dj_database_url.parse(url)
    except ValueError as exc:
        raise Refusal(
            "TOOLCRIB_BUILTIN_SQL_DATABASE_URL is not a database URL"
        ) from exc
    engine = ENGINES.get(config.get("ENGINE", ""))
    if engine is None:
        raise Refusal("the sql tool reads SQLite and PostgreSQL databases only")
    if engine == "sqlite" and config["NAME"] in ("", ":memory:"):
        raise Refusal("an in-memory SQLite database has nothing to read")
    if (
        is_toolcrib_database(config)
        and not settings.TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE
    ):
        raise Refusal("the configured database is Toolcrib's own; it is not readable")
    return Database(
        engine=engine,
        name=str(config["NAME"]),
        host=str(config.get("HOST") or ""),
        port=int(config["PORT"]) if config.get("PORT") else None,
        user=str(config.get("USER") or ""),
        password=str(config.get("PASSWORD") or ""),
        options=dict(config.get("OPTIONS") or {}),
    )


def is_toolcrib_database(config: dict[str, Any]) -> bool:
    """True when a parsed URL names one of Toolcrib's own databases."""
    return any(_same_database(config, own) for own in settings.DATABASES.values())


def _same_database(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.get("ENGINE") != b.get("ENGINE"):
        return False
    if a["ENGINE"] == "django.db.backends.sqlite3":
        return Path(str(a["NAME"])).resolve() == Path(str(b["NAME"])).resolve()
    local = {"", "localhost", "127.0.0.1", "::1"}
    host_a, host_b = str(a.get("HOST") or ""), str(b.get("HOST") or "")
    same_host = host_a == host_b or (host_a in local and host_b in local)
    same_port = int(a.get("PORT") or 5432) == int(b.get("PORT") or 5432)
    return same_host and same_port and a.get("NAME") == b.get("NAME")


# Running a statement.


@dataclass
class Rows:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


def _run_sqlite(db: Database, statement: str, max_rows: int, timeout: float) -> Rows:
    uri = Path(db.name).resolve().as_uri() + "?mode=ro"
    deadline = time.monotonic() + timeout
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_sqlite_authorizer)
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        cursor = conn.execute(statement)
        return _rows(cursor.description, cursor.fetchmany(max_rows + 1), max_rows)
    finally:
        conn.close()


def _sqlite_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
) -> int:
    """Reads only: SELECT, reading columns, functions, recursive CTEs."""
    if action in SQLITE_READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and arg2 != "load_extension":
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _run_postgres(db: Database, statement: str, max_rows: int, timeout: float) -> Rows:
    millis = max(1, int(timeout * 1000))
    conn = psycopg.connect(
        dbname=db.name,
        host=db.host or None,
        port=db.port,
        user=db.user or None,
        password=db.password or None,
        connect_timeout=max(1, int(timeout)),
        options=f"-c default_transaction_read_only=on -c statement_timeout={millis}",
        **db.options,
    )
    try:
        with conn.cursor() as cursor:
            cursor.execute("SET TRANSACTION READ ONLY")
            cursor.execute(f"SET LOCAL statement_timeout = {millis}")
            cursor.execute(statement)
            return _rows(cursor.description, cursor.fetchmany(max_rows + 1), max_rows)
    finally:
        conn.close()  # closing without a commit ends the transaction


RUNNERS: dict[str, Callable[[Database, str, int, float], Rows]] = {
    "sqlite": _run_sqlite,
    "postgresql": _run_postgres,
}
LIST_TABLES = {"sqlite": SQLITE_LIST_TABLES, "postgresql": POSTGRES_LIST_TABLES}


def _rows(description: Sequence[Any] | None, fetched: list[Any], max_rows: int) -> Rows:
    columns = [str(column[0]) for column in description or []]
    rows = [[json_value(v) for v in row] for row in fetched[:max_rows]]
    return Rows(columns, rows, truncated=len(fetched) > max_rows)


def json_value(value: Any) -> Any:
    """A cell as JSON: numbers, text, null; long text cut; bytes as a note."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    text, cut = text_limit(str(value), MAX_CELL_CHARS)
    return text + "..." if cut else text


async def execute(statement: str) -> dict[str, Any]:
    """Run a checked statement on the configured database, within the limits."""
    db = configured_database()
    max_rows = int(settings.TOOLCRIB_BUILTIN_SQL_MAX_ROWS)
    timeout = float(settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT)
    runner = RUNNERS[db.engine]
    try:
        result = await asyncio.wait_for(
            asyncio.to_thread(runner, db, statement, max_rows, timeout),
            timeout=timeout + 5,
        )
    except TimeoutError as exc:
        raise Refusal(f"the query ran longer than {timeout} seconds") from exc
    except (sqlite3.Error, psycopg.Error) as exc:
        raise Refusal(
            f"the database refused the query: {_reason(exc, timeout)}"
        ) from exc
    return {
        "status": "success",
        "columns": result.columns,
        "rows": result.rows,
        "row_count": len(result.rows),
        "truncated": result.truncated,
    }


def _reason(exc: Exception, timeout: float) -> str:
    message = (
        str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    )
    if message == "interrupted" or "statement timeout" in message:
        return f"it ran longer than {timeout} seconds"
    return message


async def run_query(query: str) -> dict:
    """Run a read-only SQL query (SELECT, WITH or EXPLAIN) on the team's database.

    One statement at a time; anything that writes or changes the schema is
    refused. Results are cut to the administrator's row limit.

    Args:
        query: The SQL query, e.g. "SELECT name, total FROM orders LIMIT 10".

    Returns:
        The column names, the rows (lists of values) and whether rows were cut.
    """
    return await execute(read_only_statement(query))


async def list_tables() -> dict:
    """List the tables and views of the team's database, with their columns.

    Returns:
        Rows of table name and type, with the columns (PostgreSQL) or the CREATE
        statement (SQLite).
    """
    return await execute(LIST_TABLES[configured_database().engine])


class SqlToolset(BuiltinToolset):
    """Read-only SQL queries against the database an administrator configured."""

    def __init__(self, **kwargs: Any) -> None:
        tools = [
            BuiltinTool(run_query, risk="read"),
            BuiltinTool(list_tables, risk="read"),
        ]
        super().__init__(tools, **kwargs)


toolset = SqlToolset()
