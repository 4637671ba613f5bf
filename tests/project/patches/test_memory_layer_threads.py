"""The in-memory channel layer under threads: turns publishing at once from the
loops of their own threads (a Celery thread pool's, or before any socket bound the
sockets' loop) each hand their message over to the sockets' loop, which owns the
layer's queues, and every message reaches the socket once.

agents/doorbell/streams.py hands the send over; project/memory_layer.py delivers
it on the loop it runs on.
"""

import asyncio
import threading

import pytest

from agents.doorbell import streams
from project.patches.memory_layer import InMemoryChannelLayer
from tests.threads import at_once

TIMEOUT = 5
SENDS = 20  # each thread's


@pytest.fixture
def sockets_loop(monkeypatch):
    """The sockets' loop, running on a thread of its own, bound as the home loop."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(streams, "_home_loop", loop)
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(TIMEOUT)
    loop.close()


def on(loop, coroutine):
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result(TIMEOUT)


def test_turns_publishing_at_once_from_their_threads_reach_the_socket_once_each(
    sockets_loop,
):
    layer = InMemoryChannelLayer(capacity=8 * SENDS)

    async def socket_joins() -> str:
        channel = await layer.new_channel()
        await layer.group_add("session.s", channel)
        return channel

    channel = on(sockets_loop, socket_joins())
    turn_loops = [asyncio.new_event_loop() for _ in range(8)]  # made ahead

    async def publish(index: int) -> None:
        for n in range(SENDS):
            message = {"type": "event.new", "seq": index * SENDS + n}
            await streams._deliver_in_memory(layer, ["session.s"], message)

    try:
        at_once(lambda i: turn_loops[i].run_until_complete(publish(i)))
    finally:
        for loop in turn_loops:
            loop.close()

    async def socket_reads() -> list[int]:
        return [(await layer.receive(channel))["seq"] for _ in range(8 * SENDS)]

    async def nothing_more() -> bool:
        try:
            await asyncio.wait_for(layer.receive(channel), 0.05)
        except TimeoutError:
            return True
        return False

    assert sorted(on(sockets_loop, socket_reads())) == list(range(8 * SENDS))
    assert on(sockets_loop, nothing_more())
