"""agents.turns.orm_threads: a turn's ORM calls on a thread of its own, kept after."""

import asyncio
import os
import threading

import pytest
from asgiref.sync import sync_to_async

from agents.turns import orm_threads


def thread_of() -> int:
    return threading.get_ident()


async def one_turn(started: asyncio.Event, go_on: asyncio.Event) -> set[int]:
    async with orm_threads.turn_thread():
        first = await sync_to_async(thread_of)()
        started.set()
        await go_on.wait()
        second = await sync_to_async(thread_of)()
    return {first, second}


async def test_turns_running_at_once_each_have_a_thread_of_their_own():
    go_on = asyncio.Event()
    started = [asyncio.Event() for _ in range(3)]
    turns = [asyncio.create_task(one_turn(event, go_on)) for event in started]
    for event in started:
        await event.wait()
    go_on.set()

    threads = await asyncio.gather(*turns)

    assert all(len(used) == 1 for used in threads)  # one thread all through a turn
    assert len(set().union(*threads)) == 3  # and no two turns share one
    assert threading.get_ident() not in set().union(*threads)


async def test_a_turn_takes_the_thread_an_ended_turn_gave_back():
    go_on = asyncio.Event()
    go_on.set()
    first = await one_turn(asyncio.Event(), go_on)
    threads_before = threading.active_count()

    second = await one_turn(asyncio.Event(), go_on)

    assert second == first
    assert threading.active_count() == threads_before


async def test_threads_past_the_kept_ones_are_stopped(monkeypatch):
    monkeypatch.setattr(orm_threads, "KEPT", orm_threads.idle())
    go_on = asyncio.Event()
    started = [asyncio.Event() for _ in range(2)]
    turns = [asyncio.create_task(one_turn(event, go_on)) for event in started]
    for event in started:
        await event.wait()
    kept = orm_threads.idle()
    go_on.set()

    threads = await asyncio.gather(*turns)

    assert orm_threads.idle() == kept  # none more kept
    stopped = set().union(*threads) - {t.ident for t in threading.enumerate()}
    for _ in range(50):  # a stopped thread ends once its executor's queue is read
        if stopped:
            break
        await asyncio.sleep(0.02)
        stopped = set().union(*threads) - {t.ident for t in threading.enumerate()}
    assert stopped


class Connection:
    """As django.db.connection: the thread that reads `release` or `close` is the
    one whose connection is released or closed. Without `release` (PostgreSQL's
    wrapper has none), as Django's own."""

    def __init__(self, done: list[tuple[str, int]], *, releases: bool = True):
        self.done, self.releases = done, releases

    def __getattr__(self, name):
        if name == "release" and not self.releases:
            raise AttributeError(name)
        if name not in ("release", "close"):
            raise AttributeError(name)
        thread = threading.get_ident()
        return lambda: self.done.append((name, thread))


async def turns_on(done: list[tuple[str, int]], count: int) -> None:
    def call() -> None:
        done.append(("call", threading.get_ident()))

    for _ in range(count):
        async with orm_threads.turn_thread():
            await sync_to_async(call)()


async def settled(executor) -> None:
    await asyncio.to_thread(executor.submit(lambda: None).result)


def on_turn_threads(done: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """What the threads this test's turns ran on did: an earlier test's stopped
    thread may still close its connection while the fake is in place."""
    threads = {thread for what, thread in done if what == "call"}
    return [(what, thread) for what, thread in done if thread in threads]


@pytest.mark.parametrize(
    "releases, expected",
    [
        # Released after each turn, and checked again before the next one's call.
        (True, ["call", "release", "release", "call", "release"]),
        # A backend without `release` (PostgreSQL's pool): closed after each turn.
        (False, ["call", "close", "call", "close"]),
    ],
)
async def test_a_thread_given_back_releases_its_connection_before_the_next_turn_runs(
    monkeypatch, releases, expected
):
    """Released on the turn's own thread (connections are per thread), after the
    turn's last call and before a later turn's first one, without the turn
    waiting for it: project.patches.sqlite_pool's `release` keeps a clean one open for the
    thread's next turn, and checks it again when the thread is lent (its file may
    have been replaced meanwhile); a backend without it closes (back to its pool)."""
    done: list[tuple[str, int]] = []
    monkeypatch.setattr(orm_threads, "connection", Connection(done, releases=releases))

    await turns_on(done, 2)

    await settled(orm_threads._idle[0])
    ours = on_turn_threads(done)
    assert [what for what, _ in ours] == expected
    assert len({thread for _, thread in ours}) == 1


async def test_a_thread_stopped_closes_its_connection_first(monkeypatch):
    """A thread past the kept ones holds no connection open when it ends."""
    done: list[tuple[str, int]] = []
    monkeypatch.setattr(orm_threads, "connection", Connection(done))
    monkeypatch.setattr(orm_threads, "KEPT", 0)

    await turns_on(done, 1)

    (turn_thread,) = {thread for what, thread in done if what == "call"}
    for _ in range(50):
        if turn_thread not in {t.ident for t in threading.enumerate()}:
            break
        await asyncio.sleep(0.02)
    assert [what for what, _ in on_turn_threads(done)] == ["call", "close"]
    assert turn_thread not in {t.ident for t in threading.enumerate()}


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux's policy")
async def test_a_turn_thread_is_batch_work_to_the_scheduler():
    """Its wake-up for a call does not preempt the event loop's thread."""
    async with orm_threads.turn_thread():
        policy = await sync_to_async(os.sched_getscheduler)(0)

    assert policy == os.SCHED_BATCH
    assert os.sched_getscheduler(0) != os.SCHED_BATCH  # the loop's own is left alone


@pytest.fixture(autouse=True)
def fresh_threads(monkeypatch):
    monkeypatch.setattr(orm_threads, "_idle", [])
