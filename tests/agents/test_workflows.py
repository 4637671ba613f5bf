"""ADK 2.x Workflow graphs as Toolcrib agents, each beside ADK's own Runner.

The graphs are in tests/agents/workflow_agents.py, written as ADK's workflow
examples write them. ADK's reference is the Runner `adk api_server` builds for an
agent module (in-memory services, no plugins): the same nodes must run, in the same
order of paths, with the same final output.
"""

import asyncio

import pytest
from google.adk.runners import InMemoryRunner
from google.genai import types

from agents.adk.builder import load_code_agent, sync_code_agents
from agents.models import AgentSpec, Request, Run
from tests.agents import workflow_agents

pytestmark = pytest.mark.django_db(transaction=True)

MODULE = "tests.agents.workflow_agents"
TEST_AGENTS = [
    f"{MODULE}.triage",
    f"{MODULE}.flaky_pipeline",
    f"{MODULE}.greeter",
    f"{MODULE}.forecast_flow",
]


@pytest.fixture
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, *TEST_AGENTS]
    return {spec.name: spec for spec in sync_code_agents()}


def adk_reference(root, text: str) -> list[tuple[str, object]]:
    """(node path, output) of each node event under ADK's own Runner."""

    async def run() -> list[tuple[str, object]]:
        runner = InMemoryRunner(node=root, app_name="reference")
        session = await runner.session_service.create_session(
            app_name="reference", user_id="u"
        )
        seen = []
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=types.UserContent(text)
        ):
            if event.node_info.path and not event.partial:
                seen.append((event.node_info.path, _plain(event.output)))
        return seen

    return asyncio.run(run())


def _plain(output):
    if isinstance(output, types.Content):
        return {"parts": [{"text": p.text} for p in output.parts or []], "role": "user"}
    return output


def node_events(frames: list[dict]) -> list[tuple[str, object]]:
    return [
        (f["event"]["node"]["path"], f["event"]["node"]["output"])
        for f in frames
        if f["event"]["node"] and not f["event"]["partial"]
    ]


def test_a_workflow_loads_as_a_code_agent(agents):
    spec = agents["triage"]
    assert spec.kind == AgentSpec.Kind.WORKFLOW
    assert load_code_agent(f"{MODULE}.triage") is workflow_agents.triage


@pytest.mark.parametrize(
    ("agent", "text", "last"),
    [
        ("triage", "my bill is wrong", "summary of checks: account ok, history ok"),
        ("triage", "I need help", "summary of support team"),
    ],
)
def test_routing_fan_out_join_and_nested_workflow_run_every_node_as_adk_does(
    agents, alice, start_session, say, events_of, agent, text, last
):
    reference = adk_reference(workflow_agents.triage, text)
    session = start_session(alice, agent)

    run = say(alice, session, text)

    assert run["status"] == "succeeded", run
    ours = node_events(events_of(alice, session))
    # A fan-out's branches may finish in either order: the same nodes, each once.
    assert sorted(map(repr, ours)) == sorted(map(repr, reference))
    assert ours[-1] == reference[-1] == (ours[-1][0], last)
    kinds = {f["event"]["kind"] for f in events_of(alice, session)}
    assert "node_output" in kinds and "event" not in kinds


def test_a_retried_node_ends_the_run_succeeded_with_its_failed_attempt_shown(
    agents, alice, start_session, say, events_of
):
    workflow_agents.ATTEMPTS.clear()
    reference = adk_reference(workflow_agents.flaky_pipeline, "go")
    session = start_session(alice, "flaky_pipeline")

    run = say(alice, session, "go")

    assert run["status"] == "succeeded", run
    frames = [f["event"] for f in events_of(alice, session)]
    failed = [e for e in frames if e["kind"] == "error"]
    assert [(e["node"]["path"], e["error"]["code"]) for e in failed] == [
        ("flaky_pipeline@1/flaky_fetch@1", "ConnectionError")
    ]
    assert node_events(events_of(alice, session))[-1] == reference[-1]
    assert reference[-1] == ("flaky_pipeline@1/publish@1", "published fetched")


def test_a_request_for_input_waits_in_the_inbox_and_its_answer_completes_it(
    agents, alice, start_session, say, api_for, events_of
):
    session = start_session(alice, "greeter")

    run = say(alice, session, "hello")

    assert (run["status"], run["waiting_for"]) == ("waiting", "result")
    listed = api_for(alice).get("/api/requests/").json()
    asked = [r for r in listed if r["session"] == session]
    assert len(asked) == 1, listed
    request = Request.objects.get(session_id=session)
    assert request.description == "What is your name?"
    answered = api_for(alice).post(
        f"/api/sessions/{session}/function-responses/?wait=1",
        {"call_id": request.call_id, "response": {"result": "Ada"}},
        format="json",
    )
    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded"
    assert node_events(events_of(alice, session))[-1] == (
        "greeter@1/welcome@1",
        "Welcome, Ada!",
    )
    assert Run.objects.filter(session_id=session).count() == 2
