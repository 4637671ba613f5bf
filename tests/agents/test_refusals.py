"""A refused message says why in a sentence, and a socket's refusal names the message
it refuses (its `ref`), so a page can give the typed text back."""

import pytest
from asgiref.sync import sync_to_async as sync

from agents.models import Run
from tests.agents.test_consumers import TIMEOUT, auth, open_socket

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "weather_sentiment"
CLOSED = (
    "This session is closed: it takes no new messages or files. Start a new session"
    " with the same agent to go on."
)


@pytest.fixture
def closed_session(alice, demo_agents, start_session, api_for) -> str:
    session = start_session(alice, AGENT)
    assert api_for(alice).post(f"/api/sessions/{session}/close/").status_code == 200
    return session


def test_a_message_to_a_closed_session_is_a_409_with_a_sentence(
    alice, closed_session, api_for
):
    refused = api_for(alice).post(
        f"/api/sessions/{closed_session}/messages/", {"text": "hi"}, format="json"
    )

    assert refused.status_code == 409
    assert refused.json() == {"detail": CLOSED}
    assert not Run.objects.filter(session_id=closed_session).exists()


async def next_control_frame(socket) -> dict:
    """The next frame that is not an event (a closed session's backlog holds its
    `session_closed`)."""
    while True:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if frame["type"] != "event":
            return frame


async def test_a_message_frame_to_a_closed_session_is_refused_by_its_ref(
    alice, closed_session
):
    socket = await open_socket(
        f"/ws/sessions/{closed_session}/", await sync(auth)(alice)
    )

    await socket.send_json_to({"type": "message", "text": "hi", "ref": "m7"})

    refused = await next_control_frame(socket)
    assert refused == {
        "type": "error",
        "error": {"code": "session_closed", "message": CLOSED},
        "ref": "m7",
    }
    await socket.disconnect()


async def test_a_session_closed_while_its_socket_is_open_refuses_the_next_message(
    alice, demo_agents, start_session, api_for
):
    session = await sync(start_session)(alice, AGENT)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))
    closed = await sync(
        lambda: api_for(alice).post(f"/api/sessions/{session}/close/")
    )()

    told = await socket.receive_json_from(timeout=TIMEOUT)  # live, before any message
    await socket.send_json_to({"type": "message", "text": "hi", "ref": "m8"})

    refused = await socket.receive_json_from(timeout=TIMEOUT)
    assert closed.status_code == 200
    assert told["event"]["kind"] == "session_closed", told
    assert refused["type"] == "error", refused
    assert (refused["error"]["code"], refused["ref"]) == ("session_closed", "m8")
    assert not await Run.objects.filter(session_id=session).aexists()
    await socket.disconnect()


async def test_a_frame_too_big_is_refused_by_its_ref(alice, settings, closed_session):
    settings.TOOLCRIB_WS_MAX_FRAME_BYTES = 1000
    socket = await open_socket(
        f"/ws/sessions/{closed_session}/", await sync(auth)(alice)
    )

    await socket.send_json_to({"type": "message", "text": "a" * 2000, "ref": "big"})

    refused = await next_control_frame(socket)
    assert refused["error"]["code"] == "too_big"
    assert refused["ref"] == "big"
    await socket.disconnect()


async def test_a_frame_without_a_ref_is_answered_without_one(
    alice, demo_agents, start_session
):
    session = await sync(start_session)(alice, AGENT)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    await socket.send_json_to({"type": "message", "text": " "})

    refused = await socket.receive_json_from(timeout=TIMEOUT)
    assert refused["error"]["code"] == "bad_frame"
    assert "ref" not in refused
    await socket.disconnect()
