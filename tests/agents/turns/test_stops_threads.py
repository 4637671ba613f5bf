"""agents.turns.stops under threads: turns starting at once on several event loops
each get their loop's stop watcher, while loops that closed are swept out, and a
stop reaches each turn of this process.

A web server runs turns on its sockets' loop once one is bound, and on a loop of
its own before; asgiref's async_to_sync makes and closes loops of its own.
"""

import asyncio
import uuid
from types import SimpleNamespace

from agents.models import Run
from agents.turns import stops
from tests.threads import at_once

ROUNDS = 50
CLOSED = 200  # loops that closed since the last watcher was made


def closed_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    loop.close()
    return loop


def test_turns_starting_at_once_on_their_loops_each_get_their_loops_watcher(
    monkeypatch,
):
    closed = [closed_loop() for _ in range(CLOSED)]
    for _ in range(ROUNDS):
        monkeypatch.setattr(
            stops, "_watchers", {loop: stops._Watcher() for loop in closed}
        )

        async def watcher_of_this_loop():
            return asyncio.get_running_loop(), stops._watcher()

        found = at_once(lambda i: asyncio.run(watcher_of_this_loop()))

        assert len({id(watcher) for _, watcher in found}) == 8
        assert not set(closed) & set(stops._watchers)  # swept out


def test_a_stop_asked_from_another_thread_stops_each_turn_watched_at_once():
    async def a_turn(run) -> str:
        async with stops.watching(run):
            await asyncio.sleep(30)
        return "ran to the end"

    def turn(index: int) -> str:
        run = SimpleNamespace(pk=uuid.uuid4(), status=Run.Status.RUNNING)
        runs[index] = run
        try:
            return asyncio.run(a_turn(run))
        except stops.TurnStopped:
            return "stopped"

    runs: list = [None] * 8

    def stop_when_watched(index: int) -> str:
        if index < 4:
            return turn(index)
        while runs[index - 4] is None or runs[index - 4].pk not in stops._local:
            pass
        stops.request_stop(run_id=runs[index - 4].pk)
        return "asked"

    results = at_once(stop_when_watched)

    assert results == ["stopped"] * 4 + ["asked"] * 4
    assert [run.status for run in runs[:4]] == [Run.Status.CANCELLED] * 4
