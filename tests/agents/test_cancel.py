"""Stopping a turn (agents.turns.cancel) and sending the last message again
(agents.turns.regenerate): over REST and the session socket, on the embedded
executor."""

import time

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator

from agents.adk.builder import sync_code_agents
from agents.models import Request, Run
from project.asgi import application
from tests.agents import kettle
from tests.agents.test_consumers import auth
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
STOPPED_WITHIN = 1.0


@pytest.fixture
def kettle_session(settings, alice, start_session) -> str:
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, "tests.agents.kettle.kettle"]
    sync_code_agents()
    kettle.STARTED.clear()
    return start_session(alice, "kettle")


def send(client, session: str, text: str) -> dict:
    response = client.post(
        f"/api/sessions/{session}/messages/", {"text": text}, format="json"
    )
    assert response.status_code == 202, response.content
    return response.json()


def boiling(client, session: str) -> dict:
    """A turn blocked in the slow async tool."""
    run = send(client, session, "boil the kettle")
    assert kettle.STARTED.wait(TIMEOUT), "the slow tool never started"
    return run


def wait_for(predicate, timeout: float = TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("not within the timeout")


def kinds_of(events: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in events]


def test_stop_ends_a_turn_blocked_in_a_slow_tool_at_once(
    alice, api_for, kettle_session, events_of
):
    client = api_for(alice)
    run = boiling(client, kettle_session)

    started = time.monotonic()
    response = client.post(f"/api/runs/{run['id']}/cancel/")
    audit = wait_for(
        lambda: ToolCall.objects.filter(run_id=run["id"]).first(), STOPPED_WITHIN
    )
    stopped_in = time.monotonic() - started

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"
    assert response.json()["finished_at"]
    assert stopped_in < STOPPED_WITHIN
    assert (audit.tool_name, audit.status) == ("wait_for_the_kettle", "cancelled")
    assert audit.result_summary.startswith("Cut short")
    events = events_of(alice, kettle_session)
    assert kinds_of(events)[-1] == "run_finished"
    assert events[-1]["event"]["run"]["status"] == "cancelled"
    assert Run.objects.get(pk=run["id"]).status == "cancelled"


def test_the_next_message_runs_right_after_a_stop(alice, api_for, kettle_session, say):
    client = api_for(alice)
    run = boiling(client, kettle_session)
    client.post(f"/api/runs/{run['id']}/cancel/")

    started = time.monotonic()
    after = say(alice, kettle_session, "hello there")

    assert after["status"] == "succeeded"
    assert time.monotonic() - started < 5


def test_stopping_an_ended_run_is_a_clear_409(alice, api_for, kettle_session, say):
    run = say(alice, kettle_session, "hello there")

    response = api_for(alice).post(f"/api/runs/{run['id']}/cancel/")

    assert response.status_code == 409
    assert "already ended (succeeded)" in response.json()["detail"]


def test_a_queued_run_is_stopped_before_it_starts(
    alice, api_for, kettle_session, events_of
):
    client = api_for(alice)
    running = boiling(client, kettle_session)
    queued = send(client, kettle_session, "hello there")

    response = client.post(f"/api/runs/{queued['id']}/cancel/")
    client.post(f"/api/runs/{running['id']}/cancel/")

    assert response.json()["status"] == "cancelled"
    events = events_of(alice, kettle_session)
    started = [e for e in events if e["event"]["kind"] == "run_started"]
    assert [e["event"]["run"]["id"] for e in started] == [running["id"]]
    assert Run.objects.get(pk=running["id"]).status == "cancelled"


def test_a_body_naming_another_run_is_refused(alice, api_for, kettle_session):
    run = boiling(api_for(alice), kettle_session)

    response = api_for(alice).post(
        f"/api/runs/{run['id']}/cancel/",
        {"run": "00000000-0000-0000-0000-000000000000"},
        format="json",
    )
    api_for(alice).post(f"/api/runs/{run['id']}/cancel/")

    assert response.status_code == 400
    assert "run" in response.json()


def test_a_stopped_runs_pending_requests_expire(alice, api_for, kettle_session):
    run = boiling(api_for(alice), kettle_session)
    request = Request.objects.create(
        session_id=kettle_session,
        run_id=run["id"],
        kind=Request.Kind.CALL,
        call_id="call-1",
        tool_name="wait_for_the_kettle",
    )

    api_for(alice).post(f"/api/runs/{run['id']}/cancel/")

    request.refresh_from_db()
    assert request.status == Request.Status.EXPIRED


async def test_a_cancel_frame_stops_the_sessions_current_turn(alice, kettle_session):
    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{kettle_session}/", headers=await sync(auth)(alice)
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    await socket.send_json_to({"type": "message", "text": "boil the kettle"})
    ack = await socket.receive_json_from(timeout=TIMEOUT)
    assert await sync(kettle.STARTED.wait)(TIMEOUT)

    await socket.send_json_to({"type": "cancel"})

    # The ack answers the frame; run_finished is the session's stream: a relay
    # may deliver the event before the consumer has written its ack.
    cancel_ack = finished = None
    while cancel_ack is None or finished is None:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "ack":
            cancel_ack = frame
        if frame["type"] == "event" and frame["event"]["kind"] == "run_finished":
            finished = frame
    assert cancel_ack["run"] == {"id": ack["run"]["id"], "status": "cancelled"}
    assert finished["event"]["run"]["status"] == "cancelled"
    await socket.send_json_to({"type": "cancel"})
    refused = await socket.receive_json_from(timeout=TIMEOUT)
    assert refused["error"]["code"] == "nothing_running"
    await socket.disconnect()


async def test_a_cancel_frame_for_an_ended_run_says_so(alice, kettle_session, say):
    run = await sync(say)(alice, kettle_session, "hello there")
    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{kettle_session}/", headers=await sync(auth)(alice)
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]

    await socket.send_json_to({"type": "cancel", "run": run["id"]})
    await socket.send_json_to({"type": "cancel", "run": "not-a-run-id"})

    frames = []
    while len([f for f in frames if f["type"] == "error"]) < 2:
        frames.append(await socket.receive_json_from(timeout=TIMEOUT))
    errors = [f["error"]["code"] for f in frames if f["type"] == "error"]
    assert errors == ["run_ended", "bad_frame"]
    await socket.disconnect()


def test_regenerate_sends_the_last_message_again_as_a_new_run(
    alice, api_for, kettle_session, say, events_of
):
    first = say(alice, kettle_session, "hello there")

    response = api_for(alice).post(f"/api/sessions/{kettle_session}/regenerate/?wait=1")

    again = response.json()
    assert response.status_code == 200, response.content
    assert (again["status"], again["text"]) == ("succeeded", "hello there")
    assert again["id"] != first["id"]
    kinds = kinds_of(events_of(alice, kettle_session))
    assert kinds.count("user_message") == 2
    assert kinds.count("run_finished") == 2


def test_regenerate_with_no_message_yet_says_so(alice, api_for, kettle_session):
    response = api_for(alice).post(f"/api/sessions/{kettle_session}/regenerate/")

    assert response.status_code == 400
    assert "no message" in response.json()["detail"]


def test_a_stopped_turn_keeps_the_tokens_its_model_calls_used(
    alice, api_for, kettle_session
):
    client = api_for(alice)
    run = boiling(client, kettle_session)  # one model call answered, its tool waits

    client.post(f"/api/runs/{run['id']}/cancel/")

    stored = wait_for(
        lambda: Run.objects.filter(pk=run["id"], total_tokens__gt=0).first()
    )
    assert stored.status == Run.Status.CANCELLED
    assert stored.prompt_tokens > 0
