"""A queued turn cancelled while a worker claims it: exactly one of them wins.

The claim (agents.turns.queue) and the queue's cancel (agents.turns.cancel) both
change the Run's row only while it is queued, under its row lock: a cancel that
wins leaves the claim nothing (the turn never runs), a claim that wins leaves a
running turn the cancel does not end behind the user's back. Runs on PostgreSQL
(test_event_writes_postgresql.py), where the row locks are.
"""

import threading

import pytest
from django.db import connection, transaction

from agents.models import Event, Run, Session
from agents.turns import cancel, executors, queue
from tests.agents.test_turn_locks import TIMEOUT, in_a_thread, waiting_on_a_lock

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row locks are PostgreSQL's"
    ),
]


@pytest.fixture
def queued(alice, demo_agents, start_session, monkeypatch) -> Run:
    monkeypatch.setattr(executors, "submit", lambda **kwargs: None)  # no turn runs
    session = Session.objects.get(pk=start_session(alice, "weather_sentiment"))
    return Run.objects.create(session=session, user=alice, text="waiting")


def wait_until_blocked() -> None:
    for _ in range(int(TIMEOUT / 0.02)):
        if waiting_on_a_lock():
            return
        threading.Event().wait(0.02)
    raise AssertionError("nobody waited on the run's row")


def finished_events(run: Run) -> int:
    return Event.objects.filter(session=run.session, kind="run_finished").count()


def test_a_cancel_that_locks_first_leaves_the_claim_nothing(queued, monkeypatch):
    locked, go = threading.Event(), threading.Event()
    counted = cancel.count_ended_runs

    def slow_count(runs) -> None:  # inside the cancel's transaction
        counted(runs)
        locked.set()
        assert go.wait(TIMEOUT)

    monkeypatch.setattr(cancel, "count_ended_runs", slow_count)
    failures: list[Exception] = []
    cancelled: list[list[Run]] = []
    cancelling = in_a_thread(
        lambda: cancelled.append(cancel.cancel_queue(session=queued.session)),
        failures,
    )
    assert locked.wait(TIMEOUT)
    claims: list[bool] = []
    claiming = in_a_thread(
        lambda: claims.append(queue.claim_if_first(queued)), failures
    )
    wait_until_blocked()  # the claim waits on the row the cancel holds
    go.set()
    cancelling.join(TIMEOUT)
    claiming.join(TIMEOUT)

    assert failures == []
    assert claims == [False]
    assert [run.pk for run in cancelled[0]] == [queued.pk]
    assert Run.objects.get(pk=queued.pk).status == Run.Status.CANCELLED
    assert finished_events(queued) == 1


def test_a_claim_that_locks_first_keeps_its_turn(queued):
    claimed, go = threading.Event(), threading.Event()
    failures: list[Exception] = []

    def claim() -> None:
        with transaction.atomic():
            assert queue.claim_if_first(queued)
            claimed.set()
            assert go.wait(TIMEOUT)

    claiming = in_a_thread(claim, failures)
    assert claimed.wait(TIMEOUT)
    cancelled: list[list[Run]] = []
    cancelling = in_a_thread(
        lambda: cancelled.append(cancel.cancel_queue(session=queued.session)),
        failures,
    )
    wait_until_blocked()  # the cancel waits on the row the claim holds
    go.set()
    claiming.join(TIMEOUT)
    cancelling.join(TIMEOUT)

    assert failures == []
    assert cancelled == [[]]
    assert Run.objects.get(pk=queued.pk).status == Run.Status.RUNNING
    assert finished_events(queued) == 0
