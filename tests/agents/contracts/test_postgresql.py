"""The contract tests again, with the Django services on PostgreSQL.

A run of its own (tests/postgresql_run.py: pytest in a child process with
DATABASE_URL on the machine's PostgreSQL): the suite's own database is SQLite, and
the services read the configured one.
"""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

HERE = Path(__file__).parent


def test_the_contracts_hold_on_postgresql(tmp_path):
    pytest_on_postgresql(
        tmp_path,
        # Tables from the models, as the migrations leave a fresh database
        # (their RunPython steps only move old rows): half the run's time.
        "--no-migrations",
        f"--ignore={__file__}",
        str(HERE),
    )
