"""A run's trace over REST: the turn, its agents, model and tool calls, nested."""

import json
import time

import pytest
from rest_framework.test import APIClient

from agents.adk.builder import sync_code_agents
from agents.models import Request, RunSpan
from agents.observability.provider import turn_recorder
from tests.agents import kettle
from tests.agents.secret_agents import SECRETS

pytestmark = pytest.mark.django_db(transaction=True)

SUMMARY_REQUEST = (
    'summarize "Toolcrib runs agents and their tools on Django with live streams '
    'and many users"'
)
KINDS = {k.value for k in RunSpan.Kind}


def trace_of(client: APIClient, run: dict) -> dict:
    response = client.get(f"/api/runs/{run['id']}/trace/")
    assert response.status_code == 200, response.content
    return response.json()


def ancestors(span: dict, by_id: dict[str, dict]) -> list[dict]:
    chain = []
    while span["parent"] in by_id:
        span = by_id[span["parent"]]
        chain.append(span)
    return chain


def named(spans: list[dict], prefix: str) -> list[dict]:
    return [span for span in spans if span["name"].startswith(prefix)]


def test_a_turns_trace_nests_model_and_tool_calls_under_the_turn(
    alice, demo_agents, start_session, say, api_for
):
    session = start_session(alice, "weather_sentiment")
    run = say(alice, session, "weather in london?")

    trace = trace_of(api_for(alice), run)

    head = trace["run"]
    assert head["id"] == run["id"]
    assert (head["session"], head["agent"]) == (session, "weather_sentiment")
    assert head["status"] == "succeeded"
    assert head["model"] == "offline/demo"
    assert (head["model_calls"], head["tool_calls"]) == (2, 1)
    assert head["tokens"]["total"] == run["total_tokens"] > 0
    assert head["duration_ms"] > 0
    spans = trace["spans"]
    turn = spans[0]
    assert (turn["name"], turn["kind"], turn["parent"], turn["offset_ms"]) == (
        "toolcrib.turn",
        "turn",
        None,
        0.0,
    )
    assert turn["attributes"] == {
        "toolcrib.session_id": session,
        "toolcrib.run_id": run["id"],
        "toolcrib.user": "alice",
        "toolcrib.agent": "weather_sentiment",
        "toolcrib.run.status": "succeeded",
    }
    starts = [span["start"] for span in spans]
    assert starts == sorted(starts)
    seen: set[str] = set()
    for span in spans:
        assert span["parent"] is None or span["parent"] in seen
        seen.add(span["id"])
    assert {span["kind"] for span in spans} <= KINDS
    by_id = {span["id"]: span for span in spans}
    models = [span for span in spans if span["name"].startswith("generate_content")]
    tools = named(spans, "execute_tool get_weather_report")
    assert len(models) == 2 and len(tools) == 1
    for span in [*models, *tools]:
        assert turn in ancestors(span, by_id)
        assert span["agent"] == "weather_sentiment_agent"
        assert span["offset_ms"] > 0
        assert span["status"] == "ok"
    assert {span["kind"] for span in models} == {"model"}
    assert tools[0]["kind"] == "tool"
    assert len(named(spans, "toolcrib.event.store")) == 4  # ADK's 4 events
    assert len(named(spans, "toolcrib.event.publish")) >= 4


def test_an_agent_tools_spans_nest_under_its_own_agent(
    alice, demo_agents, start_session, say, api_for
):
    session = start_session(alice, "briefing")
    run = say(alice, session, SUMMARY_REQUEST)

    spans = trace_of(api_for(alice), run)["spans"]

    by_id = {span["id"]: span for span in spans}
    (child,) = named(spans, "invoke_agent summarizer")
    (call,) = named(spans, "execute_tool summarizer")
    (shorten,) = named(spans, "execute_tool shorten")
    assert call["agent"] == "briefing_agent"
    assert child["agent"] == shorten["agent"] == "summarizer"
    assert child in ancestors(shorten, by_id)
    assert named(spans, "invoke_agent briefing_agent")[0] in ancestors(child, by_id)
    summarizer_models = [
        span
        for span in spans
        if span["kind"] == "model" and span["agent"] == "summarizer"
    ]
    assert summarizer_models
    assert all(child in ancestors(span, by_id) for span in summarizer_models)


def test_a_failed_turn_keeps_its_spans_and_leaves_nothing_open(
    alice, demo_agents, start_session, say, api_for, settings
):
    settings.TOOLCRIB_TOOLSETS = {"reactor": "tests.agents.tools.explode_reactor"}
    settings.TOOLCRIB_TOOL_ERRORS_FAIL_TURN = ["plant"]
    staff = type(alice).objects.create_user("ops", password="pw", is_staff=True)
    created = api_for(staff).post(
        "/api/agents/",
        {
            "name": "plant",
            "description": "Runs the plant.",
            "instruction": "Use explode_reactor to explode the reactor.",
            "toolsets": ["reactor"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    session = start_session(alice, "plant")

    run = say(alice, session, 'explode the reactor for "testing"')

    assert run["status"] == "failed"
    spans = trace_of(api_for(alice), run)["spans"]
    assert spans[0]["name"] == "toolcrib.turn"
    assert spans[0]["status"] == "error"
    assert spans[0]["attributes"]["toolcrib.run.status"] == "failed"
    assert named(spans, "execute_tool explode_reactor")[0]["status"] == "error"
    assert len(turn_recorder()) == 0


def test_a_wait_for_a_person_is_a_span_of_the_run_that_waited(
    alice, start_session, say, api_for, settings
):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.toolsets.test_approvals.teller",
    ]
    sync_code_agents()
    session = start_session(alice, "teller")
    run = say(alice, session, "send 500 to bob")
    assert run["status"] == "waiting"
    request = Request.objects.get(session_id=session)
    decided = api_for(alice).post(
        f"/api/approvals/{request.pk}/decide/?wait=1", {"approved": True}, format="json"
    )
    assert decided.status_code == 200, decided.content

    spans = trace_of(api_for(alice), run)["spans"]

    (wait,) = [span for span in spans if span["kind"] == "wait"]
    assert wait["parent"] == spans[0]["id"]
    assert wait["agent"] == "teller"
    assert wait["attributes"]["toolcrib.request.kind"] == "approval"
    assert wait["attributes"]["toolcrib.request.status"] == "approved"
    assert wait["duration_ms"] > 0


def test_with_traces_off_a_run_has_no_spans_and_says_so(
    alice, demo_agents, start_session, say, api_for, settings
):
    settings.TOOLCRIB_TRACES = False
    session = start_session(alice, "weather_sentiment")
    run = say(alice, session, "weather in london?")

    trace = trace_of(api_for(alice), run)

    assert trace["spans"] == []
    assert trace["traces"] == "off"
    assert trace["run"]["model_calls"] == 2
    assert not RunSpan.objects.filter(run_id=run["id"]).exists()


def test_an_ended_run_carries_its_stats_on_run_finished_and_in_the_api(
    alice, demo_agents, start_session, say, api_for, events_of
):
    session = start_session(alice, "weather_sentiment")
    run = say(alice, session, "weather in london?")

    frames = events_of(alice, session)

    started, finished = frames[0]["event"]["run"], frames[-1]["event"]["run"]
    assert started["stats"] is None
    stats = finished["stats"]
    assert stats == run["stats"]
    assert stats["model"] == "offline/demo"
    assert (stats["model_calls"], stats["tool_calls"]) == (2, 1)
    assert stats["tokens"] == {
        "input": run["prompt_tokens"],
        "output": run["completion_tokens"],
    }
    assert stats["duration_ms"] >= 0


def test_a_stopped_turn_keeps_its_spans_up_to_the_stop(
    alice, start_session, api_for, settings
):
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, "tests.agents.kettle.kettle"]
    sync_code_agents()
    kettle.STARTED.clear()
    session = start_session(alice, "kettle")
    client = api_for(alice)
    sent = client.post(
        f"/api/sessions/{session}/messages/", {"text": "boil the kettle"}, format="json"
    )
    run = sent.json()
    assert kettle.STARTED.wait(10), "the slow tool never started"

    client.post(f"/api/runs/{run['id']}/cancel/")

    spans = wait_for(lambda: trace_of(client, run)["spans"])
    turn = spans[0]
    assert turn["name"] == "toolcrib.turn"
    assert turn["attributes"]["toolcrib.run.status"] == "cancelled"
    assert named(spans, "execute_tool wait_for_the_kettle")
    assert len(turn_recorder()) == 0


def wait_for(found, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := found():
            return result
        time.sleep(0.05)
    raise AssertionError("not within the timeout")


def test_a_traces_attributes_show_no_secret_the_turn_met(
    vault_keeper, alice, start_session, say, api_for, monkeypatch
):
    # ADK's own content attributes too: the instruction, messages and arguments.
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv(
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_AND_EVENT"
    )
    session = start_session(alice, vault_keeper)
    run = say(alice, session, "keep and sign me in")

    spans = trace_of(api_for(alice), run)["spans"]

    attributes = json.dumps([span["attributes"] for span in spans])
    assert not [secret for secret in SECRETS if secret in attributes]
    stored = json.dumps(
        list(RunSpan.objects.filter(run_id=run["id"]).values_list("attributes"))
    )
    assert not [secret for secret in SECRETS if secret in stored]
    # Redacted where they were: the preferences ADK rendered into the instruction
    # (ours and ADK's), the arguments of the call (ADK's).
    rendered = "'db_password': '[redacted]'"
    instructions = [
        span["attributes"].get("toolcrib.model.instruction", "") for span in spans
    ]
    assert any(rendered in text for text in instructions)
    assert any(
        rendered in span["attributes"].get("gen_ai.system_instructions", "")
        for span in spans
    )
    (call,) = named(spans, "execute_tool sign_in")
    assert json.loads(call["attributes"]["gen_ai.tool.call.arguments"]) == {
        "username": "ada",
        "password": "[redacted]",
    }
