"""A session's queue of turns, seen and cancelled (agents.turns.cancel): the turns
waiting behind the running one are listed with their messages, and cancelled one
by one or all at once, over REST and the session socket; a cancelled queued turn
never runs, and every open page hears it end."""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator

from agents.models import Run
from project.asgi import application
from tests.agents.test_cancel import (  # noqa: F401
    TIMEOUT,
    boiling,
    kettle_session,
    send,
    wait_for,
)
from tests.agents.test_consumers import auth

pytestmark = pytest.mark.django_db(transaction=True)


def started_runs(events: list[dict]) -> list[str]:
    return [
        frame["event"]["run"]["id"]
        for frame in events
        if frame["event"]["kind"] == "run_started"
    ]


def finished(events: list[dict]) -> dict[str, str]:
    return {
        frame["event"]["run"]["id"]: frame["event"]["run"]["status"]
        for frame in events
        if frame["event"]["kind"] == "run_finished"
    }


def test_the_queue_lists_the_running_turn_then_the_waiting_ones(
    alice,
    api_for,
    kettle_session,  # noqa: F811
):
    client = api_for(alice)
    running = boiling(client, kettle_session)
    first = send(client, kettle_session, "first in line")
    second = send(client, kettle_session, "second in line")

    queue = client.get(f"/api/sessions/{kettle_session}/queue/")
    client.post(f"/api/sessions/{kettle_session}/queue/cancel/", {"running": True})

    assert queue.status_code == 200, queue.content
    assert [(run["id"], run["status"], run["text"]) for run in queue.json()] == [
        (running["id"], "running", "boil the kettle"),
        (first["id"], "queued", "first in line"),
        (second["id"], "queued", "second in line"),
    ]


def test_cancelling_the_queue_ends_every_waiting_turn_and_none_of_them_runs(
    alice,
    api_for,
    kettle_session,  # noqa: F811
    events_of,
):
    client = api_for(alice)
    running = boiling(client, kettle_session)
    first = send(client, kettle_session, "first in line")
    second = send(client, kettle_session, "second in line")

    response = client.post(
        f"/api/sessions/{kettle_session}/queue/cancel/", {}, format="json"
    )

    assert response.status_code == 200, response.content
    assert [(run["id"], run["status"]) for run in response.json()] == [
        (first["id"], "cancelled"),
        (second["id"], "cancelled"),
    ]
    assert Run.objects.get(pk=running["id"]).status == "running"
    remaining = client.get(f"/api/sessions/{kettle_session}/queue/").json()
    assert [run["id"] for run in remaining] == [running["id"]]
    # The running turn stopped: the cancelled ones still never start.
    client.post(f"/api/runs/{running['id']}/cancel/")
    after = send(client, kettle_session, "hello there")
    wait_for(lambda: Run.objects.get(pk=after["id"]).status == "succeeded")
    events = events_of(alice, kettle_session)
    assert started_runs(events) == [running["id"], after["id"]]
    assert finished(events) == {
        first["id"]: "cancelled",
        second["id"]: "cancelled",
        running["id"]: "cancelled",
        after["id"]: "succeeded",
    }


def test_stop_all_stops_the_running_turn_too(alice, api_for, kettle_session):  # noqa: F811
    client = api_for(alice)
    running = boiling(client, kettle_session)
    queued = send(client, kettle_session, "first in line")

    response = client.post(
        f"/api/sessions/{kettle_session}/queue/cancel/",
        {"running": True},
        format="json",
    )
    again = client.post(f"/api/sessions/{kettle_session}/queue/cancel/")

    assert [run["id"] for run in response.json()] == [running["id"], queued["id"]]
    assert set(Run.objects.values_list("status", flat=True)) == {"cancelled"}
    assert (again.status_code, again.json()) == (200, [])


def test_one_waiting_turn_is_cancelled_by_its_run_and_the_rest_wait_on(
    alice,
    api_for,
    kettle_session,  # noqa: F811
):
    client = api_for(alice)
    running = boiling(client, kettle_session)
    first = send(client, kettle_session, "first in line")
    second = send(client, kettle_session, "second in line")

    client.post(f"/api/runs/{first['id']}/cancel/")

    queue = client.get(f"/api/sessions/{kettle_session}/queue/").json()
    assert [run["id"] for run in queue] == [running["id"], second["id"]]
    client.post(f"/api/sessions/{kettle_session}/queue/cancel/", {"running": True})


def test_a_bad_body_is_a_400_before_the_session_is_looked_up(alice, api_for):
    response = api_for(alice).post(
        "/api/sessions/no-such-session/queue/cancel/",
        {"running": "sometimes", "all": 1},
        format="json",
    )

    assert response.status_code == 400
    assert set(response.json()) == {"running", "all"}


async def test_a_cancel_queue_frame_cancels_the_waiting_turns(
    alice,
    api_for,
    kettle_session,  # noqa: F811
):
    client = await sync(api_for)(alice)
    running = await sync(boiling)(client, kettle_session)
    queued = await sync(send)(client, kettle_session, "first in line")
    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{kettle_session}/", headers=await sync(auth)(alice)
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]

    await socket.send_json_to({"type": "cancel_queue"})

    ack = ended = None
    while ack is None or ended is None:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "ack":
            ack = frame
        if (
            frame["type"] == "event"
            and frame["event"]["kind"] == "run_finished"
            and frame["event"]["run"]["id"] == queued["id"]
        ):
            ended = frame
    assert ack["run"] is None
    assert ack["cancelled"] == [{"id": queued["id"], "status": "cancelled"}]
    assert ended["event"]["run"]["status"] == "cancelled"
    assert (await Run.objects.aget(pk=running["id"])).status == "running"

    await socket.send_json_to({"type": "cancel_queue", "running": True})
    await socket.send_json_to({"type": "cancel_queue", "running": "x"})

    frames = []
    while not any(f["type"] == "error" for f in frames):
        frames.append(await socket.receive_json_from(timeout=TIMEOUT))
    acks = [f for f in frames if f["type"] == "ack"]
    assert acks[0]["cancelled"] == [{"id": running["id"], "status": "cancelled"}]
    assert [f["error"]["code"] for f in frames if f["type"] == "error"] == ["bad_frame"]
    await socket.disconnect()
