import sqlite3

import psycopg
import pytest

from tests.integration import services
from tests.toolsets.builtin.adk import call_tool
from toolsets.builtin import sql, sql_worker
from toolsets.builtin.sql import QueryRefused, read_only_statement, run_query, toolset
from toolsets.refusals import Refusal

pytestmark = pytest.mark.django_db  # tests/toolsets/conftest.py needs the db


@pytest.fixture
def shop(tmp_path, settings):
    """A SQLite database of orders, configured as the sql tool's database."""
    path = tmp_path / "shop.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT, total REAL)")
    conn.executemany(
        "INSERT INTO orders (item, total) VALUES (?, ?)",
        [(f"item{i}", i * 1.5) for i in range(1, 11)],
    )
    conn.commit()
    conn.close()
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = f"sqlite:///{path}"
    settings.TOOLCRIB_BUILTIN_SQL_MAX_ROWS = 5
    settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT = 2
    return path


def worker_answer(statement: str) -> dict:
    """The worker's answer, computed in this process, past the parser's checks."""
    request = sql.worker_request(sql.configured_database(), statement)
    return sql_worker.answer(request)


def count_orders(path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM orders").fetchone()[0]
    finally:
        conn.close()


async def test_select_through_a_runner(shop):
    response = await call_tool(
        [toolset], "run_query", query="SELECT item, total FROM orders WHERE id <= 2"
    )
    assert response == {
        "status": "success",
        "columns": ["item", "total"],
        "rows": [["item1", 1.5], ["item2", 3.0]],
        "row_count": 2,
        "truncated": False,
    }


async def test_rows_past_the_limit_are_cut(shop):
    response = await run_query("SELECT id FROM orders ORDER BY id")
    assert response["rows"] == [[1], [2], [3], [4], [5]]
    assert response["truncated"] is True


async def test_rows_past_the_byte_limit_are_cut(shop, settings):
    settings.TOOLCRIB_BUILTIN_SQL_MAX_RESULT_BYTES = 40  # ["item"] and 3 rows
    response = await run_query("SELECT item FROM orders ORDER BY id")
    assert response["rows"] == [["item1"], ["item2"], ["item3"]]
    assert response["truncated"] is True


async def test_a_row_larger_than_the_byte_limit_is_refused(shop, settings):
    settings.TOOLCRIB_BUILTIN_SQL_MAX_RESULT_BYTES = 500
    response = await call_tool(
        [toolset], "run_query", query="SELECT printf('%.*c', 1000, 'x') AS wide"
    )
    assert response["error_message"] == (
        "a single row is larger than the 500 bytes a result may hold; "
        "select fewer or shorter columns"
    )


@pytest.mark.parametrize(
    "query",
    [
        "WITH big AS (SELECT * FROM orders WHERE total > 10) SELECT count(*) FROM big",
        "EXPLAIN QUERY PLAN SELECT * FROM orders WHERE id = 1",
        "select count(*) from orders; -- one statement, a trailing comment",
        "/* hello */ SELECT 'insert into orders' AS text",
    ],
)
async def test_reads_are_allowed(shop, query):
    response = await run_query(query)
    assert response["status"] == "success"


async def test_list_tables_shows_the_schema(shop):
    response = await call_tool([toolset], "list_tables")
    assert response["rows"][0][:2] == ["orders", "table"]
    assert "total REAL" in response["rows"][0][2]


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("INSERT INTO orders (item) VALUES ('x')", "only SELECT"),
        ("UPDATE orders SET total = 0", "only SELECT"),
        ("DELETE FROM orders", "only SELECT"),
        ("DROP TABLE orders", "only SELECT"),
        ("CREATE TABLE evil (a int)", "only SELECT"),
        ("ALTER TABLE orders ADD COLUMN x int", "only SELECT"),
        ("PRAGMA writable_schema = 1", "only SELECT"),
        ("ATTACH DATABASE '/tmp/x.db' AS x", "only SELECT"),
        ("SELECT 1; DROP TABLE orders", "exactly one statement"),
        ("WITH gone AS (DELETE FROM orders RETURNING *) SELECT * FROM gone", "DELETE"),
        ("SELECT * INTO copy FROM orders", "INTO"),
        ("EXPLAIN ANALYZE DELETE FROM orders", "DELETE"),
        ("SELECT * FROM orders FOR UPDATE", "UPDATE"),
        ("SELECT set_config('work_mem', '1GB', true)", "set_config"),
        ("SELECT pg_catalog.\"set_config\"('work_mem', '1GB', true)", "set_config"),
        ("SELECT U&\"set\\005fconfig\"('work_mem', '1GB', true)", "Unicode"),
        ("", "empty"),
    ],
)
async def test_writes_and_ddl_are_refused(shop, query, reason):
    response = await call_tool([toolset], "run_query", query=query)
    assert response["status"] == "error"
    assert reason in response["error_message"]
    assert count_orders(shop) == 10


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO orders (item) VALUES ('x')",
        "DELETE FROM orders",
        "DROP TABLE orders",
    ],
)
async def test_the_database_itself_refuses_writes(shop, statement):
    """Past the parser, SQLite is opened read-only behind a read-only authorizer."""
    answer = worker_answer(statement)
    assert answer["error"] == "database"
    assert "not authorized" in answer["message"]
    assert count_orders(shop) == 10


async def test_a_long_query_times_out(shop, settings):
    settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT = 0.2
    forever = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT count(*) FROM n"
    )
    with pytest.raises(Refusal, match="ran longer than 0.2 seconds"):
        await run_query(forever)


async def test_nothing_is_queried_until_an_admin_sets_a_database(settings):
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = ""
    response = await call_tool([toolset], "run_query", query="SELECT 1")
    assert response["error_message"] == "no database is configured for the sql tool"


def own_database_url(config: dict) -> str:
    """A URL naming the database Django's `config` points at, whatever its vendor."""
    if sql.ENGINES.get(config["ENGINE"]) == "sqlite":
        return f"sqlite:///{config['NAME']}"
    user = config.get("USER") or ""
    host = config.get("HOST") or "localhost"
    port = config.get("PORT") or 5432
    return f"postgres://{user}@{host}:{port}/{config['NAME']}"


def test_toolcribs_own_database_is_refused_unless_allowed(settings):
    own = settings.DATABASES["default"]
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = own_database_url(own)
    with pytest.raises(Refusal, match="Toolcrib's own"):
        sql.configured_database()
    settings.TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE = True
    assert sql.configured_database().name == str(own["NAME"])


def test_a_missing_database_file_is_not_created(tmp_path, settings):
    path = tmp_path / "absent.sqlite3"
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = f"sqlite:///{path}"
    answer = worker_answer("SELECT 1")
    assert answer == {"error": "database", "message": "unable to open database file"}
    assert not path.exists()


def test_read_only_statement_strips_the_trailing_semicolon():
    assert read_only_statement("  SELECT 1 ;  ") == "SELECT 1"


def test_a_nul_byte_is_refused():
    with pytest.raises(QueryRefused, match="NUL"):
        read_only_statement("SELECT 1\0; DROP TABLE orders")


# PostgreSQL: the machine's (TOOLCRIB_TEST_POSTGRES_URL to name another). Locally a
# missing server skips these; on CI (TOOLCRIB_REQUIRE_SERVICES=1) it is an error.
@pytest.fixture
def postgres_url() -> str:
    try:
        psycopg.connect(
            services.POSTGRES_URL, connect_timeout=services.CONNECT_TIMEOUT
        ).close()
    except psycopg.OperationalError as error:
        services.unavailable(f"PostgreSQL at {services.POSTGRES_URL}", error)
    return services.POSTGRES_URL


async def test_postgres_reads_in_a_read_only_transaction(settings, postgres_url):
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = postgres_url
    settings.TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE = True
    response = await run_query("SELECT current_setting('transaction_read_only') AS ro")
    assert response["rows"] == [["on"]]
    answer = worker_answer("CREATE TABLE toolcrib_sql_probe (a int)")
    assert answer["error"] == "database"
    assert "read-only transaction" in answer["message"]


async def test_postgres_statement_timeout(settings, postgres_url):
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = postgres_url
    settings.TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE = True
    settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT = 0.2
    with pytest.raises(Refusal, match="ran longer than 0.2 seconds"):
        await run_query("SELECT pg_sleep(2)")


async def test_postgres_runs_with_the_configured_work_mem_and_timeout(
    settings, postgres_url
):
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = postgres_url
    settings.TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE = True
    settings.TOOLCRIB_BUILTIN_SQL_WORK_MEM_MB = 2
    settings.TOOLCRIB_BUILTIN_SQL_TIMEOUT = 3
    response = await run_query(
        "SELECT current_setting('work_mem') AS work_mem, "
        "current_setting('statement_timeout') AS statement_timeout"
    )
    assert response["rows"] == [["2MB", "3s"]]


async def test_a_postgres_sort_past_work_mem_goes_to_disk(settings, postgres_url):
    """work_mem bounds the server's memory for each sort: a bigger one spills."""
    settings.TOOLCRIB_BUILTIN_SQL_DATABASE_URL = postgres_url
    settings.TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE = True
    settings.TOOLCRIB_BUILTIN_SQL_WORK_MEM_MB = 1
    response = await run_query(
        "EXPLAIN ANALYZE SELECT g FROM generate_series(1, 300000) AS g ORDER BY g DESC"
    )
    plan = "\n".join(row[0] for row in response["rows"])
    assert "Sort Method: external merge" in plan
