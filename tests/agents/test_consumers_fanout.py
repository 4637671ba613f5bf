"""Many sockets on one session: they share one relay of the layer, and each still
gets every seq once, in order, whenever it joins."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from agents.doorbell import streams
from agents.events.log import arecord_and_publish
from agents.models import Session
from tests.agents.test_consumers import TIMEOUT, auth, open_socket

pytestmark = pytest.mark.django_db(transaction=True)

BURST = 60


@pytest.fixture
def session(demo_agents, alice, start_session) -> Session:
    return Session.objects.get(pk=start_session(alice, "weather_sentiment"))


async def record(session: Session, count: int, pause: float = 0.0) -> int:
    """Record and publish `count` events; the last one's seq."""
    seq = 0
    for step in range(count):
        row = await arecord_and_publish(
            session=session,
            kind="state_delta",
            data={"state_delta": {"session": {"step": step}}},
        )
        seq = row.seq
        await asyncio.sleep(pause)
    return seq


async def seqs_until(socket: WebsocketCommunicator, last: int) -> list[int]:
    seqs: list[int] = []
    while not seqs or seqs[-1] < last:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        assert frame["type"] == "event", frame
        seqs.append(frame["seq"])
    return seqs


async def test_a_socket_joining_during_a_burst_sees_every_seq_once_in_order(
    alice, session
):
    headers = await sync_to_async(auth)(alice)
    early = await open_socket(f"/ws/sessions/{session.id}/", headers)
    burst = asyncio.create_task(record(session, BURST, pause=0.002))
    while (await Session.objects.aget(pk=session.pk)).last_seq < BURST // 3:
        await asyncio.sleep(0.005)

    late = await open_socket(f"/ws/sessions/{session.id}/?after=0", headers)
    last = await burst

    assert await seqs_until(late, last) == list(range(1, last + 1))
    assert await seqs_until(early, last) == list(range(1, last + 1))
    assert await late.receive_nothing(timeout=0.2)
    await early.disconnect()
    await late.disconnect()


async def test_sockets_of_one_session_share_one_layer_subscription(alice, session):
    headers = await sync_to_async(auth)(alice)
    sockets = [
        await open_socket(f"/ws/sessions/{session.id}/", headers) for _ in range(5)
    ]
    layer = streams.get_channel_layer()
    group = layer.groups[streams.session_group(session.id)]

    last = await record(session, 3)

    assert len(group) == 1
    for socket in sockets:
        assert await seqs_until(socket, last) == [1, 2, 3]
    for socket in sockets:
        await socket.disconnect()
    assert streams.session_group(session.id) not in layer.groups


async def test_a_socket_left_alone_and_a_new_one_still_get_live_frames(alice, session):
    headers = await sync_to_async(auth)(alice)
    first = await open_socket(f"/ws/sessions/{session.id}/", headers)
    second = await open_socket(f"/ws/sessions/{session.id}/", headers)
    await second.disconnect()

    assert await seqs_until(first, await record(session, 2)) == [1, 2]
    await first.disconnect()
    third = await open_socket(f"/ws/sessions/{session.id}/?after=2", headers)
    assert await seqs_until(third, await record(session, 2)) == [3, 4]
    await third.disconnect()


async def test_a_socket_whose_access_is_revoked_gets_no_more_frames(
    alice, bob, session
):
    socket = await open_socket(
        f"/ws/sessions/{session.id}/", await sync_to_async(auth)(alice)
    )
    await Session.objects.filter(pk=session.pk).aupdate(owner=bob)

    await streams.asend_to_groups(
        [streams.user_group(alice.pk)], {"type": streams.ACCESS_MESSAGE}
    )
    closed = await socket.receive_output(timeout=TIMEOUT)
    await record(session, 1)

    assert (closed["type"], closed["code"]) == ("websocket.close", 4404)
    assert await socket.receive_nothing(timeout=0.2)
