"""agents.retention again on PostgreSQL (production's database), where the suite's
own is SQLite: row locks, the lease's UPDATE and threads at once there."""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

HERE = Path(__file__).parent


def test_retention_holds_on_postgresql(tmp_path):
    summary = pytest_on_postgresql(
        tmp_path,
        "--no-migrations",
        str(HERE / "test_retention.py"),
        str(HERE / "test_retention_threads.py"),
    )

    assert " skipped" not in summary, summary
