"""The admin's lists again on PostgreSQL (production's database), where the
suite's own is SQLite: the same queries a page, and an unfiltered list counted by
the planner's estimate."""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

HERE = Path(__file__).parent


def test_the_admin_lists_hold_on_postgresql(tmp_path):
    summary = pytest_on_postgresql(
        tmp_path,
        str(HERE / "test_admin_lists.py"),
        "-k",
        "not pages_along_an_index",  # SQLite's planner
    )

    assert " skipped" not in summary, summary
