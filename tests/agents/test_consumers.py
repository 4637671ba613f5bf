"""The websocket protocol through the real ASGI app: auth, backlog, live frames, refusals."""

import json
import time

import pytest
from channels.testing import WebsocketCommunicator

from agents.adk.own_events import record_event
from agents.doorbell import streams
from agents.events.wire import EventFrame
from agents.realtime import consumers
from agents.realtime.consumers import (
    CLOSE_FORBIDDEN,
    CLOSE_NOT_FOUND,
    CLOSE_UNAUTHENTICATED,
)
from agents.tokens import issue_token
from agents.turns import start
from project.asgi import application
from tests.agents.secret_agents import SECRETS

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


def token_of(user) -> str:
    return issue_token(user=user)


async def open_socket(
    path: str, headers: list[tuple[bytes, bytes]] | None = None
) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, path, headers=headers or [])
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


def auth(user) -> list[tuple[bytes, bytes]]:
    return [(b"authorization", f"Token {token_of(user)}".encode())]


async def close_code(communicator: WebsocketCommunicator) -> int:
    message = await communicator.receive_output(timeout=TIMEOUT)
    assert message["type"] == "websocket.close"
    return message["code"]


async def frames_until_finished(communicator: WebsocketCommunicator) -> list[dict]:
    frames = []
    while True:
        frame = await communicator.receive_json_from(timeout=TIMEOUT)
        if frame["type"] != "event":
            continue  # control frames (access_changed, ...) are not part of the turn
        frames.append(frame)
        if frame["event"]["kind"] == "run_finished":
            return frames


async def ack_and_turn(communicator: WebsocketCommunicator) -> tuple[dict, list[dict]]:
    """The ack of the frame just sent, which comes before anything the frame
    caused, then the turn's event frames up to its run_finished. Other control
    frames (access_changed, ...) are not the turn's."""
    ack, frames = None, []
    while ack is None or not frames or frames[-1]["event"]["kind"] != "run_finished":
        frame = await communicator.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "ack":
            assert ack is None, frame
            ack = frame
        elif frame["type"] == "event":
            assert ack is not None, f"an event before the frame's ack: {frame}"
            frames.append(frame)
    return ack, frames


@pytest.fixture
def session_of(demo_agents, start_session):
    def make(user, agent: str = "weather_sentiment") -> str:
        return start_session(user, agent)

    return make


async def test_message_frame_streams_the_whole_turn_live(alice, session_of):
    session = await sync(session_of)(alice)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    await socket.send_json_to({"type": "message", "text": "weather in london?"})

    ack, frames = await ack_and_turn(socket)
    assert ack["run"]["id"]
    for frame in frames:
        EventFrame.model_validate(frame)
    stored = [f for f in frames if f["seq"] is not None]
    assert [f["seq"] for f in stored] == list(range(1, len(stored) + 1))
    assert [f["event"]["kind"] for f in stored] == [
        "run_started",
        "user_message",
        "function_call",
        "function_response",
        "text",
        "run_finished",
    ]
    partials = [f for f in frames if f["seq"] is None]
    assert partials and all(
        f["event"]["partial"] and f["event"]["kind"] == "text" for f in partials
    )
    assert "".join(f["event"]["text"] for f in partials) == stored[4]["event"]["text"]
    await socket.disconnect()


async def test_a_password_argument_and_a_nested_state_secret_are_redacted_live(
    alice, vault_keeper, start_session
):
    session = await sync(start_session)(alice, vault_keeper)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    await socket.send_json_to({"type": "message", "text": "keep and sign me in"})

    _, frames = await ack_and_turn(socket)
    await socket.disconnect()
    calls = [
        call
        for frame in frames
        for call in frame["event"]["function_calls"]
        if call["name"] == "sign_in"
    ]
    assert [call["args"] for call in calls] == [
        {"username": "ada", "password": "[redacted]"}
    ]
    (delta,) = [f["event"]["state_delta"] for f in frames if f["event"]["state_delta"]]
    assert delta["user"]["preferences"]["database"]["db_password"] == "[redacted]"
    assert not [secret for secret in SECRETS if secret in json.dumps(frames)]


async def test_the_ack_comes_before_the_turn_it_started(alice, session_of, monkeypatch):
    """The turn runs while the frame's service is still returning (here it is
    slow to): its first events wait for the ack, which names their run."""
    started = start.start_turn

    def slow_to_return(**kwargs):
        run = started(**kwargs)
        time.sleep(0.5)  # the turn publishes run_started meanwhile
        return run

    monkeypatch.setattr(start, "start_turn", slow_to_return)
    session = await sync(session_of)(alice)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    await socket.send_json_to({"type": "message", "text": "weather in london?"})
    first = await socket.receive_json_from(timeout=TIMEOUT)
    rest = await frames_until_finished(socket)

    assert first["type"] == "ack", first
    assert rest[0]["event"]["kind"] == "run_started"
    assert rest[0]["event"]["run"]["id"] == first["run"]["id"]
    await socket.disconnect()


async def test_reconnect_after_seq_replays_only_what_was_missed(alice, session_of, say):
    session = await sync(session_of)(alice)
    await sync(say)(alice, session, "weather in paris")

    socket = await open_socket(
        f"/ws/sessions/{session}/?after=3", await sync(auth)(alice)
    )

    replayed = []
    while True:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        replayed.append(frame["seq"])
        if frame["event"]["kind"] == "run_finished":
            break
    assert replayed == [4, 5, 6]
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()


async def test_query_token_is_accepted(alice, session_of):
    session = await sync(session_of)(alice)

    socket = await open_socket(
        f"/ws/sessions/{session}/?token={await sync(token_of)(alice)}"
    )

    await socket.send_json_to({"type": "ping"})
    assert await socket.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    await socket.disconnect()


async def test_cookie_login_needs_the_apps_own_origin(alice, session_of, client):
    session = await sync(session_of)(alice)
    await sync(client.force_login)(alice)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    host = (b"host", b"localhost:8000")

    good = await open_socket(
        f"/ws/sessions/{session}/",
        [host, (b"cookie", cookie), (b"origin", b"http://localhost:8000")],
    )
    await good.send_json_to({"type": "ping"})
    assert (await good.receive_json_from(timeout=TIMEOUT))["type"] == "pong"
    await good.disconnect()

    evil = await open_socket(
        f"/ws/sessions/{session}/",
        [host, (b"cookie", cookie), (b"origin", b"https://evil.example")],
    )
    assert await close_code(evil) == CLOSE_FORBIDDEN
    bare = await open_socket(f"/ws/sessions/{session}/", [host, (b"cookie", cookie)])
    assert await close_code(bare) == CLOSE_FORBIDDEN


@pytest.mark.parametrize(
    "headers",
    [[], [(b"authorization", b"Token not-a-token")]],
    ids=["no-token", "bad-token"],
)
async def test_unauthenticated_sockets_are_refused(alice, session_of, headers):
    session = await sync(session_of)(alice)

    socket = await open_socket(f"/ws/sessions/{session}/", headers)

    assert await close_code(socket) == CLOSE_UNAUTHENTICATED


async def test_another_users_session_is_refused(alice, bob, session_of):
    session = await sync(session_of)(alice)

    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(bob))

    assert await close_code(socket) == CLOSE_NOT_FOUND


async def test_staff_may_watch_any_session(alice, make_user, session_of, say):
    session = await sync(session_of)(alice)
    await sync(say)(alice, session, "weather in paris")
    staff = await sync(make_user)(is_staff=True)

    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(staff))

    assert (await socket.receive_json_from(timeout=TIMEOUT))["seq"] == 1
    await socket.disconnect()


@pytest.mark.parametrize(
    "raw, code",
    [
        ("{not json", "bad_json"),
        (json.dumps({"type": "dance"}), "bad_frame"),
        (json.dumps({"type": "message"}), "bad_frame"),
        (json.dumps({"type": "message", "text": "  "}), "bad_frame"),
        (json.dumps(["message"]), "bad_frame"),
    ],
)
async def test_bad_frames_get_an_error_and_the_socket_stays_open(
    alice, session_of, raw, code
):
    session = await sync(session_of)(alice)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    await socket.send_to(text_data=raw)

    error = await socket.receive_json_from(timeout=TIMEOUT)
    assert error["type"] == "error" and error["error"]["code"] == code
    assert error["error"]["message"]
    await socket.send_json_to({"type": "ping"})
    assert (await socket.receive_json_from(timeout=TIMEOUT))["type"] == "pong"
    await socket.disconnect()


async def test_oversized_frame_gets_an_error_and_the_socket_stays_open(
    alice, session_of, settings
):
    settings.TOOLCRIB_WS_MAX_FRAME_BYTES = 100
    session = await sync(session_of)(alice)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    await socket.send_json_to({"type": "message", "text": "x" * 200})

    error = await socket.receive_json_from(timeout=TIMEOUT)
    assert (error["type"], error["error"]["code"]) == ("error", "too_big")
    await socket.send_json_to({"type": "ping"})
    assert (await socket.receive_json_from(timeout=TIMEOUT))["type"] == "pong"
    await socket.disconnect()


async def test_a_backlog_longer_than_a_batch_arrives_whole_and_in_order(
    alice, session_of, say, monkeypatch
):
    session = await sync(session_of)(alice)
    await sync(say)(alice, session, "weather in paris")
    monkeypatch.setattr(consumers, "EVENTS_BATCH", 2)

    socket = await open_socket(
        f"/ws/sessions/{session}/?after=1", await sync(auth)(alice)
    )

    replayed = [
        (await socket.receive_json_from(timeout=TIMEOUT))["seq"] for _ in range(5)
    ]
    assert replayed == [2, 3, 4, 5, 6]
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()


async def test_gap_in_live_frames_sends_lagged_then_replays(alice, session_of, say):
    session = await sync(session_of)(alice)
    await sync(say)(alice, session, "weather in paris")
    socket = await open_socket(
        f"/ws/sessions/{session}/?after=6", await sync(auth)(alice)
    )
    rows = [
        await record_event(
            session_id=session,
            kind="state_delta",
            author="system",
            invocation_id="",
            data={},
        )
        for _ in range(3)
    ]

    # Only the last doorbell rings: the ones for the first two rows were dropped.
    last = rows[-1]
    await streams.asend_to_groups(
        [streams.session_group(session)],
        {
            "type": streams.EVENT_MESSAGE,
            "frame": {"type": "event", "seq": last.seq},
            "agent": "x",
            "owner": alice.pk,
        },
    )

    assert await socket.receive_json_from(timeout=TIMEOUT) == {
        "type": "lagged",
        "after": 6,
    }
    replayed = [
        (await socket.receive_json_from(timeout=TIMEOUT))["seq"] for _ in range(3)
    ]
    assert replayed == [7, 8, 9]
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()


async def test_agent_stream_shows_only_sessions_i_may_see(
    alice, bob, make_user, session_of, say
):
    mine = await sync(session_of)(alice)
    his = await sync(session_of)(bob)
    staff = await sync(make_user)(is_staff=True)
    alices = await open_socket(
        "/ws/agents/weather_sentiment/?kinds=function_call", await sync(auth)(alice)
    )
    staffs = await open_socket(
        "/ws/agents/weather_sentiment/?kinds=function_call", await sync(auth)(staff)
    )

    await sync(say)(bob, his, "weather in paris")
    await sync(say)(alice, mine, "weather in london")

    seen_by_alice = await alices.receive_json_from(timeout=TIMEOUT)
    assert seen_by_alice["session"] == mine
    assert seen_by_alice["event"]["kind"] == "function_call"
    assert await alices.receive_nothing(timeout=0.2)
    staff_sessions = [
        (await staffs.receive_json_from(timeout=TIMEOUT))["session"] for _ in range(2)
    ]
    assert staff_sessions == [his, mine]
    await alices.disconnect()
    await staffs.disconnect()


async def test_firehose_is_staff_only_and_filters(
    alice, bob, make_user, session_of, say
):
    refused = await open_socket("/ws/firehose/", await sync(auth)(alice))
    assert await close_code(refused) == CLOSE_FORBIDDEN
    staff = await sync(make_user)(is_staff=True)
    socket = await open_socket(
        f"/ws/firehose/?user={bob.pk}&kinds=user_message", await sync(auth)(staff)
    )

    await sync(say)(alice, await sync(session_of)(alice), "weather in london")
    await sync(say)(bob, await sync(session_of)(bob), "weather in paris")

    frame = await socket.receive_json_from(timeout=TIMEOUT)
    assert frame["event"]["text"] == "weather in paris"
    assert frame["user"] == bob.username
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()


async def test_the_firehose_filters_by_username_and_names_each_events_user(
    alice, bob, make_user, session_of, say
):
    staff = await sync(make_user)(is_staff=True)
    socket = await open_socket(
        f"/ws/firehose/?user={alice.username},nobody-by-that-name&kinds=user_message",
        await sync(auth)(staff),
    )

    await sync(say)(bob, await sync(session_of)(bob), "weather in paris")
    await sync(say)(alice, await sync(session_of)(alice), "weather in london")

    frame = await socket.receive_json_from(timeout=TIMEOUT)
    assert (frame["event"]["text"], frame["user"]) == ("weather in london", "alice")
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()


def sync(func):
    from asgiref.sync import sync_to_async

    return sync_to_async(func)
