"""Usage totals stay equal to the runs they count while many threads end runs at
once, as a worker's turns end together: the totals' upsert adds, it never loses
an addition to a race (project.counters), on SQLite and on PostgreSQL
(tests/project/test_threads_postgresql.py runs this file there)."""

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models import Count, Sum
from django.utils import timezone

from agents.models import Run, RunTotal, Session
from agents.usage import count_ended_run, end_run
from project.periods import EVERYONE_BY_PERIOD
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
RUNS_EACH = 6


def make_runs(alice, bob, count: int) -> list[Run]:
    """Running runs of two users, two agents, in two hours (many share a key)."""
    now = timezone.now()
    runs = []
    for index in range(count):
        user = (alice, bob)[index % 2]
        agent = ("calculator", "weather")[index % 3 % 2]
        session = Session.objects.create(
            app_name=agent, user_id=str(user.pk), adk_id=f"s{index}", owner=user
        )
        run = Run.objects.create(
            session=session,
            user=user,
            status=Run.Status.RUNNING,
            prompt_tokens=index,
            completion_tokens=1,
            total_tokens=index + 1,
        )
        created = now - timedelta(hours=index % 2)
        Run.objects.filter(pk=run.pk).update(created_at=created)
        run.created_at = created
        runs.append(run)
    return runs


def end_as_a_turn_does(run: Run) -> None:
    """The drive's end (agents.turns.drive._store_end): UPDATE, then count."""
    run.status = Run.Status.SUCCEEDED
    with transaction.atomic():
        Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
            status=run.status, finished_at=timezone.now()
        )
        count_ended_run(run)


def end_as_a_sweep_does(run: Run) -> None:
    """A lost or stale run's end (agents.turns.queue): a conditional UPDATE."""
    end_run(
        run_id=run.pk,
        where={"status": Run.Status.RUNNING},
        status=Run.Status.FAILED,
        finished_at=timezone.now(),
    )


def test_runs_ended_at_once_are_each_counted_once(alice, bob):
    runs = make_runs(alice, bob, THREADS * RUNS_EACH)
    for run in runs:
        run.session  # noqa: B018 - read here, not on the threads

    def end(index: int) -> None:
        try:
            for run in runs[index::THREADS]:
                ender = (end_as_a_turn_does, end_as_a_sweep_does)[run.prompt_tokens % 2]
                ender(run)
        finally:
            connection.close()

    at_once(end, threads=THREADS)

    users = RunTotal.objects.filter(user_id__gte=0)
    counted = users.aggregate(
        runs=Sum("runs"), tokens=Sum("total_tokens"), prompt=Sum("prompt_tokens")
    )
    stored = Run.objects.aggregate(
        runs=Count("id"), tokens=Sum("total_tokens"), prompt=Sum("prompt_tokens")
    )
    assert counted == stored
    # Every user's rows of each period (week, day, six hours, hour) count them all,
    # each at its period's start.
    for size, user_id in EVERYONE_BY_PERIOD.items():
        everyone = RunTotal.objects.filter(user_id=user_id)
        assert (
            everyone.aggregate(
                runs=Sum("runs"),
                tokens=Sum("total_tokens"),
                prompt=Sum("prompt_tokens"),
            )
            == stored
        )
        assert all(t.hour.timestamp() % size == 0 for t in everyone)
    assert counted["runs"] == THREADS * RUNS_EACH
    by_key = {(t.user_id, t.agent, t.outcome, t.hour): t.runs for t in users}
    assert sum(by_key.values()) == THREADS * RUNS_EACH
    assert len(by_key) < THREADS * RUNS_EACH  # runs of one key share a row


def test_a_run_ended_twice_at_once_is_counted_once(alice, bob):
    [run] = make_runs(alice, bob, 1)

    at_once(lambda index: (end_as_a_sweep_does(run), connection.close()), threads=4)

    assert RunTotal.objects.get(user_id=alice.pk).runs == 1
    for user_id in EVERYONE_BY_PERIOD.values():
        assert RunTotal.objects.get(user_id=user_id).runs == 1
