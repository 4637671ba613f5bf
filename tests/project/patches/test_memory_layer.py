"""The embedded default's in-memory channel layer (project/memory_layer.py), and a
turn's publish handed to the sockets' loop (agents/doorbell/streams.py)."""

import asyncio
import threading
import time

import pytest
from channels.layers import get_channel_layer

from agents.doorbell import streams
from project.patches.memory_layer import InMemoryChannelLayer

TIMEOUT = 5


async def joined(layer: InMemoryChannelLayer, *groups: str) -> str:
    channel = await layer.new_channel()
    for group in groups:
        await layer.group_add(group, channel)
    return channel


async def received(layer: InMemoryChannelLayer, channel: str) -> dict:
    return await asyncio.wait_for(layer.receive(channel), TIMEOUT)


async def nothing_waits(layer: InMemoryChannelLayer, channel: str) -> bool:
    try:
        await asyncio.wait_for(layer.receive(channel), 0.05)
    except TimeoutError:
        return True
    return False


def test_the_embedded_default_uses_it():
    assert type(get_channel_layer()) is InMemoryChannelLayer


async def test_every_member_of_each_group_gets_the_message_once_per_group():
    layer = InMemoryChannelLayer()
    both = await joined(layer, "one", "two")
    one = await joined(layer, "one")
    outsider = await joined(layer, "three")

    layer.deliver(["one", "two", "nobody"], {"type": "hello", "n": 1})

    assert [await received(layer, both) for _ in range(2)] == [
        {"type": "hello", "n": 1}
    ] * 2
    assert await received(layer, one) == {"type": "hello", "n": 1}
    assert await nothing_waits(layer, both)
    assert await nothing_waits(layer, outsider)


async def test_group_send_is_deliver_for_one_group_and_keeps_the_order():
    layer = InMemoryChannelLayer()
    channel = await joined(layer, "g")

    for number in range(5):
        await layer.group_send("g", {"type": "n", "n": number})

    assert [(await received(layer, channel))["n"] for _ in range(5)] == list(range(5))


@pytest.mark.parametrize(
    "message",
    [
        {"type": "plain", "text": "{}", "seq": 3, "owner": None},
        {"type": "nested", "frame": {"event": {"kind": "text"}}, "tags": ["a"]},
    ],
    ids=["plain values", "nested values"],
)
async def test_a_receiver_that_changes_its_message_changes_no_one_elses(message):
    layer = InMemoryChannelLayer()
    first, second = await joined(layer, "g"), await joined(layer, "g")
    sent = {key: value for key, value in message.items()}

    layer.deliver(["g"], message)
    mine = await received(layer, first)
    mine["type"] = "changed"
    for value in mine.values():
        if isinstance(value, dict):
            value.clear()
        if isinstance(value, list):
            value.append("changed")

    assert await received(layer, second) == sent
    assert message == sent


async def test_a_full_channel_misses_the_message_and_the_others_still_get_it():
    layer = InMemoryChannelLayer(capacity=2)
    full, other = await joined(layer, "g"), await joined(layer, "g")
    layer.deliver(["g"], {"type": "a"})
    layer.deliver(["g"], {"type": "b"})
    assert [(await received(layer, other))["type"] for _ in range(2)] == ["a", "b"]

    layer.deliver(["g"], {"type": "c"})

    assert [(await received(layer, full))["type"] for _ in range(2)] == ["a", "b"]
    assert await nothing_waits(layer, full)
    assert (await received(layer, other))["type"] == "c"


async def test_an_expired_message_is_dropped_and_its_channel_leaves_its_groups():
    layer = InMemoryChannelLayer(expiry=0.2)
    idle, listening = await joined(layer, "g"), await joined(layer, "g")
    layer.deliver(["g"], {"type": "old"})
    assert (await received(layer, listening))["type"] == "old"

    await asyncio.sleep(0.3)  # past the expiry and the sweep's interval (0.02 s)
    layer.deliver(["g"], {"type": "new"})

    assert (await received(layer, listening))["type"] == "new"
    assert await nothing_waits(layer, idle)  # "old" expired, and it left "g"
    assert idle not in layer.groups["g"]


async def test_a_publish_from_another_loop_is_delivered_on_the_sockets_loop_before_it_returns():
    layer = get_channel_layer()
    channel = await joined(layer, "session.x", "firehose.x")
    home, streams._home_loop = streams._home_loop, asyncio.get_running_loop()
    delivered_on: list[threading.Thread] = []
    deliver = layer.deliver

    def watched(groups, message):
        delivered_on.append(threading.current_thread())
        deliver(groups, message)

    layer.deliver = watched
    queued_when_it_returned: list[int] = []

    async def publish():
        await streams.asend_to_groups(["session.x", "firehose.x"], {"type": "e"})
        queued_when_it_returned.append(layer.channels[channel].qsize())

    try:
        await asyncio.to_thread(asyncio.run, publish())
        assert [await received(layer, channel) for _ in range(2)] == [{"type": "e"}] * 2
    finally:
        del layer.deliver
        streams._home_loop = home
        await layer.flush()

    assert delivered_on == [threading.main_thread()]
    assert queued_when_it_returned == [2]


async def test_a_publish_from_another_loop_returns_after_the_relay_it_woke_has_run():
    """The sockets' loop sends a frame on before the turn publishes its next one."""
    layer = get_channel_layer()
    channel = await joined(layer, "session.y")
    home, streams._home_loop = streams._home_loop, asyncio.get_running_loop()
    relayed: list[dict] = []

    async def relay():  # a relay busy writing frames: it holds the loop a while
        while True:
            message = await layer.receive(channel)
            time.sleep(0.05)
            relayed.append(message)

    async def publish():
        seen = []
        for number in range(3):
            await streams.asend_to_groups(["session.y"], {"type": "e", "n": number})
            seen.append(len(relayed))
        return seen

    relaying = asyncio.create_task(relay())
    try:
        seen = await asyncio.to_thread(asyncio.run, publish())
    finally:
        relaying.cancel()
        streams._home_loop = home
        await layer.flush()

    assert seen == [1, 2, 3]


async def test_a_publish_on_the_sockets_loop_returns_after_the_relay_it_woke_has_run():
    """A turn on the sockets' loop itself waits for its frames to be sent on too."""
    layer = get_channel_layer()
    channel = await joined(layer, "session.z")
    home, streams._home_loop = streams._home_loop, asyncio.get_running_loop()
    relayed: list[dict] = []

    async def relay():
        while True:
            relayed.append(await layer.receive(channel))

    relaying = asyncio.create_task(relay())
    seen = []
    try:
        for number in range(3):
            await streams.asend_to_groups(["session.z"], {"type": "e", "n": number})
            seen.append(len(relayed))
    finally:
        relaying.cancel()
        streams._home_loop = home
        await layer.flush()

    assert seen == [1, 2, 3]


async def test_a_failed_delivery_is_raised_to_the_publisher_on_its_own_loop():
    layer = get_channel_layer()
    home, streams._home_loop = streams._home_loop, asyncio.get_running_loop()

    async def publish():
        await streams.asend_to_groups(["not a valid group!"], {"type": "e"})

    try:
        with pytest.raises(TypeError):
            await asyncio.to_thread(asyncio.run, publish())
    finally:
        streams._home_loop = home
        await layer.flush()
