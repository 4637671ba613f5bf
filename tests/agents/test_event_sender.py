"""Who sent a user message: stored with the event, carried by every read of it.

The sender is the signed-in user the message came from, over REST or the socket:
staff writing in someone else's session show as staff, never as the owner.
"""

import pytest
from asgiref.sync import sync_to_async as sync

from agents.events.wire import EventFrame
from agents.models import Event
from tests.agents.test_consumers import (
    ack_and_turn,
    auth,
    frames_until_finished,
    open_socket,
)

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "weather_sentiment"
QUESTION = "weather in london?"


@pytest.fixture
def staff(make_user):
    return make_user("sam", is_staff=True)


def person(user) -> dict:
    return {"id": user.pk, "username": user.username}


def senders(frames: list[dict]) -> list[tuple[str, dict | None]]:
    return [(frame["event"]["kind"], frame["event"]["sender"]) for frame in frames]


def test_a_message_over_rest_records_its_sender_and_replays_it(
    alice, demo_agents, start_session, say, events_of
):
    session = start_session(alice, AGENT)

    say(alice, session, QUESTION)

    frames = events_of(alice, session)
    for frame in frames:
        EventFrame.model_validate(frame)
    assert senders(frames)[:2] == [
        ("run_started", None),
        ("user_message", person(alice)),
    ]
    # Nothing the agent or the system wrote is a person's.
    assert all(sender is None for kind, sender in senders(frames)[2:])
    stored = Event.objects.get(session_id=session, kind="user_message")
    assert stored.sender == alice


def test_staff_writing_in_someones_session_is_stored_as_staff(
    alice, staff, demo_agents, start_session, say, events_of
):
    session = start_session(alice, AGENT)
    say(alice, session, "weather in paris?")

    say(staff, session, QUESTION)

    messages = [
        (frame["event"]["text"], frame["event"]["sender"])
        for frame in events_of(alice, session)
        if frame["event"]["kind"] == "user_message"
    ]
    assert messages == [
        ("weather in paris?", person(alice)),
        (QUESTION, person(staff)),
    ]


async def test_staff_message_reaches_the_owners_socket_live_as_staffs(
    alice, staff, demo_agents, start_session
):
    session = await sync(start_session)(alice, AGENT)
    owner = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))
    writer = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(staff))

    await writer.send_json_to({"type": "message", "text": QUESTION, "ref": "m1"})

    ack, _ = await ack_and_turn(writer)
    assert ack["ref"] == "m1"
    live = await frames_until_finished(owner)
    message = next(f for f in live if f["event"]["kind"] == "user_message")
    assert message["event"]["sender"] == person(staff)
    # A later reader's backlog says the same.
    reader = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))
    backlog = await frames_until_finished(reader)
    assert senders(backlog) == senders([f for f in live if f["seq"] is not None])
    for socket in (owner, writer, reader):
        await socket.disconnect()


def test_the_session_says_whose_it_is(
    alice, staff, demo_agents, start_session, api_for
):
    session = start_session(alice, AGENT)

    seen_by_staff = api_for(staff).get(f"/api/sessions/{session}/").json()
    listed = api_for(alice).get("/api/sessions/").json()

    assert seen_by_staff["owner"] == person(alice)
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [row["owner"] for row in rows] == [person(alice)]


def test_the_event_schema_documents_the_sender(api_for, alice):
    schema = api_for(alice).get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]

    sender = components["WireEvent"]["properties"]["sender"]

    assert {"$ref": "#/components/schemas/Sender"} in sender["anyOf"]
    assert components["Sender"]["required"] == ["id", "username"]
