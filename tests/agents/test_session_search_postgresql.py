"""Finding sessions again, on PostgreSQL: its full-text search, its GIN index and
migration 0013, where the suite's own database is SQLite.

A run of its own (tests/postgresql_run.py), with the migrations: they make the index.
"""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

TESTS = Path(__file__).parents[1]
FILES = [
    TESTS / "agents" / "api" / "test_find_sessions.py",
    TESTS / "agents" / "test_search.py",
    TESTS / "agents" / "test_session_titles_migration.py",
    TESTS / "security" / "test_session_ownership.py",
]


def test_finding_sessions_holds_on_postgresql(tmp_path):
    summary = pytest_on_postgresql(tmp_path, *map(str, FILES))

    assert " skipped" not in summary, summary  # the index test ran, on PostgreSQL
