"""The Overview's aggregates again, on PostgreSQL: its percentiles and buckets are
SQL of their own (window functions, hour truncation), which SQLite and PostgreSQL
must answer alike.

A run of its own (tests/postgresql_run.py: pytest in a child process with
DATABASE_URL on the machine's PostgreSQL).
"""

from pathlib import Path

import pytest

from tests.postgresql_run import pytest_on_postgresql

HERE = Path(__file__).parent
pytestmark = pytest.mark.django_db  # the toolsets conftest resets access


def test_the_overview_is_the_same_on_postgresql(tmp_path):
    pytest_on_postgresql(
        tmp_path,
        "--no-migrations",
        str(HERE / "test_overview.py"),
        str(HERE / "test_overview_periods.py"),
        timeout=300,
    )
