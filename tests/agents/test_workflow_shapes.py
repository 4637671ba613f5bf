"""More ADK 2.x Workflow shapes (tests/agents/workflow_shapes.py) in Toolcrib,
each compared with what ADK's own `adk api_server` does with the same agent."""

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from asgiref.sync import sync_to_async as sync

from agents.adk.builder import sync_code_agents
from agents.models import AgentSpec, Request, Run
from agents.tokens import issue_token
from project.asgi import application
from tests.agents import workflow_shapes
from tests.agents.a2a.conftest import rpc, text_message
from tests.agents.requests.test_inbox_socket import open_inbox, ring, rings
from tests.agents.test_consumers import auth, open_socket
from tests.agents.test_workflows import (
    adk_nodes,
    adk_run,
    adk_session,
    adk_turn,
    by_path,
    node_events,
    serve_under_adk,
)

pytestmark = pytest.mark.django_db(transaction=True)

MODULE = "tests.agents.workflow_shapes"
APPS = [
    "llm_router",
    "counter",
    "fan_out",
    "drafts",
    "concierge",
    "dynamic",
    "slow",
    "vault",
    "sleepy",
    "counting",
]


@pytest.fixture
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        *(f"{MODULE}.{name}" for name in APPS),
    ]
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture(scope="module")
def adk_server(tmp_path_factory) -> Iterator[str]:
    yield from serve_under_adk(tmp_path_factory.mktemp("adk_shapes"), MODULE, APPS)


def adk_state(server: str, app: str, session: str) -> dict:
    response = httpx.get(f"{server}/apps/{app}/users/u/sessions/{session}", timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["state"]


@pytest.mark.parametrize(
    ("text", "last"),
    [("I want my money back", "refund desk"), ("how do I log in?", "help desk")],
)
def test_an_llm_nodes_answer_routes_the_workflow_as_adk_does(
    adk_server, agents, alice, start_session, say, events_of, text, last
):
    reference = adk_turn(adk_server, "llm_router", text)
    session = start_session(alice, "llm_router")

    run = say(alice, session, text)

    assert run["status"] == "succeeded", run
    ours = node_events(events_of(alice, session))
    assert ours == reference
    assert ours[-1][1] == last


def test_state_passes_between_nodes_through_a_loop_as_under_adk(
    adk_server, agents, alice, start_session, say, events_of, api_for
):
    adk_id = adk_session(adk_server, "counter")
    message = {"role": "user", "parts": [{"text": "sheep"}]}
    reference = adk_nodes(adk_run(adk_server, "counter", adk_id, message))
    session = start_session(alice, "counter")

    run = say(alice, session, "sheep")

    assert run["status"] == "succeeded", run
    frames = events_of(alice, session)
    ours = node_events(frames)
    assert ours == reference
    assert [o for p, o in ours if "/count_up@" in p] == [1, 2, 3]
    assert ours[-1] == ("counter@1/tell_count@1", "sheep: counted to 3")
    # The async generator node's message is a text of the timeline, with its node.
    said = [f["event"] for f in frames if f["event"]["text"] == "Counting sheep."]
    assert [e["node"]["path"] for e in said] == ["counter@1/tell_count@1"]
    state = api_for(alice).get(f"/api/sessions/{session}/state/").json()["session"]
    expected = adk_state(adk_server, "counter", adk_id)
    assert (
        {k: state.get(k) for k in ("count", "topic")}
        == {k: expected.get(k) for k in ("count", "topic")}
        == {"count": 3, "topic": "sheep"}
    )


def test_a_parallel_worker_runs_once_per_item_as_under_adk(
    adk_server, agents, alice, start_session, say, events_of
):
    reference = adk_turn(adk_server, "fan_out", "ash birch cedar")
    session = start_session(alice, "fan_out")

    run = say(alice, session, "ash birch cedar")

    assert run["status"] == "succeeded", run
    ours = node_events(events_of(alice, session))
    assert sorted(ours, key=by_path) == sorted(reference, key=by_path)
    assert ours[-1] == reference[-1] == ("fan_out@1/gather@1", "ASH BIRCH CEDAR")


def adk_drafts(server: str, answers: list[dict]) -> list[tuple[str, object]]:
    session = adk_session(server, "drafts")
    message = {"role": "user", "parts": [{"text": "write"}]}
    seen = adk_nodes(adk_run(server, "drafts", session, message))
    for answer in answers:
        reply = {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "review_draft",
                        "name": "adk_request_input",
                        "response": answer,
                    }
                }
            ],
        }
        seen += adk_nodes(adk_run(server, "drafts", session, reply))
    return seen


async def test_a_person_rejects_then_approves_a_draft_over_the_socket(
    adk_server, agents, alice, start_session
):
    answers = [{"approved": False}, {"approved": True}]
    reference = await sync(adk_drafts)(adk_server, answers)
    session = await sync(start_session)(alice, "drafts")
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))

    finished = await turn(socket, {"type": "message", "text": "write"})
    for answer in answers:
        assert finished["run"]["status"] == "waiting", finished
        pending = await sync(list)(
            Request.objects.filter(session_id=session, status="pending")
        )
        assert len(pending) == 1, pending
        assert "Approve draft" in pending[0].description
        finished = await turn(
            socket,
            {
                "type": "function_response",
                "call_id": pending[0].call_id,
                "response": answer,
            },
        )
    await socket.disconnect()

    assert finished["run"]["status"] == "succeeded", finished
    runs = await sync(Run.objects.filter(session_id=session).count)()
    assert runs == 3
    assert reference[-1] == ("drafts@1/publish_draft@1", "published draft 2")
    answered = await sync(
        Request.objects.filter(session_id=session, status="answered").count
    )()
    assert answered == 2


async def turn(socket, frame: dict) -> dict:
    """Send a frame; the turn's run_finished event."""
    await socket.send_json_to(frame)
    while True:
        got = await socket.receive_json_from(timeout=20)
        assert got["type"] != "error", got
        if got["type"] == "event" and got["event"]["kind"] == "run_finished":
            return got["event"]


def test_a_workflow_in_an_agent_tool_does_not_load_as_it_cannot_run_under_adk(
    adk_server, agents, make_user, api_for
):
    # ADK 2.13's AgentTool reads `sub_agents`, which a Workflow has not: ADK's
    # own server answers 500 at the first call. Toolcrib refuses the agent when it
    # loads, says why to staff, and every other agent loads (and is catalogued).
    adk_id = adk_session(adk_server, "concierge")
    under_adk = httpx.post(
        f"{adk_server}/run",
        json={
            "app_name": "concierge",
            "user_id": "u",
            "session_id": adk_id,
            "new_message": {"role": "user", "parts": [{"text": "forecast"}]},
        },
        timeout=30,
    )
    admin = make_user("root", is_staff=True)

    refused = api_for(admin).post(
        "/api/sessions/", {"agent": "concierge"}, format="json"
    )

    assert under_adk.status_code == 500
    assert "concierge" not in agents and "dynamic" in agents
    assert refused.status_code == 400, refused.content
    assert "wraps a workflow" in refused.content.decode()
    assert "put the Workflow itself in the agent's tools" in refused.content.decode()


def test_dynamic_nodes_run_as_under_adk(
    adk_server, agents, alice, start_session, say, events_of
):
    reference = adk_turn(adk_server, "dynamic", "go")
    session = start_session(alice, "dynamic")

    run = say(alice, session, "go")

    assert run["status"] == "succeeded", run
    ours = node_events(events_of(alice, session))
    assert ours == reference
    assert ours[-1] == ("dynamic@1/fetch_both@1", "dynamic Lima: rain")


def test_a_node_past_its_timeout_fails_the_run_with_its_node(
    adk_server, agents, alice, start_session, say, events_of
):
    adk_id = adk_session(adk_server, "slow")
    under_adk = httpx.post(
        f"{adk_server}/run",
        json={
            "app_name": "slow",
            "user_id": "u",
            "session_id": adk_id,
            "new_message": {"role": "user", "parts": [{"text": "go"}]},
        },
        timeout=30,
    )
    session = start_session(alice, "slow")

    run = say(alice, session, "go")

    assert run["status"] == "failed", run
    assert under_adk.status_code == 500
    errors = [
        f["event"] for f in events_of(alice, session) if f["event"]["kind"] == "error"
    ]
    assert [e["node"]["path"] for e in errors if e["node"]] == ["slow@1/slow_node@1"]
    # The node's own limit, said as ADK says it: no model was waited for.
    assert run["error"] == "Node 'slow_node' timed out after 0.2 seconds.", run


def test_a_node_asking_a_credential_waits_in_the_inbox_until_given(
    agents, alice, start_session, say, api_for, events_of
):
    session = start_session(alice, "vault")

    run = say(alice, session, "open")

    assert (run["status"], run["waiting_for"]) == ("waiting", "credential"), run
    listed = api_for(alice).get("/api/requests/").json()
    [asked] = [r for r in listed if r["session"] == session]
    answered = api_for(alice).post(
        f"/api/auth-requests/{asked['id']}/answer/?wait=1",
        {"api_key": "vault-key-1234"},
        format="json",
    )
    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded", answered.json()
    frames = events_of(alice, session)
    assert node_events(frames)[-1] == (
        "vault@1/open_vault@1",
        "vault opened with ****1234",
    )
    assert "vault-key-1234" not in str(frames)


def test_the_trace_names_each_loop_round_and_each_worker(
    agents, alice, start_session, say, api_for, events_of
):
    paths = {}
    for agent, text in (("counter", "sheep"), ("fan_out", "ash birch")):
        session = start_session(alice, agent)
        run = say(alice, session, text)
        trace = api_for(alice).get(f"/api/runs/{run['id']}/trace/").json()
        paths[agent] = {
            s["attributes"]["toolcrib.node.path"]: s["attributes"][
                "toolcrib.node.output"
            ]
            for s in trace["spans"]
            if "toolcrib.node.output" in s["attributes"]
        }
        timeline = {path for path, _ in node_events(events_of(alice, session))}
        assert timeline <= set(paths[agent]), (agent, timeline, paths[agent])

    counted = {p: o for p, o in paths["counter"].items() if "/count_up@" in p}
    assert sorted(counted.values()) == ["1", "2", "3"]
    assert paths["fan_out"]["fan_out@1/gather@1"] == '"ASH BIRCH"'


async def test_a_nodes_question_rings_the_inbox_and_is_answered_from_it(
    agents, alice, bob, start_session, say, api_for
):
    inbox = await open_inbox(alice)
    others = await open_inbox(bob)
    session = await sync(start_session)(alice, "drafts")

    run = await sync(say)(alice, session, "write")

    assert (run["status"], run["waiting_for"]) == ("waiting", "result"), run
    [asked] = await sync(list)(Request.objects.filter(session_id=session))
    assert [f for f in await rings(inbox) if f["type"] == "request"] == [
        ring("new", asked, "pending")
    ]
    listed = await sync(requests_of)(alice, api_for)
    [card] = [r for r in listed if r["id"] == asked.pk]
    # It reads as the workflow's question, not as a tool's result to post.
    assert (card["title"], card["description"]) == (
        "Answer the workflow's question",
        "Approve draft 1?",
    )
    assert card["reason"] == (
        "The workflow waits for a person's answer, and goes on with it."
    )
    bobs, alices = await sync(api_for)(bob), await sync(api_for)(alice)
    refused = await sync(bobs.post)(
        f"/api/requests/{asked.pk}/answer/",
        {"response": {"approved": True}},
        format="json",
    )
    answered = await sync(alices.post)(
        f"/api/requests/{asked.pk}/answer/?wait=1",
        {"response": {"approved": True}},
        format="json",
    )
    assert refused.status_code == 404, refused.content
    assert answered.status_code == 200, answered.content
    assert answered.json()["run"]["status"] == "succeeded", answered.json()
    assert ring("answered", asked, "answered") in await rings(inbox)
    assert [f for f in await rings(others) if f["type"] == "request"] == []
    await inbox.disconnect()
    await others.disconnect()


def requests_of(user, api_for) -> list[dict]:
    return api_for(user).get("/api/requests/").json()


async def test_a_workflow_served_over_a2a_asks_its_question_as_input_required(
    agents, alice, api_for
):
    await sync(AgentSpec.objects.filter(name="drafts").update)(a2a=True)
    token = await sync(issue_token)(user=alice)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application),
        base_url="http://testserver",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ) as client:
        sent = await client.post(
            "/a2a/drafts/", json=rpc("message/send", text_message("write"))
        )
        task = sent.json()["result"]
        [asked] = await sync(list)(Request.objects.filter(session_id=task["contextId"]))
        alices = await sync(api_for)(alice)
        await sync(alices.post)(
            f"/api/requests/{asked.pk}/answer/?wait=1",
            {"response": {"approved": True}},
            format="json",
        )
        done = await client.post(
            "/a2a/drafts/", json=rpc("tasks/get", {"id": task["id"]})
        )

    assert task["status"]["state"] == "input-required", task
    said = task["status"]["message"]["parts"][0]["text"]
    assert "Approve draft 1?" in said and f"request {asked.pk}" in said, said
    assert "adk_request_input" not in said
    assert done.json()["result"]["status"]["state"] == "completed", done.text


async def test_a_cancel_stops_a_running_workflow_and_its_branches(
    agents, alice, start_session, events_of
):
    workflow_shapes.NAPPING.clear()
    workflow_shapes.WOKE.clear()
    session = await sync(start_session)(alice, "sleepy")
    socket = await open_socket(f"/ws/sessions/{session}/", await sync(auth)(alice))
    await socket.send_json_to({"type": "message", "text": "go"})
    ack = await socket.receive_json_from(timeout=10)
    assert ack["type"] == "ack", ack
    # Waited off the sync thread, which the turn's own database calls need.
    napping = sync(workflow_shapes.NAPPING.wait, thread_sensitive=False)
    assert await napping(10)

    await socket.send_json_to({"type": "cancel"})
    finished = None
    while finished is None:
        frame = await socket.receive_json_from(timeout=10)
        if frame["type"] == "event" and frame["event"]["kind"] == "run_finished":
            finished = frame["event"]["run"]
    await socket.disconnect()

    assert finished["status"] == "cancelled", finished
    await asyncio.sleep(0.5)
    assert workflow_shapes.WOKE == []
    run = await sync(Run.objects.get)(session_id=session)
    assert run.status == Run.Status.CANCELLED
    paths = [p for p, _ in node_events(await sync(events_of)(alice, session))]
    assert not any(p.endswith("/after_nap@1") for p in paths), paths


def test_an_answer_that_does_not_fit_the_questions_schema_is_refused(
    adk_server, agents, alice, start_session, say, api_for, events_of
):
    # ADK fails the resumed turn on such an answer, and every answer after it.
    adk_id = adk_session(adk_server, "counting")
    adk_run(adk_server, "counting", adk_id, {"role": "user", "parts": [{"text": "go"}]})
    right = {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "how_many",
                    "name": "adk_request_input",
                    "response": {"result": 4},
                }
            }
        ],
    }
    reference = adk_nodes(adk_run(adk_server, "counting", adk_id, right))
    session = start_session(alice, "counting")
    say(alice, session, "go")
    [asked] = Request.objects.filter(session_id=session)
    url = f"/api/requests/{asked.pk}/answer/?wait=1"

    wrong = api_for(alice).post(url, {"response": {"result": "many"}}, format="json")
    asked.refresh_from_db()
    right = api_for(alice).post(url, {"response": {"result": 4}}, format="json")

    assert wrong.status_code == 400, wrong.content
    assert "response" in wrong.json()
    assert asked.status == "pending"
    assert right.status_code == 200, right.content
    assert right.json()["run"]["status"] == "succeeded"
    ours = node_events(events_of(alice, session))
    assert ours[-1] == reference[-1] == ("counting@1/doubled@1", 8)
