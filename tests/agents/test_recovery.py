"""Turns whose process died end failed, readably, and the session goes on."""

import asyncio
from uuid import UUID

import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache
from django.db import DatabaseError
from django.utils import timezone

from agents.events.wire import run_stats
from agents.models import Run, Session
from agents.turns import drive, queue
from agents.turns.queue import LOST_CODE, LOST_MESSAGE

pytestmark = pytest.mark.django_db(transaction=True)

WEATHER_TURN = [
    "run_started",
    "user_message",
    "function_call",
    "function_response",
    "text",
    "run_finished",
]


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


@pytest.fixture
def leases(settings):
    """Leases on, and short: with REDIS_URL they are on; the cache is local here."""
    settings.TOOLCRIB_RUN_LEASE = 0.3


@pytest.fixture
def session(alice, demo_agents, start_session) -> Session:
    return Session.objects.get(pk=start_session(alice, "weather_sentiment"))


def running_run(session: Session) -> Run:
    """A run a worker claimed and then died with: running, and no lease."""
    return Run.objects.create(
        session=session,
        user=session.owner,
        text="weather in oslo?",
        status=Run.Status.RUNNING,
        started_at=timezone.now(),
    )


def test_a_running_run_whose_lease_is_gone_ends_failed_with_an_error_event(
    leases, alice, session, events_of
):
    run = running_run(session)

    ended = async_to_sync(queue.afail_lost_runs)()

    run.refresh_from_db()
    frames = events_of(alice, session.id)
    assert ended == 1
    assert (run.status, run.error) == (Run.Status.FAILED, LOST_MESSAGE)
    assert kinds(frames) == ["error", "run_finished"]
    assert frames[0]["event"]["error"] == {"code": LOST_CODE, "message": LOST_MESSAGE}
    assert frames[1]["event"]["run"] == {
        "id": str(run.id),
        "status": "failed",
        "error": LOST_MESSAGE,
        "waiting_for": None,
        "resumes": None,
        "stats": run_stats(run).model_dump(),
    }


def test_a_held_lease_outlives_its_duration_while_renewed(leases, session):
    run = running_run(session)

    async def lost_after_holding() -> bool:
        await queue.ahold_lease(run.id)
        try:
            await asyncio.sleep(3 * queue.lease_seconds())
            return await queue.ais_lost(run.id)
        finally:
            await queue.arelease_lease(run.id)

    assert async_to_sync(lost_after_holding)() is False


def test_a_lease_given_up_is_deleted_soon_after(leases, session):
    run = running_run(session)

    async def hold_then_release() -> bool:
        await queue.ahold_lease(run.id)
        while cache.get(queue.lease_key(run.id)) is None:  # written by the renewer
            await asyncio.sleep(0.01)
        await queue.arelease_lease(run.id)
        for _ in range(100):  # well within a lease (0.3 s)
            if cache.get(queue.lease_key(run.id)) is None:
                return True
            await asyncio.sleep(0.002)
        return False

    assert async_to_sync(hold_then_release)() is True
    assert async_to_sync(queue.ais_lost)(run.id) is True


def test_the_next_turn_fails_a_lost_run_first_and_then_runs(
    leases, alice, session, say, events_of
):
    lost = running_run(session)

    run = say(alice, session.id, "weather in london?")

    lost.refresh_from_db()
    assert run["status"] == "succeeded"
    assert lost.status == Run.Status.FAILED
    assert kinds(events_of(alice, session.id)) == [
        "error",
        "run_finished",
        *WEATHER_TURN,
    ]


def test_a_second_delivery_of_an_ended_run_adds_nothing(
    leases, alice, session, say, events_of
):
    run = say(alice, session.id, "weather in london?")

    async_to_sync(drive.execute_turn)(UUID(run["id"]))

    assert kinds(events_of(alice, session.id)) == WEATHER_TURN


def test_without_a_shared_cache_no_run_is_taken_for_lost(settings, session):
    settings.TOOLCRIB_RUN_LEASE = 0
    run = running_run(session)

    assert async_to_sync(queue.afail_lost_runs)() == 0
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING


def test_a_turn_that_outlives_its_lease_does_not_undo_the_failure(
    leases, alice, session, events_of, monkeypatch
):
    """A stalled process whose Run was failed meanwhile (its lease ran out) ends
    without turning it back into a success, and without a second run_finished."""
    run = Run.objects.create(session=session, user=alice, text="weather in oslo?")

    async def stalled_past_its_lease(run: Run) -> None:
        await queue.arelease_lease(run.id)
        assert await queue.afail_if_lost(run.id)

    monkeypatch.setattr(drive, "_drive", stalled_past_its_lease)
    async_to_sync(drive.execute_turn)(run.id)

    run.refresh_from_db()
    assert (run.status, run.error) == (Run.Status.FAILED, LOST_MESSAGE)
    assert kinds(events_of(alice, session.id)) == [
        "run_started",
        "error",
        "run_finished",
    ]


def test_a_turn_whose_end_cannot_be_told_is_not_left_ended_in_silence(
    leases, alice, session, events_of, monkeypatch
):
    """The Run's end and the run_finished that tells it commit together: when that
    event cannot be stored, the Run does not read succeeded while no client hears
    of it; it stays running, and the lost-run sweep ends it, readably."""
    run = Run.objects.create(session=session, user=alice, text="weather in oslo?")
    stored = drive.record

    def refused(**fields):
        if fields["kind"] == "run_finished":
            raise DatabaseError("could not extend file: No space left on device")
        return stored(**fields)

    monkeypatch.setattr(drive, "record", refused)
    with pytest.raises(DatabaseError):
        async_to_sync(drive.execute_turn)(run.id)

    run.refresh_from_db()
    assert (run.status, run.finished_at) == (Run.Status.RUNNING, None)
    assert kinds(events_of(alice, session.id))[-1] == "text"

    monkeypatch.undo()
    assert async_to_sync(queue.afail_lost_runs)() == 1
    run.refresh_from_db()
    assert (run.status, run.error) == (Run.Status.FAILED, LOST_MESSAGE)
    assert kinds(events_of(alice, session.id))[-2:] == ["error", "run_finished"]


@pytest.mark.parametrize("stage", ["claim", "run_started"])
def test_a_turn_whose_start_raises_ends_failed_readably_and_frees_the_session(
    stage, alice, session, api_for, events_of, say, monkeypatch
):
    """What raises before the turn runs (its claim, its run_started event: the
    database, a bug) ends the Run failed, told, instead of leaving it queued in
    front of every later turn of the session."""
    broken = DatabaseError('missing FROM-clause entry for table "agents_session"')

    def raising(*args, **kwargs):
        raise broken

    target = "claim_if_first" if stage == "claim" else "_started"
    monkeypatch.setattr(queue if stage == "claim" else drive, target, raising)
    response = api_for(alice).post(
        f"/api/sessions/{session.id}/messages/?wait=1",
        {"text": "weather in oslo?"},
        format="json",
    )
    monkeypatch.undo()

    run = Run.objects.get(pk=response.json()["id"])
    frames = events_of(alice, session.id)
    assert response.status_code == 200
    assert run.status == Run.Status.FAILED
    assert run.error == f"The turn could not start: {broken}"
    assert kinds(frames)[-2:] == ["error", "run_finished"]
    assert frames[-2]["event"]["error"]["message"] == run.error
    assert not queue.is_held_here(run.pk)
    assert say(alice, session.id, "weather in london?")["status"] == "succeeded"


def test_two_deliveries_in_one_process_hold_a_lease_until_both_let_go(leases, session):
    run = running_run(session)

    async def hold_twice_release_once() -> tuple[bool, bool]:
        await queue.ahold_lease(run.id)
        await queue.ahold_lease(run.id)
        await queue.arelease_lease(run.id)
        await asyncio.sleep(3 * queue.lease_seconds())
        still = not await queue.ais_lost(run.id)
        await queue.arelease_lease(run.id)
        return still, queue.is_held_here(run.id)

    assert async_to_sync(hold_twice_release_once)() == (True, False)


def test_a_holder_late_by_less_than_a_lease_keeps_its_turn(settings, session):
    """A live process whose renewal comes late (its machine loaded, Redis paused
    or its connection killed) writes its lease again within a lease: its turn is
    not taken for lost, so it is not failed under it."""
    settings.TOOLCRIB_RUN_LEASE = 1.5  # a renewal (0.5 s) plus a poll is 1.0 s
    run = running_run(session)

    async def judged_while_the_holder_is_late() -> bool:
        async def late_renewal() -> None:
            await asyncio.sleep(1.2)  # later than a renewal, within a lease
            await cache.aset(queue.lease_key(run.id), 1, timeout=1.5)

        renewal = asyncio.ensure_future(late_renewal())
        try:
            return await queue.ais_lost(run.id)
        finally:
            await renewal

    assert async_to_sync(judged_while_the_holder_is_late)() is False
    assert async_to_sync(queue.afail_lost_runs)() == 0
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING
