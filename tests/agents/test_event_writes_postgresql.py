"""Storing events, and the SQL a turn costs, on PostgreSQL (production's database),
where the suite's own database is SQLite: there an event is stored in one statement
(agents.adk.event_rows), a path SQLite never takes.

A run of its own (tests/postgresql_run.py) of the session service's tests (seqs,
stale copies, retried appends, concurrent writers), of test_turn_queries.py,
which holds the counts of both databases, of test_turn_locks.py (a turn started
while an event write holds its session: no deadlock), of test_queue_race.py (a queued
turn cancelled while a worker claims it), and of project.patches.rows' tests
(many rows in one statement of an array a column, a path SQLite never takes).
"""

from pathlib import Path

from tests.postgresql_run import pytest_on_postgresql

HERE = Path(__file__).parent
FILES = [
    HERE / "adk" / "test_sessions.py",
    HERE / "test_turn_queries.py",
    HERE / "test_turn_locks.py",
    HERE / "test_queue_race.py",
    HERE.parent / "project" / "patches" / "test_rows.py",
]


def test_event_writes_hold_on_postgresql(tmp_path):
    summary = pytest_on_postgresql(tmp_path, "--no-migrations", *map(str, FILES))

    assert " skipped" not in summary, summary  # every test ran, on PostgreSQL
