"""agents/turns/loop.py: where a process's turns run. Inline turns run on the
sockets' loop once a socket has bound it, so their frames reach the sockets without
crossing threads; without one, on the process's own loop in a daemon thread."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from agents.doorbell import streams
from agents.turns import drive, loop
from tests.agents.test_consumers import ack_and_turn, auth, open_socket

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def turns_seen(monkeypatch) -> list[asyncio.AbstractEventLoop]:
    """The loop each turn ran on (execute_turn, spied on and run as it is)."""
    seen: list[asyncio.AbstractEventLoop] = []
    execute = drive.execute_turn

    async def spied(run_id) -> None:
        seen.append(asyncio.get_running_loop())
        await execute(run_id)

    monkeypatch.setattr(drive, "execute_turn", spied)
    return seen


async def test_a_message_on_a_socket_runs_its_turn_on_the_sockets_loop(
    alice, demo_agents, start_session, turns_seen
):
    session = await sync_to_async(start_session)(alice, "weather_sentiment")
    headers = await sync_to_async(auth)(alice)
    socket = await open_socket(f"/ws/sessions/{session}/", headers)

    await socket.send_json_to({"type": "message", "text": "weather in london?"})
    ack, frames = await ack_and_turn(socket)
    await socket.disconnect()

    assert ack["type"] == "ack"
    assert frames[-1]["event"]["run"]["status"] == "succeeded"
    assert turns_seen == [asyncio.get_running_loop()]


def test_without_a_sockets_loop_turns_run_on_the_processs_own(monkeypatch):
    monkeypatch.setattr(streams, "_home_loop", None)

    own = loop.turn_loop()

    assert own.is_running()
    assert own is loop.turn_loop()
    assert loop.run_on_turn_loop(asyncio.sleep(0, result="ran")) == "ran"


async def test_a_turn_is_never_waited_for_on_the_loop_it_runs_on(monkeypatch):
    monkeypatch.setattr(streams, "_home_loop", asyncio.get_running_loop())
    waiting = asyncio.sleep(0)

    with pytest.raises(RuntimeError, match="loop it runs on"):
        loop.run_on_turn_loop(waiting)
    waiting.close()
