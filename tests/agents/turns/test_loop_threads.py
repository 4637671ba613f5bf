"""agents.turns.loop under threads: the first turns of a process, started at once
from several threads (a worker's pool, a web server's request threads), start one
turn loop and all run on it."""

import asyncio
import threading

from agents.doorbell import streams
from agents.turns import loop as turn_loop
from tests.threads import at_once


def test_turns_starting_first_at_once_start_one_loop_and_run_on_it(monkeypatch):
    monkeypatch.setattr(streams, "_home_loop", None)  # no socket bound one
    monkeypatch.setattr(turn_loop, "_loop", None)  # none started yet
    before = {t for t in threading.enumerate() if t.name == "toolcrib-turns"}

    async def where() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    ran_on = at_once(lambda i: turn_loop.run_on_turn_loop(where()))

    started = {t for t in threading.enumerate() if t.name == "toolcrib-turns"} - before
    own = turn_loop._loop
    assert all(loop is own for loop in ran_on)
    assert len(started) == 1
    own.call_soon_threadsafe(own.stop)
    started.pop().join(5)
