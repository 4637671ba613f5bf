"""A message sent over the session's socket runs on the model picked over REST: the
pick is the session's, checked once as it is made and again as each turn starts,
whichever edge the message came by."""

import pytest
from asgiref.sync import sync_to_async as sync

from agents import model_grants
from agents.model_grants import grant_model
from agents.models import AgentSpec
from tests.agents.test_consumers import ack_and_turn, auth, open_socket

pytestmark = pytest.mark.django_db(transaction=True)

PICKED = "offline/picked"


@pytest.fixture(autouse=True)
def _fresh():
    model_grants.forget()
    yield
    model_grants.forget()


@pytest.fixture
def picked_session(alice, api_for, start_session):
    AgentSpec.objects.create(
        name="picker",
        instruction="Answer.",
        model="offline/demo",
        model_choices=[PICKED],
    )
    session = start_session(alice, "picker")
    response = api_for(alice).patch(
        f"/api/sessions/{session}/", {"model": PICKED}, format="json"
    )
    assert response.status_code == 200, response.content
    return session


async def test_a_socket_message_runs_on_the_model_picked(alice, picked_session):
    socket = await open_socket(
        f"/ws/sessions/{picked_session}/", await sync(auth)(alice)
    )

    await socket.send_json_to({"type": "message", "text": "hello"})

    _, frames = await ack_and_turn(socket)
    finished = frames[-1]["event"]
    assert finished["kind"] == "run_finished"
    assert finished["run"]["stats"]["model"] == PICKED
    await socket.disconnect()


async def test_a_socket_message_after_the_grant_is_revoked_is_refused_with_why(
    alice, picked_session
):
    deny, _ = await sync(grant_model)(model=PICKED, effect="deny", user=alice)
    socket = await open_socket(
        f"/ws/sessions/{picked_session}/", await sync(auth)(alice)
    )

    await socket.send_json_to({"type": "message", "text": "hello"})

    _, frames = await ack_and_turn(socket)
    errors = [f["event"] for f in frames if f["event"]["kind"] == "error"]
    assert errors[0]["error"]["code"] == "MODEL_NOT_GRANTED"
    assert errors[0]["error"]["message"] == (
        f"You may not use the model {PICKED}: denied by grant #{deny.pk} "
        f"(user alice on {PICKED})."
    )
    await socket.disconnect()
