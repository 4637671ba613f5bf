"""project/layers.py on a real Redis: a lost connection ends every receiver, not one."""

import asyncio

import pytest
import redis as redis_py
from redis.exceptions import ConnectionError as RedisConnectionError

from project.layers import RedisChannelLayer
from tests.integration import services

pytestmark = pytest.mark.integration


def restart(server: services.RedisServer) -> None:
    """Redis goes away for a moment and comes back empty."""
    server.restart()


def fail_over(server: services.RedisServer) -> None:
    """As a failover to an empty replica: connections cut, state gone, no downtime."""
    client = redis_py.Redis(port=server.port)
    client.flushall()
    client.client_kill_filter(_type="normal", skipme=True)
    client.close()


@pytest.mark.parametrize("lose", [restart, fail_over])
async def test_losing_redis_ends_every_receive_of_the_process(lose):
    with services.redis_server() as server:
        layer = RedisChannelLayer(hosts=[server.url])
        channels = [await layer.new_channel() for _ in range(3)]
        receives = [asyncio.create_task(layer.receive(name)) for name in channels]
        await asyncio.sleep(0.5)  # one receive waits on Redis for all three

        await asyncio.to_thread(lose, server)
        ended = await asyncio.wait_for(
            asyncio.gather(*receives, return_exceptions=True), 10
        )
        await layer.send(channels[0], {"type": "after.outage"})
        received = await asyncio.wait_for(layer.receive(channels[0]), 10)
        await layer.close_pools()

    assert [type(error) for error in ended] == [RedisConnectionError] * 3
    assert received == {"type": "after.outage"}


async def test_group_sends_started_together_reach_every_member_of_each_group():
    with services.redis_server() as server:
        layer = RedisChannelLayer(hosts=[server.url], capacity=2)
        both, first, second = [await layer.new_channel() for _ in range(3)]
        for group, channel in [("one", both), ("one", first), ("two", both)]:
            await layer.group_add(group, channel)
        await layer.group_add("two", second)

        await asyncio.gather(
            layer.group_send("one", {"type": "to.one"}),
            layer.group_send("two", {"type": "to.two"}),
            layer.group_send("nobody", {"type": "to.nobody"}),
        )
        received = {
            name: [
                (await asyncio.wait_for(layer.receive(name), 5))["type"]
                for _ in range(count)
            ]
            for name, count in [(both, 2), (first, 1), (second, 1)]
        }
        # A full channel (capacity 2) misses what is sent to it, as channels_redis's.
        for number in range(3):
            await layer.group_send("one", {"type": "again", "n": number})
        kept = [(await layer.receive(first))["n"] for _ in range(2)]
        await layer.close_pools()

    assert received == {
        both: ["to.one", "to.two"],
        first: ["to.one"],
        second: ["to.two"],
    }
    assert kept == [0, 1]
