"""ADK 2.x Workflow graphs as Toolcrib agents, each beside ADK's own Runner.

The graphs are in tests/agents/workflow_agents.py, written as ADK's workflow
examples write them. The reference is ADK's own `adk api_server`, started here on
the same module: the same nodes must run, with the same outputs and the same final
output.
"""

import os
import subprocess
from collections.abc import Iterator

import httpx
import pytest
from asgiref.sync import sync_to_async as sync

from agents.adk.builder import load_code_agent, sync_code_agents
from agents.models import AgentSpec, Request, Run
from agents.tokens import issue_token
from project.asgi import application
from tests.agents import workflow_agents
from tests.agents.a2a.conftest import rpc, text_message
from tests.agents.test_consumers import ack_and_turn, auth, open_socket
from tests.live.server import BIN, ROOT, free_port, stop, wait_for_port

pytestmark = pytest.mark.django_db(transaction=True)

MODULE = "tests.agents.workflow_agents"
APPS = [
    "triage",
    "flaky_pipeline",
    "broken_pipeline",
    "greeter",
    "forecast_flow",
    "planner",
    "refunds",
]
TEST_AGENTS = [f"{MODULE}.{name}" for name in APPS]


@pytest.fixture
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, *TEST_AGENTS]
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture(scope="module")
def adk_api_server(tmp_path_factory) -> Iterator[str]:
    """ADK's own `adk api_server` on the same workflows, on this machine."""
    yield from serve_under_adk(tmp_path_factory.mktemp("adk_apps"), MODULE, APPS)


def serve_under_adk(apps, module: str, names: list[str]) -> Iterator[str]:
    """`adk api_server` on `module`'s agents `names` (one app folder each, as `adk`
    expects: `<app>/agent.py` with `root_agent`); yields its URL."""
    for name in names:
        folder = apps / name
        folder.mkdir()
        (folder / "__init__.py").write_text("from . import agent\n")
        (folder / "agent.py").write_text(f"from {module} import {name} as root_agent\n")
    port = free_port()
    command = [
        str(BIN / "adk"),
        "api_server",
        "--host=127.0.0.1",
        f"--port={port}",
        "--no-reload",
        "--log_level=warning",
        str(apps),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (apps / "adk.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
        try:
            wait_for_port(port, process)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(process)


def adk_run(server: str, app: str, session: str, message: dict) -> list[dict]:
    """The events of one turn under ADK's api_server (its /run answers them all)."""
    response = httpx.post(
        f"{server}/run",
        json={
            "app_name": app,
            "user_id": "u",
            "session_id": session,
            "new_message": message,
        },
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def adk_session(server: str, app: str) -> str:
    response = httpx.post(f"{server}/apps/{app}/users/u/sessions", json={}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["id"]


def adk_nodes(events: list[dict]) -> list[tuple[str, object]]:
    """(node path, output) of each node event ADK's api_server answered."""
    return [
        (e["nodeInfo"]["path"], e.get("output"))
        for e in events
        if (e.get("nodeInfo") or {}).get("path") and not e.get("partial")
    ]


def adk_turn(server: str, app: str, text: str) -> list[tuple[str, object]]:
    session = adk_session(server, app)
    message = {"role": "user", "parts": [{"text": text}]}
    return adk_nodes(adk_run(server, app, session, message))


def by_path(seen: tuple[str, object]) -> str:
    return seen[0]


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
    adk_api_server, agents, alice, start_session, say, events_of, agent, text, last
):
    reference = adk_turn(adk_api_server, agent, text)
    session = start_session(alice, agent)

    run = say(alice, session, text)

    assert run["status"] == "succeeded", run
    ours = node_events(events_of(alice, session))
    # A fan-out's branches may finish in either order: the same nodes, each once.
    assert sorted(ours, key=by_path) == sorted(reference, key=by_path)
    assert ours[-1] == reference[-1] == (ours[-1][0], last)
    kinds = {f["event"]["kind"] for f in events_of(alice, session)}
    assert "node_output" in kinds and "event" not in kinds


def test_a_retried_node_ends_the_run_succeeded_with_its_failed_attempt_shown(
    adk_api_server, agents, alice, start_session, say, events_of
):
    workflow_agents.ATTEMPTS.clear()
    reference = adk_turn(adk_api_server, "flaky_pipeline", "go")
    session = start_session(alice, "flaky_pipeline")

    run = say(alice, session, "go")

    assert run["status"] == "succeeded", run
    frames = [f["event"] for f in events_of(alice, session)]
    failed = [e for e in frames if e["kind"] == "error"]
    assert [(e["node"]["path"], e["error"]["code"]) for e in failed] == [
        ("flaky_pipeline@1/flaky_fetch@1", "ConnectionError")
    ]
    ours = node_events(events_of(alice, session))
    assert ours == reference
    assert ours[-1] == ("flaky_pipeline@1/publish@1", "published fetched")


def adk_answered_greeter(server: str) -> list[tuple[str, object]]:
    """The greeter under ADK's api_server: asked, then answered "Ada"."""
    session = adk_session(server, "greeter")
    asked = adk_run(
        server, "greeter", session, {"role": "user", "parts": [{"text": "hello"}]}
    )
    [call_id] = [
        e["longRunningToolIds"][0] for e in asked if e.get("longRunningToolIds")
    ]
    answer = {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": call_id,
                    "name": "adk_request_input",
                    "response": {"result": "Ada"},
                }
            }
        ],
    }
    return adk_nodes(asked) + adk_nodes(adk_run(server, "greeter", session, answer))


def test_a_request_for_input_waits_in_the_inbox_and_its_answer_completes_it(
    adk_api_server, agents, alice, start_session, say, api_for, events_of
):
    reference = adk_answered_greeter(adk_api_server)
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
    ours = node_events(events_of(alice, session))
    assert ours[-1] == reference[-1] == ("greeter@1/welcome@1", "Welcome, Ada!")
    assert [path for path, _ in ours] == [path for path, _ in reference]
    assert Run.objects.filter(session_id=session).count() == 2


def test_an_agent_node_and_a_tool_node_run_as_adk_runs_them(
    adk_api_server, agents, alice, start_session, say, events_of
):
    reference = adk_turn(adk_api_server, "forecast_flow", "weather please")
    session = start_session(alice, "forecast_flow")

    run = say(alice, session, "weather please")

    assert run["status"] == "succeeded", run
    ours = node_events(events_of(alice, session))
    assert ours == reference
    assert ours[-1] == ("forecast_flow@1/shout@1", {"shout": "FORECAST DONE"})
    texts = [
        f["event"]["text"] for f in events_of(alice, session) if f["event"]["text"]
    ]
    assert "Sunny in Paris." in texts


async def test_node_events_stream_live_with_their_node_path_and_output(
    agents, alice, start_session
):
    session = await sync(start_session)(alice, "triage")
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    await socket.send_json_to({"type": "message", "text": "my bill is wrong"})
    _, frames = await ack_and_turn(socket)
    await socket.disconnect()

    live = [f["event"] for f in frames if f["event"]["kind"] == "node_output"]
    assert {e["node"]["path"] for e in live} >= {
        "triage@1/classify@1",
        "triage@1/billing@1",
        "triage@1/both_checks@1",
        "triage@1/report@1/summarize@1",
    }
    summary = next(e for e in live if e["node"]["path"].endswith("summarize@1"))
    assert summary["node"]["output"] == "summary of checks: account ok, history ok"
    # The nested workflow's output is the outer one's too.
    assert "triage@1" in summary["node"]["output_for"]
    assert all(
        f["seq"] is not None for f in frames if f["event"]["kind"] == "node_output"
    )


def test_a_workflow_an_agent_calls_as_a_tool_runs_its_nodes_as_adk_does(
    adk_api_server, agents, alice, start_session, say, events_of
):
    reference = adk_turn(adk_api_server, "planner", "check oslo")
    session = start_session(alice, "planner")

    run = say(alice, session, "check oslo")

    assert run["status"] == "succeeded", run
    frames = events_of(alice, session)
    ours = node_events(frames)
    # The call's id is in the workflow's path: each side's own.
    assert [(p.split("/")[-1], o) for p, o in ours] == [
        (p.split("/")[-1], o) for p, o in reference
    ]
    shouted = [o for p, o in ours if p.endswith("/shout@1")]
    assert shouted == [{"shout": "OSLO IS SUNNY"}]
    result = [r for f in frames for r in f["event"]["function_responses"]]
    assert [(r["name"], r["response"]) for r in result] == [
        ("weather_check", {"shout": "OSLO IS SUNNY"})
    ]


@pytest.mark.parametrize(
    ("confirmed", "refunded", "output"),
    [
        (True, ["refund"], "refunded"),
        (False, [], {"error": "This tool call is rejected."}),
    ],
)
def test_a_node_confirmation_waits_in_the_inbox_and_runs_the_node_once_confirmed(
    agents, alice, start_session, say, api_for, events_of, confirmed, refunded, output
):
    workflow_agents.REFUNDS.clear()
    session = start_session(alice, "refunds")

    run = say(alice, session, "refund order 7")

    assert (run["status"], run["waiting_for"]) == ("waiting", "result")
    assert workflow_agents.REFUNDS == []
    request = Request.objects.get(session_id=session)
    assert "refund" in request.description
    answered = api_for(alice).post(
        f"/api/sessions/{session}/function-responses/?wait=1",
        {"call_id": request.call_id, "response": {"confirmed": confirmed}},
        format="json",
    )
    assert answered.status_code == 200, answered.content
    assert workflow_agents.REFUNDS == refunded
    assert answered.json()["status"] == "succeeded"
    last = node_events(events_of(alice, session))[-1]
    assert last == ("refunds@1/refund@1", output)


def test_the_trace_names_each_node_with_its_path_and_output(
    agents, alice, start_session, say, api_for
):
    session = start_session(alice, "triage")
    run = say(alice, session, "I need help")

    trace = api_for(alice).get(f"/api/runs/{run['id']}/trace/").json()

    names = [s["name"] for s in trace["spans"]]
    assert {"invoke_node classify", "invoke_node support"} <= set(names)
    assert {"invoke_workflow report", "invoke_node summarize"} <= set(names)
    stored = {
        s["attributes"]["toolcrib.node.path"]: s["attributes"]["toolcrib.node.output"]
        for s in trace["spans"]
        if "toolcrib.node.path" in s["attributes"]
    }
    assert stored["triage@1/report@1/summarize@1"] == '"summary of support team"'


def test_a_node_that_asks_again_under_its_fixed_id_makes_a_new_request(
    agents, alice, start_session, say, api_for
):
    # ADK asks a node's confirmation under one id per node path, in every turn.
    workflow_agents.REFUNDS.clear()
    session = start_session(alice, "refunds")
    client = api_for(alice)
    url = f"/api/sessions/{session}/function-responses/?wait=1"

    for turn in (1, 2):
        run = say(alice, session, f"refund order {turn}")
        assert (run["status"], run["waiting_for"]) == ("waiting", "result"), turn
        [pending] = Request.objects.filter(session_id=session, status="pending")
        # Answered by the id the timeline shows (ADK's), as the first one was.
        adk_id = "wf_tool_confirmation:refunds@1/refund@1"
        answered = client.post(
            url, {"call_id": adk_id, "response": {"confirmed": True}}, format="json"
        )
        assert answered.status_code == 200, answered.content
        assert answered.json()["status"] == "succeeded"

    assert workflow_agents.REFUNDS == ["refund", "refund"]
    assert Request.objects.filter(session_id=session, status="answered").count() == 2


def test_a_node_that_fails_its_last_attempt_fails_the_run(
    adk_api_server, agents, alice, start_session, say, events_of
):
    adk_id = adk_session(adk_api_server, "broken_pipeline")
    under_adk = httpx.post(
        f"{adk_api_server}/run",
        json={
            "app_name": "broken_pipeline",
            "user_id": "u",
            "session_id": adk_id,
            "new_message": {"role": "user", "parts": [{"text": "go"}]},
        },
        timeout=30,
    )
    session = start_session(alice, "broken_pipeline")

    run = say(alice, session, "go")

    assert run["status"] == "failed", run
    frames = [f["event"] for f in events_of(alice, session)]
    attempts = [e for e in frames if e["kind"] == "error" and e["node"]]
    assert [e["node"]["path"] for e in attempts] == [
        "broken_pipeline@1/always_down@1"
    ] * 2
    # ADK's server fails the turn too (its /run answers an error).
    assert under_adk.status_code == 500
    assert not any(
        e["node"] and e["node"]["path"].endswith("/publish@1") for e in frames
    )


def test_the_agents_api_describes_a_workflow_and_its_nodes(agents, alice, api_for):
    listed = api_for(alice).get("/api/agents/").json()
    triage = next(a for a in listed if a["name"] == "triage")

    assert triage["kind"] == "workflow"
    shown = api_for(alice).get("/api/agents/forecast_flow/").json()
    assert shown["kind"] == "workflow"
    tree = shown["tree"]
    nodes = {node["name"]: node for node in tree["sub_agents"]}
    assert list(nodes) == ["forecaster", "to_shout", "shout"]
    assert nodes["forecaster"]["tools"] == [{"name": "lookup_weather"}]
    assert nodes["shout"]["tools"] == [{"name": "shout"}]


async def test_a_workflow_served_over_a2a_has_a_card_with_its_nodes_tools(agents):
    # The A2A edge is in front of Django's ASGI app (agents/a2a/server.py).
    await sync(AgentSpec.objects.filter(name="forecast_flow").update)(a2a=True)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application), base_url="http://testserver"
    ) as client:
        card = await client.get("/a2a/forecast_flow/.well-known/agent-card.json")

    assert card.status_code == 200, card.text
    skills = [skill["id"] for skill in card.json()["skills"]]
    assert skills == ["forecast_flow", "lookup_weather", "shout"]


@pytest.mark.parametrize(
    ("agent", "text", "reply"),
    [
        ("triage", "my bill is wrong", "summary of checks: account ok, history ok"),
        (
            "forecast_flow",
            "weather please",
            'Sunny in Paris. {"shout": "FORECAST DONE"}',
        ),
    ],
)
async def test_a_workflows_output_is_its_a2a_tasks_reply(
    agents, alice, agent, text, reply
):
    await sync(AgentSpec.objects.filter(name=agent).update)(a2a=True)
    token = await sync(issue_token)(user=alice)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application),
        base_url="http://testserver",
        headers={"Authorization": f"Bearer {token}"},
    ) as client:
        sent = await client.post(
            f"/a2a/{agent}/", json=rpc("message/send", text_message(text))
        )

    task = sent.json()["result"]
    assert task["status"]["state"] == "completed", task
    [artifact] = task["artifacts"]
    assert " ".join(part["text"] for part in artifact["parts"]) == reply
