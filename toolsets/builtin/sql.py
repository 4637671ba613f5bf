"""The sql toolset: read-only queries against a database an administrator names.

Policy (Django settings, read on every call):
- TOOLCRIB_BUILTIN_SQL_DATABASE_URL: the database (sqlite:///path or
  postgres://...); empty, the default, refuses every query.
- TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE: Toolcrib's own database (users, tokens,
  credentials) is refused unless this is true.
- TOOLCRIB_BUILTIN_SQL_MAX_ROWS: rows returned; more are cut and marked truncated.
- TOOLCRIB_BUILTIN_SQL_MAX_RESULT_BYTES: bytes of rows returned (as JSON); more
  rows are cut the same way.
- TOOLCRIB_BUILTIN_SQL_TIMEOUT: seconds a statement may run.
- TOOLCRIB_BUILTIN_SQL_MAX_MEMORY_MB: memory a query may use in its worker.
- TOOLCRIB_BUILTIN_SQL_WORK_MEM_MB: PostgreSQL's work_mem for the query.

A query is refused unless it is one statement that starts with SELECT, WITH or
EXPLAIN and names no write (INSERT, UPDATE, DELETE, MERGE, SELECT INTO, DDL,
PRAGMA, ATTACH, COPY...) and no set_config (which would lift the limits). The
database enforces it too: SQLite opens the file read-only (`mode=ro`,
`query_only`) behind an authorizer that permits reads only; PostgreSQL runs each
query in a READ ONLY transaction with a statement_timeout and a work_mem.

Each query runs in a worker process of its own (toolsets.builtin.sql_worker),
bounded in memory and CPU, and killed past the timeout: a query that allocates
without end stops the worker, never the server.
"""

import asyncio
import json
import logging
import re
import signal
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dj_database_url
import sqlparse
from django.conf import settings
from sqlparse import tokens as T

from toolsets.builtin import sql_worker
from toolsets.builtin.base import BuiltinTool, BuiltinToolset
from toolsets.refusals import Refusal

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 20_000
MAX_CELL_CHARS = 2_000
READ_STARTS = frozenset({"SELECT", "WITH", "EXPLAIN"})
FORBIDDEN_KEYWORDS = frozenset(
    "INTO COPY PRAGMA ATTACH DETACH VACUUM GRANT REVOKE LOCK CALL LOAD NOTIFY LISTEN "
    "REINDEX CLUSTER REFRESH TRUNCATE".split()
)
# Functions that change the session's settings, and so the limits (PostgreSQL).
FORBIDDEN_FUNCTIONS = frozenset({"set_config"})
UNICODE_ESCAPE = re.compile(r"\bU&[\"']", re.IGNORECASE)
MIB = 1024 * 1024
WORKER_PATH = str(Path(sql_worker.__file__).resolve())
# Past the timeout, the worker's start and its connection get this long before it
# is killed (the worker stops its own query at the timeout).
WORKER_GRACE_SECONDS = 5
# An answer is its rows plus the column names and the JSON around them.
ANSWER_OVERHEAD_BYTES = 65536
READ_CHUNK = 65536
# None of the server's variables (keys, tokens): the database comes in the request.
WORKER_ENV = {"LANG": "C.UTF-8"}
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
LIST_TABLES = {"sqlite": SQLITE_LIST_TABLES, "postgresql": POSTGRES_LIST_TABLES}


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
    if UNICODE_ESCAPE.search(query):
        # U&"..." spells a name in escapes, hiding it from the checks below.
        raise QueryRefused("Unicode escapes (U&) are not allowed")
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
    name = token.value.strip('"').lower()
    is_name = token.ttype in T.Name or token.ttype in T.String.Symbol
    if is_name and name in FORBIDDEN_FUNCTIONS:
        raise QueryRefused(f"{name} would change the query's limits; not allowed")


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
    "project.patches.sqlite_pool": "sqlite",  # Toolcrib's SQLite, connections kept
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
    kind = ENGINES.get(a.get("ENGINE", ""))
    if kind is None or kind != ENGINES.get(b.get("ENGINE", "")):
        return False
    if kind == "sqlite":
        return Path(str(a["NAME"])).resolve() == Path(str(b["NAME"])).resolve()
    local = {"", "localhost", "127.0.0.1", "::1"}
    host_a, host_b = str(a.get("HOST") or ""), str(b.get("HOST") or "")
    same_host = host_a == host_b or (host_a in local and host_b in local)
    same_port = int(a.get("PORT") or 5432) == int(b.get("PORT") or 5432)
    return same_host and same_port and a.get("NAME") == b.get("NAME")


# Running a statement, in a worker process.


def worker_request(db: Database, statement: str) -> dict[str, Any]:
    """What the worker (toolsets.builtin.sql_worker) is asked, limits from settings."""
    limits = sql_worker.Limits(
        max_rows=int(settings.TOOLCRIB_BUILTIN_SQL_MAX_ROWS),
        max_result_bytes=int(settings.TOOLCRIB_BUILTIN_SQL_MAX_RESULT_BYTES),
        max_cell_chars=MAX_CELL_CHARS,
        max_memory_bytes=int(settings.TOOLCRIB_BUILTIN_SQL_MAX_MEMORY_MB) * MIB,
        timeout=float(settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT),
        work_mem_kb=int(settings.TOOLCRIB_BUILTIN_SQL_WORK_MEM_MB) * 1024,
    )
    return {
        "engine": db.engine,
        "database": asdict(db),
        "statement": statement,
        "limits": asdict(limits),
    }


async def execute(statement: str) -> dict[str, Any]:
    """Run a checked statement on the configured database, within the limits."""
    request = worker_request(configured_database(), statement)
    answer = await ask_worker(request)
    if "error" in answer:
        raise Refusal(_refusal_text(answer, request["limits"]))
    return {
        "status": "success",
        "columns": answer["columns"],
        "rows": answer["rows"],
        "row_count": len(answer["rows"]),
        "truncated": answer["truncated"],
    }


def _refusal_text(answer: dict[str, Any], limits: dict[str, Any]) -> str:
    kind, message = answer["error"], answer["message"]
    if kind == "memory":
        megabytes = limits["max_memory_bytes"] // MIB
        return (
            f"the query needs more memory than the sql tool allows ({megabytes} MB); "
            "ask for less (smaller values, fewer rows, a LIMIT)"
        )
    if kind == "timeout":
        return f"the query ran longer than {limits['timeout']} seconds"
    if kind == "too_large":
        return message
    return f"the database refused the query: {message}"


async def ask_worker(request: dict[str, Any]) -> dict[str, Any]:
    """The worker's answer to `request`; the worker is killed if it overruns."""
    timeout = request["limits"]["timeout"]
    limit = request["limits"]["max_result_bytes"] + ANSWER_OVERHEAD_BYTES
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",  # no PYTHON* variables, no user site, not the script's folder
        WORKER_PATH,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=WORKER_ENV,
    )
    try:
        async with asyncio.timeout(timeout + WORKER_GRACE_SECONDS):
            output = await _exchange(worker, json.dumps(request).encode(), limit)
    except TimeoutError as exc:
        raise Refusal(f"the query ran longer than {timeout} seconds") from exc
    finally:
        if worker.returncode is None:
            worker.kill()
            await worker.wait()
    return _parsed(output, worker.returncode)


async def _exchange(
    worker: asyncio.subprocess.Process, request: bytes, limit: int
) -> bytes:
    """Send the request, read at most `limit` bytes of answer, wait for the end."""
    assert worker.stdin is not None and worker.stdout is not None
    try:
        worker.stdin.write(request)
        await worker.stdin.drain()
        worker.stdin.close()
    except ConnectionError:  # the worker died at start: its exit code says so
        logger.warning("sql worker closed its input early")
    output = bytearray()
    while chunk := await worker.stdout.read(READ_CHUNK):
        output += chunk
        if len(output) > limit:
            raise Refusal(f"the query's answer is larger than {limit} bytes")
    await worker.wait()
    return bytes(output)


def _parsed(output: bytes, returncode: int | None) -> dict[str, Any]:
    try:
        answer = json.loads(output)
    except ValueError:
        answer = None
    if returncode == 0 and isinstance(answer, dict):
        return answer
    logger.warning("sql worker stopped without an answer returncode=%s", returncode)
    if returncode == -signal.SIGXCPU:
        raise Refusal("the query used more CPU time than its timeout allows")
    raise Refusal(f"the query stopped its worker without an answer (exit {returncode})")


async def run_query(query: str) -> dict:
    """Run a read-only SQL query (SELECT, WITH or EXPLAIN) on the team's database.

    One statement at a time; anything that writes or changes the schema is
    refused. Results are cut to the administrator's row and size limits, and a
    query that needs too much memory or time is refused: ask for less.

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

    # A new catalog row is granted only: it reads a team's database (issue 14).
    catalog_defaults = {"default_policy": "granted_only"}

    def __init__(self, **kwargs: Any) -> None:
        tools = [
            BuiltinTool(run_query, risk="read"),
            BuiltinTool(list_tables, risk="read"),
        ]
        super().__init__(tools, **kwargs)


toolset = SqlToolset()
