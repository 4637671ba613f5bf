"""The event inspector, GET /api/sessions/{id}/events/{seq}/inspect/: an event's
wire frame and ids, the model step that produced it (what governance let the model
be offered, what it answered, its tokens), and each of its tool calls' decision,
rule, outcome, attempts and timings; on real turns of the offline model."""

import json

import pytest

from tests.agents.secret_agents import SECRETS
from tests.toolsets.conftest import tool
from toolsets import grants

pytestmark = pytest.mark.django_db(transaction=True)


def inspect(client, session: str, seq: int):
    return client.get(f"/api/sessions/{session}/events/{seq}/inspect/")


def frame_of(frames: list[dict], kind: str) -> dict:
    return next(f for f in frames if f["event"]["kind"] == kind)


def test_a_call_event_shows_the_model_step_and_the_allowed_call(
    catalog, alice, api_for, start_session, say, events_of
):
    session = start_session(alice, "rocketeer")
    run = say(alice, session, "go")
    frames = events_of(alice, session)
    call = frame_of(frames, "function_call")

    body = inspect(api_for(alice), session, call["seq"]).json()

    assert body["event"] == call
    [call_id] = [c["id"] for c in call["event"]["function_calls"]]
    assert body["ids"] == {
        "event_id": call["event"]["id"],
        "invocation_id": call["event"]["invocation_id"],
        "run_id": run["id"],
        "session_id": session,
        "call_ids": [call_id],
    }
    step = body["model_step"]
    assert "launch_rocket" in step["tools"]
    assert step["agent"] == "rocketeer_agent"
    assert step["contents"] >= 1
    assert step["answer"]["function_calls"] == ["launch_rocket"]
    assert step["tokens"]["input"] > 0
    assert step["duration_ms"] >= 0
    [audited] = body["tool_calls"]
    assert audited["call_id"] == call_id
    assert audited["tool"].endswith("launch_rocket")
    assert (audited["status"], audited["decision"], audited["attempts"]) == (
        "ok",
        "allowed",
        1,
    )
    assert audited["rule"] == "toolset rocketeer is open to everyone"
    assert audited["started_at"] <= audited["finished_at"]
    assert audited["duration_ms"] >= 0


def test_the_response_event_shows_the_same_call(
    catalog, alice, api_for, start_session, say, events_of
):
    session = start_session(alice, "rocketeer")
    say(alice, session, "go")
    response = frame_of(events_of(alice, session), "function_response")

    body = inspect(api_for(alice), session, response["seq"]).json()

    assert body["model_step"] is None
    assert [c["status"] for c in body["tool_calls"]] == ["ok"]


def test_a_denied_tool_is_not_offered_and_its_call_shows_the_rule(
    catalog, alice, api_for, start_session, say, events_of
):
    grants.grant_tool(target=tool("rocketeer.launch_rocket"), effect="deny", user=alice)
    session = start_session(alice, "rocketeer")
    say(alice, session, "go")
    call = frame_of(events_of(alice, session), "function_call")

    body = inspect(api_for(alice), session, call["seq"]).json()

    assert "launch_rocket" not in body["model_step"]["tools"]
    assert "read_gauge" in body["model_step"]["tools"]
    [denied] = body["tool_calls"]
    assert (denied["status"], denied["decision"], denied["check"]) == (
        "denied",
        "denied",
        "Access",
    )
    assert denied["rule"].startswith("denied by grant #")
    assert denied["rule"].endswith("user alice on tool rocketeer.launch_rocket")
    assert denied["attempts"] == 0


def test_a_text_event_shows_its_answer_and_tokens(
    alice, demo_agents, api_for, start_session, say, events_of
):
    session = start_session(alice, "weather_sentiment")
    say(alice, session, "weather in london?")
    text = frame_of(events_of(alice, session), "text")

    body = inspect(api_for(alice), session, text["seq"]).json()

    step = body["model_step"]
    assert step["answer"]["text"] == text["event"]["text"]
    assert step["answer"]["function_calls"] == []
    assert step["tokens"]["total"] == step["tokens"]["input"] + step["tokens"]["output"]
    assert body["tool_calls"] == []


def test_a_run_record_has_no_model_step(
    alice, demo_agents, api_for, start_session, say, events_of
):
    session = start_session(alice, "weather_sentiment")
    say(alice, session, "weather in london?")
    started = frame_of(events_of(alice, session), "run_started")

    body = inspect(api_for(alice), session, started["seq"]).json()

    assert body["event"] == started
    assert (body["model_step"], body["tool_calls"]) == (None, [])


def test_an_unknown_seq_is_404_with_a_detail(
    alice, demo_agents, api_for, start_session
):
    session = start_session(alice, "weather_sentiment")

    response = inspect(api_for(alice), session, 999)

    assert response.status_code == 404
    assert "no event 999" in response.json()["detail"]


@pytest.mark.parametrize("seq", ["0x1", "-1", "99999999999999999999999"])
def test_a_malformed_seq_is_404(alice, demo_agents, api_for, start_session, seq):
    session = start_session(alice, "weather_sentiment")

    response = api_for(alice).get(f"/api/sessions/{session}/events/{seq}/inspect/")

    assert response.status_code == 404


def test_an_unknown_session_is_404(alice, api_for):
    response = inspect(api_for(alice), "no-such-session", 1)

    assert response.status_code == 404
    assert response.json()["detail"] == "No such session."


def test_inspecting_an_event_takes_a_fixed_number_of_queries(
    catalog, alice, api_for, start_session, say, events_of, django_assert_num_queries
):
    session = start_session(alice, "rocketeer")
    say(alice, session, "go")
    call = frame_of(events_of(alice, session), "function_call")
    client = api_for(alice)

    # Two for the API token (knox); then the session, the event, its runs, their
    # model spans, the audit rows: whatever the number of events and calls.
    with django_assert_num_queries(7):
        response = inspect(client, session, call["seq"])

    assert response.status_code == 200


def test_an_event_inspected_shows_no_secret_the_turn_met(
    vault_keeper, alice, api_for, start_session, say, events_of
):
    session = start_session(alice, vault_keeper)
    say(alice, session, "keep and sign me in")
    frames = events_of(alice, session)
    call, response = [
        f
        for f in frames
        if [c["name"] for c in f["event"]["function_calls"]] == ["sign_in"]
        or [r["name"] for r in f["event"]["function_responses"]] == ["sign_in"]
    ]

    asked = inspect(api_for(alice), session, call["seq"]).json()
    answered = inspect(api_for(alice), session, response["seq"]).json()

    assert asked["event"]["event"]["function_calls"][0]["args"] == {
        "username": "ada",
        "password": "[redacted]",
    }
    # The step's instruction, with the preferences ADK rendered into it.
    instruction = asked["model_step"]["instruction"]
    assert "'database': {'host': 'db.internal', 'db_password': '[redacted]'}" in (
        instruction
    )
    [audited] = answered["tool_calls"]
    assert audited["args"] == {"username": "ada", "password": "[redacted]"}
    assert json.loads(audited["result_summary"]) == {
        "status": "signed in",
        "note": "checked by the vault keeper",
    }
    assert json.loads(audited["raw_result_summary"]) == {
        "status": "signed in",
        "user": "ada",
        "session_token": "[redacted]",
    }
    shown = json.dumps([asked, answered])
    assert not [secret for secret in SECRETS if secret in shown]
