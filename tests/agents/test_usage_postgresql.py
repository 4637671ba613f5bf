"""Usage and budgets on PostgreSQL, where the suite's own database is SQLite: staff's
days are summed in the database there (agents/usage.py), cut in TIME_ZONE by it."""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

TESTS = Path(__file__).parents[1]


def test_usage_holds_on_postgresql(tmp_path):
    pytest_on_postgresql(
        tmp_path,
        str(TESTS / "agents" / "test_usage.py"),
        str(TESTS / "agents" / "test_usage_periods.py"),
    )
