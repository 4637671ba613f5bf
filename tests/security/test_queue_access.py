"""Another user's queue of turns can be neither read nor cancelled: over REST (404,
as for every session object, and the turns wait on), and over the socket (her
session's socket refuses the stranger; his own socket's `cancel_queue` reaches
only his own session). Staff may."""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator

from agents.models import Run
from project.asgi import application
from tests.agents.test_cancel import TIMEOUT, boiling, kettle_session, send  # noqa: F401
from tests.agents.test_consumers import auth

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stranger_cannot_read_or_cancel_a_queue(
    alice,
    bob,
    api_for,
    kettle_session,  # noqa: F811
):
    client = api_for(alice)
    running = boiling(client, kettle_session)
    queued = send(client, kettle_session, "first in line")

    read = api_for(bob).get(f"/api/sessions/{kettle_session}/queue/")
    cancelled = api_for(bob).post(
        f"/api/sessions/{kettle_session}/queue/cancel/",
        {"running": True},
        format="json",
    )
    one = api_for(bob).post(f"/api/runs/{queued['id']}/cancel/")

    assert (read.status_code, cancelled.status_code, one.status_code) == (
        404,
        404,
        404,
    )
    assert "first in line" not in read.content.decode()
    assert Run.objects.get(pk=running["id"]).status == "running"
    assert Run.objects.get(pk=queued["id"]).status == "queued"
    client.post(f"/api/sessions/{kettle_session}/queue/cancel/", {"running": True})


def test_staff_may_cancel_someone_elses_queue(
    alice,
    make_user,
    api_for,
    kettle_session,  # noqa: F811
):
    staff = make_user("ops", is_staff=True)
    client = api_for(alice)
    running = boiling(client, kettle_session)
    queued = send(client, kettle_session, "first in line")

    read = api_for(staff).get(f"/api/sessions/{kettle_session}/queue/")
    response = api_for(staff).post(
        f"/api/sessions/{kettle_session}/queue/cancel/",
        {"running": True},
        format="json",
    )

    assert [run["id"] for run in read.json()] == [running["id"], queued["id"]]
    assert response.status_code == 200
    assert set(Run.objects.values_list("status", flat=True)) == {"cancelled"}


async def test_a_strangers_cancel_queue_frame_reaches_only_his_own_session(
    alice,
    bob,
    api_for,
    start_session,
    kettle_session,  # noqa: F811
):
    client = await sync(api_for)(alice)
    await sync(boiling)(client, kettle_session)
    queued = await sync(send)(client, kettle_session, "first in line")
    own = WebsocketCommunicator(
        application,
        f"/ws/sessions/{await sync(start_session)(bob, 'kettle')}/",
        headers=await sync(auth)(bob),
    )
    assert (await own.connect(timeout=TIMEOUT))[0]

    await own.send_json_to({"type": "cancel_queue", "running": True})

    ack = await own.receive_json_from(timeout=TIMEOUT)
    assert ack["cancelled"] == []
    assert (await Run.objects.aget(pk=queued["id"])).status == "queued"
    await own.disconnect()
    await sync(client.post)(
        f"/api/sessions/{kettle_session}/queue/cancel/", {"running": True}
    )
