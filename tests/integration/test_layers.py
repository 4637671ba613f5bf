"""project/layers.py on a real Redis: Pub/Sub as the doorbell, between processes
(two layers stand for two processes), and a lost connection ends every receive."""

import asyncio
import signal
from collections.abc import AsyncIterator

import pytest
import redis as redis_py
from redis.exceptions import ConnectionError as RedisConnectionError

from project import metrics
from project.patches.redis_layer import LOST_ERRORS, RedisChannelLayer
from tests.integration import services

pytestmark = pytest.mark.integration

WAIT = 5


def restart(server: services.RedisServer) -> None:
    """Redis goes away for a moment and comes back empty."""
    server.restart()


def fail_over(server: services.RedisServer) -> None:
    """As a failover to an empty replica: connections cut, state gone, no downtime."""
    client = redis_py.Redis(port=server.port)
    client.flushall()
    for kind in ("normal", "pubsub"):
        client.client_kill_filter(_type=kind, skipme=True)
    client.close()


@pytest.fixture
def redis_server() -> AsyncIterator[services.RedisServer]:
    with services.redis_server() as server:
        yield server


@pytest.fixture
async def processes(redis_server) -> AsyncIterator[list[RedisChannelLayer]]:
    """Two layers on one Redis, as two processes of one deployment would have."""
    layers = [
        RedisChannelLayer(hosts=[redis_server.url], prefix="test", capacity=2)
        for _ in range(2)
    ]
    yield layers
    for layer in layers:
        await layer.flush()


async def receive(layer: RedisChannelLayer, channel: str) -> dict:
    return await asyncio.wait_for(layer.receive(channel), WAIT)


def subscribers(server: services.RedisServer, key: str) -> int:
    client = redis_py.Redis(port=server.port)
    try:
        return dict(client.pubsub_numsub(key))[key.encode()]
    finally:
        client.close()


async def test_a_group_send_reaches_every_member_in_every_process(processes):
    web, other = processes
    both, first = await web.new_channel(), await web.new_channel()
    second = await other.new_channel()
    for group, layer, channel in [
        ("one", web, both),
        ("one", web, first),
        ("two", web, both),
        ("two", other, second),
    ]:
        await layer.group_add(group, channel)

    await other.send_to_groups(["one", "two", "nobody"], {"type": "to.all"})
    heard = {
        "both": [(await receive(web, both))["type"] for _ in range(2)],
        "first": [(await receive(web, first))["type"]],
    }
    await web.group_send("two", {"type": "to.two"})
    heard["both"].append((await receive(web, both))["type"])
    heard["second"] = [(await receive(other, second))["type"] for _ in range(2)]

    assert heard == {
        "both": ["to.all", "to.all", "to.two"],
        "first": ["to.all"],
        "second": ["to.all", "to.two"],
    }


async def test_a_member_hears_what_is_sent_once_group_add_returns(processes):
    web, worker = processes
    channel = await web.new_channel()
    for number in range(50):
        group = f"session.{number}"
        await web.group_add(group, channel)
        # Published by another process at once: the subscription is confirmed.
        await worker.group_send(group, {"type": "event.new", "n": number})
        assert (await receive(web, channel))["n"] == number
        await web.group_discard(group, channel)


async def test_a_message_to_a_channel_reaches_it_from_another_process(processes):
    web, worker = processes
    channel = await web.new_channel()

    await worker.send(channel, {"type": "direct", "text": "é" * 10})
    direct = await receive(web, channel)
    await web.send(channel, {"type": "from.itself"})  # put straight on its queue

    assert direct == {"type": "direct", "text": "é" * 10}
    assert await receive(web, channel) == {"type": "from.itself"}


async def test_a_full_channel_misses_what_is_sent_to_it(processes):
    web, worker = processes
    channel = await web.new_channel()
    await web.group_add("busy", channel)

    for number in range(4):  # capacity 2
        await worker.group_send("busy", {"type": "again", "n": number})
    await worker.send(channel, {"type": "last"})  # sent after: order is kept
    await asyncio.sleep(0.2)

    kept = [(await receive(web, channel))["n"] for _ in range(2)]
    await worker.group_send("busy", {"type": "again", "n": 9})
    assert kept == [0, 1]
    assert (await receive(web, channel))["n"] == 9


async def test_a_receiver_that_goes_leaves_no_subscription(processes, redis_server):
    web, worker = processes
    channel = await web.new_channel()
    await web.group_add("session.gone", channel)
    key = web.group_key("session.gone")
    receiving = asyncio.create_task(web.receive(channel))
    await asyncio.sleep(0.05)
    subscribed = subscribers(redis_server, key)

    receiving.cancel()  # as channels does when a socket closes
    await asyncio.gather(receiving, return_exceptions=True)
    await asyncio.sleep(0.2)

    assert subscribed == 1
    assert subscribers(redis_server, key) == 0
    await worker.group_send("session.gone", {"type": "after"})  # to nobody: dropped


@pytest.mark.parametrize("lose", [restart, fail_over])
async def test_losing_redis_ends_every_receive_of_the_process(lose, redis_server):
    layer = RedisChannelLayer(hosts=[redis_server.url])
    channels = [await layer.new_channel() for _ in range(3)]
    await layer.group_add("session.1", channels[0])
    receives = [asyncio.create_task(layer.receive(name)) for name in channels]
    await asyncio.sleep(0.2)

    await asyncio.to_thread(lose, redis_server)
    ended = await asyncio.wait_for(
        asyncio.gather(*receives, return_exceptions=True), 10
    )
    # A channel made before the loss stays dead: its socket must reconnect.
    for _ in range(2):
        with pytest.raises(RedisConnectionError):
            await receive(layer, channels[1])
    fresh = await layer.new_channel()
    await layer.group_add("session.1", fresh)
    await layer.group_send("session.1", {"type": "after.outage"})
    received = await receive(layer, fresh)
    await layer.flush()

    assert [type(error) for error in ended] == [RedisConnectionError] * 3
    assert received == {"type": "after.outage"}


def publish_failures() -> float:
    return metrics.REGISTRY.get_sample_value("toolcrib_publish_failures_total") or 0.0


async def test_publishing_while_redis_is_away_is_never_silent(redis_server):
    """A publish waits for no reply: those written to a Redis that then dies are
    counted lost, a publish to a Redis that is gone raises, and once Redis is back
    publishing works again."""
    web = RedisChannelLayer(hosts=[redis_server.url], prefix="test")
    worker = RedisChannelLayer(hosts=[redis_server.url], prefix="test")
    await worker.group_send("session.1", {"type": "warm"})  # the connection is open
    before = publish_failures()

    redis_server.process.send_signal(signal.SIGSTOP)  # it takes, but never answers
    for number in range(3):
        await worker.group_send("session.1", {"type": "lost", "n": number})
    redis_server.process.kill()
    await asyncio.to_thread(redis_server.process.wait)
    await asyncio.sleep(0.2)
    counted = publish_failures() - before
    with pytest.raises(LOST_ERRORS):
        await worker.group_send("session.1", {"type": "gone"})
    await asyncio.to_thread(redis_server.start)
    channel = await web.new_channel()
    await web.group_add("session.1", channel)
    await worker.group_send("session.1", {"type": "after"})
    received = await receive(web, channel)
    for layer in (web, worker):
        await layer.flush()

    assert counted >= 1
    assert received == {"type": "after"}
