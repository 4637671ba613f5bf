"""Process-global state under many threads, again on PostgreSQL (production's
database), where the suite's own database is SQLite: each file below drives a
cache, a compiled statement or a pool from many threads at once."""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

HERE = Path(__file__).parent
TESTS = HERE.parent
FILES = [
    HERE / "patches" / "test_prepared_threads.py",
    HERE / "patches" / "test_rows_threads.py",
    TESTS / "agents" / "adk" / "test_builder_threads.py",
    TESTS / "agents" / "notices" / "test_sending_threads.py",
    TESTS / "agents" / "turns" / "test_executors_threads.py",
    TESTS / "agents" / "test_usage_totals_threads.py",
    TESTS / "agents" / "test_model_grants_threads.py",
    TESTS / "toolsets" / "test_call_totals_threads.py",
    TESTS / "toolsets" / "test_access_threads.py",
    TESTS / "toolsets" / "test_activation_threads.py",
    TESTS / "toolsets" / "test_sso_recheck_threads.py",
    TESTS / "toolsets" / "imports" / "test_imports_threads.py",
]


def test_process_global_state_holds_under_threads_on_postgresql(tmp_path):
    summary = pytest_on_postgresql(tmp_path, "--no-migrations", *map(str, FILES))

    assert " skipped" not in summary, summary  # every test ran, on PostgreSQL
