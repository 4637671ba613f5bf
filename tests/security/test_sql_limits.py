"""The sql tool bounds a query's memory: a query that would allocate hundreds of MB
is refused, and the server process does not grow (issue 14, medium 5).

`SELECT length(randomblob(900000000))` allocated 1.2 GB in the server process. The
attacks below ask for about 300 MB, enough to see in the test process's peak RSS
(VmHWM) on a build that runs queries in-process, small enough not to hurt the
machine.
"""

import resource
import sqlite3

import psycopg
import pytest

from tests.integration import services
from tests.toolsets.builtin.adk import call_tool
from toolsets.builtin.sql import toolset

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db

N = 300_000_000
MAX_MEMORY_MB = 64
# The test process may grow this much while the tool runs (a turn's own objects).
RSS_BOUND_KB = 40 * 1024

SQLITE_ATTACKS = [
    f"SELECT length(randomblob({N}))",
    f"SELECT randomblob({N}) AS blob",
    f"SELECT length(zeroblob({N}) || x'00')",
    f"SELECT zeroblob({N}) AS blob",
    f"SELECT length(printf('%.*c', {N}, 'x'))",
    f"SELECT length(hex(randomblob({N // 2})))",
    f"SELECT length(replace(hex(zeroblob({N // 4})), '0', 'ab'))",
    # A recursive CTE doubling a string up to 2^28 characters.
    "WITH RECURSIVE r(i, s) AS (SELECT 1, 'x' UNION ALL "
    "SELECT i + 1, s || s FROM r WHERE i <= 28) SELECT max(length(s)) FROM r",
    # A cross join of 600 x 600 rows aggregated into one 360 MB string.
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600) "
    "SELECT length(group_concat(hex(randomblob(500)), '')) FROM n AS a, n AS b",
]


@pytest.fixture
def shop(tmp_path, settings):
    """A small SQLite database, configured with a 64 MB memory bound per query."""
    path = tmp_path / "shop.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)")
    conn.executemany("INSERT INTO orders (item) VALUES (?)", [("a",), ("b",)])
    conn.commit()
    conn.close()
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = f"sqlite:///{path}"
    settings.TOOLCRIB_BUILTIN_SQL_MAX_MEMORY_MB = MAX_MEMORY_MB
    settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT = 20
    return path


@pytest.fixture
def postgres(settings):
    """The machine's PostgreSQL as the sql tool's database, 64 MB per query."""
    try:
        psycopg.connect(
            services.POSTGRES_URL, connect_timeout=services.CONNECT_TIMEOUT
        ).close()
    except psycopg.OperationalError as error:
        services.unavailable(f"PostgreSQL at {services.POSTGRES_URL}", error)
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = services.POSTGRES_URL
    settings.TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE = True
    settings.TOOLCRIB_BUILTIN_SQL_MAX_MEMORY_MB = MAX_MEMORY_MB
    settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT = 20


def reset_peak_rss() -> None:
    """Start VmHWM again from the current RSS (Linux: clear_refs 5)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def peak_rss_kb() -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1])


async def query_and_growth(query: str) -> tuple[dict, int]:
    """The tool's answer to `query` in a real turn, and how much the peak RSS grew."""
    await call_tool([toolset], "run_query", query="SELECT 1")  # warm the turn's code
    reset_peak_rss()
    before = peak_rss_kb()
    response = await call_tool([toolset], "run_query", query=query)
    return response, peak_rss_kb() - before


@pytest.mark.parametrize("query", SQLITE_ATTACKS)
async def test_a_huge_sqlite_allocation_is_refused_outside_the_server(shop, query):
    response, growth = await query_and_growth(query)

    assert response["status"] == "error"
    assert (
        "needs more memory than the sql tool allows (64 MB)"
        in (response["error_message"])
    )
    assert growth < RSS_BOUND_KB
    after = await call_tool([toolset], "run_query", query="SELECT count(*) FROM orders")
    assert after["rows"] == [[2]]


async def test_a_huge_postgres_value_is_refused_outside_the_server(postgres):
    response, growth = await query_and_growth(f"SELECT repeat('x', {N}) AS big")

    assert response["status"] == "error"
    assert (
        "needs more memory than the sql tool allows (64 MB)"
        in (response["error_message"])
    )
    assert growth < RSS_BOUND_KB
    after = await call_tool([toolset], "run_query", query="SELECT 6 * 7 AS answer")
    assert after["rows"] == [[42]]


async def test_millions_of_postgres_rows_are_not_all_fetched(postgres, settings):
    settings.TOOLCRIB_BUILTIN_SQL_MAX_ROWS = 3
    response, growth = await query_and_growth(
        "SELECT g FROM generate_series(1, 10000000) AS g"
    )

    assert response["rows"] == [[1], [2], [3]]
    assert response["truncated"] is True
    assert growth < RSS_BOUND_KB


async def test_the_server_process_keeps_its_own_limits(shop):
    """Limits apply to the query's worker: the server's own SQLite is not capped."""
    await call_tool([toolset], "run_query", query=SQLITE_ATTACKS[0])

    assert resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY
    own = sqlite3.connect(":memory:")
    assert own.execute("PRAGMA hard_heap_limit").fetchone() == (0,)
    own.close()
