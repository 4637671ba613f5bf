"""Another user's turn cannot be stopped or sent again: over REST (404, as for every
session object) and over the session socket (its socket refuses the stranger; a
run of another session named on one's own socket is no such run). Staff may."""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator

from agents.models import Run
from agents.realtime.consumers import CLOSE_NOT_FOUND
from project.asgi import application
from tests.agents.test_cancel import boiling, kettle_session  # noqa: F401
from tests.agents.test_consumers import auth

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


async def socket_of(user, session: str) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{session}/", headers=await sync(auth)(user)
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    return socket


def test_a_stranger_cannot_stop_a_turn_over_rest(
    alice,
    bob,
    api_for,
    kettle_session,  # noqa: F811
):
    run = boiling(api_for(alice), kettle_session)

    refused = api_for(bob).post(f"/api/runs/{run['id']}/cancel/")
    regenerate = api_for(bob).post(f"/api/sessions/{kettle_session}/regenerate/")

    assert refused.status_code == 404
    assert regenerate.status_code == 404
    assert Run.objects.get(pk=run["id"]).status == "running"
    api_for(alice).post(f"/api/runs/{run['id']}/cancel/")


def test_staff_may_stop_someone_elses_turn(
    alice,
    make_user,
    api_for,
    kettle_session,  # noqa: F811
):
    staff = make_user("ops", is_staff=True)
    run = boiling(api_for(alice), kettle_session)

    response = api_for(staff).post(f"/api/runs/{run['id']}/cancel/")

    assert response.status_code == 200
    assert Run.objects.get(pk=run["id"]).status == "cancelled"


async def test_a_stranger_cannot_stop_a_turn_over_the_socket(
    alice,
    bob,
    api_for,
    start_session,
    kettle_session,  # noqa: F811
):
    run = await sync(boiling)(await sync(api_for)(alice), kettle_session)
    strangers = WebsocketCommunicator(
        application, f"/ws/sessions/{kettle_session}/", headers=await sync(auth)(bob)
    )
    await strangers.connect(timeout=TIMEOUT)
    closed = await strangers.receive_output(timeout=TIMEOUT)
    own = await socket_of(bob, await sync(start_session)(bob, "kettle"))

    await own.send_json_to({"type": "cancel", "run": run["id"]})

    refused = await own.receive_json_from(timeout=TIMEOUT)
    assert (closed["type"], closed["code"]) == ("websocket.close", CLOSE_NOT_FOUND)
    assert refused["error"]["code"] == "not_found"
    assert (await Run.objects.aget(pk=run["id"])).status == "running"
    await own.disconnect()
    await sync(api_for(alice).post)(f"/api/runs/{run['id']}/cancel/")
