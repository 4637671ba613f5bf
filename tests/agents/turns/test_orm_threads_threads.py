"""agents.turns.orm_threads under threads: turns running at once on the loops of
several threads (a web server's sockets' loop and its own turn loop, a worker's)
each have an ORM thread no other turn shares while it runs, and give it back."""

import asyncio
import threading

from asgiref.sync import sync_to_async

from agents.turns import orm_threads
from tests.threads import at_once


def test_turns_at_once_on_several_loops_never_share_an_orm_thread(monkeypatch):
    monkeypatch.setattr(orm_threads, "_idle", [])
    all_running = threading.Barrier(8)  # every turn holds its thread at once
    loops = [asyncio.new_event_loop() for _ in range(8)]  # one a thread, made ahead

    def orm_call() -> int:
        all_running.wait(30)
        return threading.get_ident()

    async def turn() -> int:
        async with orm_threads.turn_thread():
            return await sync_to_async(orm_call)()

    try:
        used = at_once(lambda i: loops[i].run_until_complete(turn()))
    finally:
        for loop in loops:
            loop.close()

    assert len(set(used)) == 8
    assert orm_threads.idle() == 8  # each given back, kept for a later turn
    for executor in orm_threads._idle:
        executor.shutdown(wait=True)
