"""agents.turns.sweep: no run waits forever. A run no process holds is failed (it
was running) or queued again (it never started), once; the session goes on."""

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone

from agents.models import Run, Session
from agents.turns import executors, queue, sweep
from agents.turns.queue import LOST_CODE, LOST_MESSAGE
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


@pytest.fixture
def leases(settings):
    """Leases on, and short (with REDIS_URL they are on; the cache is local here)."""
    settings.TOOLCRIB_RUN_LEASE = 0.3
    settings.TOOLCRIB_REQUEUE_SECONDS = 30


@pytest.fixture
def session(alice, demo_agents, start_session) -> Session:
    return Session.objects.get(pk=start_session(alice, "weather_sentiment"))


def queued_run(session: Session, *, age: float, text: str = "weather in oslo?"):
    """A run queued `age` seconds ago that nothing runs: its delivery was taken by
    a worker that then died (or it failed to start, and could not be failed)."""
    run = Run.objects.create(session=session, user=session.owner, text=text)
    Run.objects.filter(pk=run.pk).update(
        created_at=timezone.now() - timedelta(seconds=age)
    )
    run.refresh_from_db()
    return run


def sweep_now() -> sweep.Swept:
    return async_to_sync(sweep.asweep)()


def wait_for_end(run: Run) -> Run:
    executors.wait(run_id=run.pk, timeout=30)
    run.refresh_from_db()
    return run


def test_a_queued_run_nobody_holds_is_queued_again_and_runs(
    leases, alice, session, events_of
):
    run = queued_run(session, age=45)

    swept = sweep_now()

    run = wait_for_end(run)
    frames = events_of(alice, session.id)
    assert swept == sweep.Swept(requeued=1)
    assert (run.status, run.requeues) == (Run.Status.SUCCEEDED, 1)
    assert kinds(frames)[0] == "run_started"
    assert kinds(frames)[-1] == "run_finished"
    # The events about it say it was queued again.
    assert frames[0]["event"]["run"]["requeues"] == 1
    assert frames[-1]["event"]["run"]["requeues"] == 1


def test_a_young_queued_run_is_left_to_the_broker(leases, session):
    run = queued_run(session, age=5)

    assert sweep_now() == sweep.Swept()
    run.refresh_from_db()
    assert (run.status, run.requeues) == (Run.Status.QUEUED, 0)


def test_a_queued_run_a_live_delivery_holds_is_left_alone(leases, session):
    run = queued_run(session, age=45)

    async def sweep_while_held() -> sweep.Swept:
        await queue.ahold_lease(run.pk)
        try:
            return await sweep.asweep()
        finally:
            await queue.arelease_lease(run.pk)

    assert async_to_sync(sweep_while_held)() == sweep.Swept()
    run.refresh_from_db()
    assert (run.status, run.requeues) == (Run.Status.QUEUED, 0)


def test_a_run_queued_again_waits_longer_before_the_next_time(leases, session):
    run = queued_run(session, age=45)
    Run.objects.filter(pk=run.pk).update(requeues=1)

    assert sweep_now() == sweep.Swept()  # 45 s: not yet twice 30 s


def test_a_queued_run_unheld_past_twice_the_turn_timeout_ends_failed(
    leases, settings, alice, session, events_of
):
    settings.TOOLCRIB_TURN_TIMEOUT = 60
    run = queued_run(session, age=125)

    swept = sweep_now()

    run.refresh_from_db()
    frames = events_of(alice, session.id)
    assert swept == sweep.Swept(failed_not_taken=1)
    assert run.status == Run.Status.FAILED
    assert run.error == sweep.NOT_TAKEN_MESSAGE.format(minutes=2)
    assert kinds(frames) == ["error", "run_finished"]
    assert frames[0]["event"]["error"]["code"] == sweep.NOT_TAKEN_CODE


def test_a_running_run_nobody_holds_ends_failed_as_lost(
    leases, alice, session, events_of
):
    run = Run.objects.create(
        session=session,
        user=alice,
        text="weather in oslo?",
        status=Run.Status.RUNNING,
        started_at=timezone.now() - timedelta(seconds=10),
    )

    swept = sweep_now()

    run.refresh_from_db()
    frames = events_of(alice, session.id)
    assert swept == sweep.Swept(failed_lost=1)
    assert (run.status, run.error) == (Run.Status.FAILED, LOST_MESSAGE)
    assert frames[0]["event"]["error"] == {"code": LOST_CODE, "message": LOST_MESSAGE}


def test_sweeps_at_once_queue_a_run_again_once(leases, session, monkeypatch):
    run = queued_run(session, age=45)
    submitted = []
    monkeypatch.setattr(executors, "submit", lambda *, run_id: submitted.append(run_id))

    swept = at_once(lambda i: sweep_now(), threads=4)

    run.refresh_from_db()
    assert sum(s.requeued for s in swept) == 1
    assert submitted == [run.pk]
    assert run.requeues == 1


def test_the_embedded_server_takes_its_previous_lifes_runs_at_once(
    settings, alice, session, events_of, monkeypatch
):
    """No Redis: the one server process knows its own runs; one left running or
    queued from before it started has nobody to run it."""
    settings.TOOLCRIB_RUN_LEASE = 0
    started = timezone.now()
    running = Run.objects.create(
        session=session,
        user=alice,
        text="weather in oslo?",
        status=Run.Status.RUNNING,
        started_at=started - timedelta(seconds=1),
    )
    Run.objects.filter(pk=running.pk).update(created_at=started - timedelta(seconds=2))
    waiting = queued_run(session, age=1, text="weather in london?")
    monkeypatch.setattr(sweep, "_started_at", started)
    monkeypatch.setattr(sweep, "_requeue_after", lambda: timedelta(0))

    swept = sweep_now()

    waiting = wait_for_end(waiting)
    running.refresh_from_db()
    assert swept == sweep.Swept(failed_lost=1, requeued=1)
    assert running.status == Run.Status.FAILED
    assert waiting.status == Run.Status.SUCCEEDED
    assert kinds(events_of(alice, session.id))[:3] == [
        "error",
        "run_finished",
        "run_started",
    ]


def test_the_embedded_server_leaves_the_runs_it_holds(settings, session):
    settings.TOOLCRIB_RUN_LEASE = 0
    run = queued_run(session, age=600)

    async def sweep_while_held() -> sweep.Swept:
        await queue.ahold_lease(run.pk)
        try:
            return await sweep.asweep()
        finally:
            await queue.arelease_lease(run.pk)

    assert async_to_sync(sweep_while_held)() == sweep.Swept()
