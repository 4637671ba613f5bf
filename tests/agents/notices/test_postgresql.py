"""The link's decision and the sender's claim again on PostgreSQL (production's
database), where row locks are real: the suite's own database is SQLite."""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

HERE = Path(__file__).parent
FILES = [
    HERE / "test_links.py",
    HERE / "test_webhooks.py",
    HERE.parent.parent / "security" / "test_notice_links.py",
]


def test_links_and_sending_hold_on_postgresql(tmp_path):
    summary = pytest_on_postgresql(tmp_path, *map(str, FILES))

    assert " skipped" not in summary, summary
