"""project.patches.redis_layer under threads: one Redis channel layer per process, used at once
from several event loops on their own threads (a web server's sockets' loop, its
turn loop, asgiref's loops for sync code), each loop with its own connection and
channels; a loop's connection is closed with it.

On the machine's Redis, under a prefix of this run's own.
"""

import asyncio
import uuid

import pytest

from project.patches.redis_layer import RedisChannelLayer
from tests.integration import services
from tests.threads import at_once

WAIT = 5


@pytest.fixture
def layer():
    prefix = f"toolcrib-threads-{uuid.uuid4().hex[:8]}"
    with services.redis_prefix(prefix) as url:
        yield RedisChannelLayer(hosts=[url], prefix=prefix)


def test_loops_on_their_threads_each_get_their_own_messages(layer):
    loops = [asyncio.new_event_loop() for _ in range(8)]  # one a thread, made ahead

    async def talk(index: int) -> dict:
        channel = await layer.new_channel()
        await layer.group_add(f"thread{index}", channel)
        await layer.send_to_groups([f"thread{index}"], {"type": "hi", "n": index})
        return await asyncio.wait_for(layer.receive(channel), WAIT)

    try:
        heard = at_once(lambda i: loops[i].run_until_complete(talk(i)))

        assert [message["n"] for message in heard] == list(range(8))
        assert set(layer._buses) == set(loops)
    finally:
        for loop in loops:
            loop.close()
    assert layer._buses == {}  # each loop's connection closed with it
