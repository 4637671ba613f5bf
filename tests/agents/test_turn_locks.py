"""A turn started while another writer holds its session: no deadlock.

On PostgreSQL, start_turn locks the user's row, then its session's. A turn's event
write holds the session's row (the UPDATE that takes the seq) and then inserts a row
naming the user (the event's sender), whose foreign key check takes a KEY SHARE lock
on the user's row. Locked FOR UPDATE, the user's row made the two wait on each other
(a burst of messages on a busy session failed with "deadlock detected"); FOR NO KEY
UPDATE lets the key check through. Runs on PostgreSQL
(test_event_writes_postgresql.py), where the row locks are.
"""

import threading
import time

import pytest
from django.db import connection, connections, transaction
from django.db.models import F

from agents.models import Run, Session
from agents.turns import executors
from agents.turns.start import start_turn

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row locks are PostgreSQL's"
    ),
]

TIMEOUT = 10


def waiting_on_a_lock() -> bool:
    """Whether some other backend of this database waits on a lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def in_a_thread(work, failures: list) -> threading.Thread:
    def run() -> None:
        try:
            work()
        except Exception as error:  # noqa: BLE001 - reported by the test
            failures.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_turn_starts_while_a_writer_holds_its_session(
    alice, demo_agents, start_session, monkeypatch
):
    monkeypatch.setattr(executors, "submit", lambda **kwargs: None)  # no turn runs
    session = Session.objects.get(pk=start_session(alice, "weather_sentiment"))
    holding, insert = threading.Event(), threading.Event()
    failures: list[Exception] = []

    def writer() -> None:
        # As event_rows.store: the session's row first, then a row naming the user.
        with transaction.atomic():
            Session.objects.filter(pk=session.pk).update(last_seq=F("last_seq") + 1)
            holding.set()
            assert insert.wait(TIMEOUT)
            Run.objects.create(session=session, user=alice, text="the writer's")

    writing = in_a_thread(writer, failures)
    assert holding.wait(TIMEOUT)
    starting = in_a_thread(
        lambda: start_turn(session=session, user=alice, text="hello"), failures
    )
    deadline = time.monotonic() + TIMEOUT
    while not waiting_on_a_lock():  # start_turn holds the user, waits for the session
        assert time.monotonic() < deadline, "start_turn never waited on the session"
        time.sleep(0.02)
    insert.set()
    writing.join(TIMEOUT)
    starting.join(TIMEOUT)

    assert failures == []
    assert sorted(Run.objects.values_list("text", flat=True)) == [
        "hello",
        "the writer's",
    ]
