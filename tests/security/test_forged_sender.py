"""A message's sender is the signed-in user, never what the client says: a `sender`
(or any other unknown field) sent with a message is refused, and nothing is stored."""

import pytest
from asgiref.sync import sync_to_async as sync

from agents.models import Event, Run
from tests.agents.test_consumers import TIMEOUT, auth, open_socket

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "weather_sentiment"
FORGED = {"id": 1, "username": "alice"}


@pytest.fixture
def mallory(make_user):
    return make_user("mallory")


def test_a_sender_sent_over_rest_is_refused(
    alice, mallory, demo_agents, start_session, api_for
):
    session = start_session(mallory, AGENT)

    refused = api_for(mallory).post(
        f"/api/sessions/{session}/messages/",
        {"text": "hello", "sender": {**FORGED, "id": alice.pk}},
        format="json",
    )

    assert refused.status_code == 400
    assert "sender" in refused.json()
    assert not Run.objects.filter(session_id=session).exists()
    assert not Event.objects.filter(session_id=session).exists()


async def test_a_sender_sent_on_the_socket_is_refused(
    alice, mallory, demo_agents, start_session
):
    session = await sync(start_session)(mallory, AGENT)
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(mallory))

    await socket.send_json_to(
        {
            "type": "message",
            "text": "hello",
            "ref": "m1",
            "sender": {**FORGED, "id": alice.pk},
        }
    )

    refused = await socket.receive_json_from(timeout=TIMEOUT)
    assert refused["type"] == "error" and refused["ref"] == "m1"
    assert refused["error"]["code"] == "bad_frame"
    assert "sender" in refused["error"]["message"]
    assert await socket.receive_nothing(timeout=0.3)
    assert not await Run.objects.filter(session_id=session).aexists()
    await socket.disconnect()
