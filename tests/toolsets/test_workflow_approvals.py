"""A workflow's tool node whose tool needs approval asks as any tool call does.

ADK 2.x's tool node takes a plugin's answer as the tool's result, so the
catalog's approval gate hands it its node's request for confirmation instead
(ADK's own, as for a tool with `require_confirmation`): the request waits in the
approver's inbox, the run `waiting`; approved, the node runs and the workflow
goes on; rejected, the node's output is the refusal. Compared with ADK's own
`adk api_server` running the same workflow with nobody holding it.
"""

import time
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async as sync
from django.utils import timezone

from agents.adk.builder import sync_code_agents
from agents.answers.expiry import expire_due
from agents.models import Request, Run
from tests.agents.test_consumers import auth, open_socket
from tests.agents.test_workflows import (  # noqa: F401 - a fixture
    adk_api_server,
    adk_turn,
    node_events,
)
from toolsets.catalog import sync_catalog
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

FLOW = "tests.agents.workflow_agents.forecast_flow"
PLANNER = "tests.agents.workflow_agents.planner"
SHOUT = "forecast_flow.shout"
SHOUT_PATH = "forecast_flow@1/shout@1"
TIMEOUT = 10


@pytest.fixture
def held_flow(db, toolcrib_settings, api_for, make_user, make_group, bob):
    """forecast_flow, its tool node `shout` needing the approval of bob's group."""
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        FLOW,
        PLANNER,
    ]
    sync_code_agents()
    sync_catalog()
    make_group("shouting-control", bob)
    staff = make_user("root", is_staff=True)
    for name in (SHOUT, "planner.shout"):
        response = api_for(staff).patch(
            f"/api/tools/{name}/",
            {"requires_approval": True, "approver_group": "shouting-control"},
            format="json",
        )
        assert response.status_code == 200, response.content


@pytest.fixture
def held(start_session, say):
    """Alice runs the flow: it stops at `shout`, waiting for its approval."""

    def run(user) -> tuple[str, Request]:
        session = start_session(user, "forecast_flow")
        ran = say(user, session, "weather please")
        assert (ran["status"], ran["waiting_for"]) == ("waiting", "approval"), ran
        request = Request.objects.get(session_id=session, status="pending")
        return session, request

    return run


def answer(api_for, user, request_id: int, body: dict):
    return api_for(user).post(
        f"/api/requests/{request_id}/answer/?wait=1", body, format="json"
    )


def asked_nodes(frames: list[dict]) -> list[tuple[str, object]]:
    """The node events, but the node's request for confirmation (ADK's api_server
    run with nobody holding the tool makes none)."""
    return node_events([f for f in frames if not is_request(f)])


def is_request(frame: dict) -> bool:
    calls = frame["event"]["function_calls"]
    return any(call["name"] == "adk_request_input" for call in calls)


def wait_for_run(session: str, status: str) -> Run:
    deadline = time.monotonic() + TIMEOUT
    while True:
        run = Run.objects.filter(session_id=session).order_by("-created_at").first()
        if run.status == status:
            return run
        assert time.monotonic() < deadline, run.status
        time.sleep(0.05)


def test_a_held_tool_node_waits_in_the_approvers_inbox_and_runs_once_approved(
    adk_api_server,  # noqa: F811
    held_flow,
    alice,
    bob,
    held,
    api_for,
    events_of,
):
    reference = adk_turn(adk_api_server, "forecast_flow", "weather please")
    session, request = held(alice)

    assert request.kind == Request.Kind.APPROVAL
    assert (request.tool_name, request.answer_group) == ("shout", "shouting-control")
    assert request.catalog_tool == SHOUT
    inbox = api_for(bob).get("/api/requests/").json()
    assert [r["id"] for r in inbox if r["session"] == session] == [request.pk]
    held_row = ToolCall.objects.get(tool_name="shout")
    assert held_row.status == ToolCall.Status.AWAITING_APPROVAL
    assert held_row.call_id == request.tool_call_id

    decided = answer(api_for, bob, request.pk, {"approved": True})

    assert decided.status_code == 200, decided.content
    assert decided.json()["run"]["status"] == "succeeded", decided.json()
    ours = asked_nodes(events_of(alice, session))
    assert ours == reference
    assert ours[-1] == (SHOUT_PATH, {"shout": "FORECAST DONE"})
    rows = dict(
        ToolCall.objects.filter(tool_name="shout").values_list("status", "decided_by")
    )
    assert rows == {ToolCall.Status.APPROVED: bob.pk, ToolCall.Status.OK: None}


def test_a_rejected_tool_node_gets_the_refusal_and_the_workflow_goes_on(
    held_flow, alice, bob, held, api_for, events_of
):
    session, request = held(alice)

    decided = answer(api_for, bob, request.pk, {"approved": False})

    assert decided.status_code == 200, decided.content
    assert decided.json()["run"]["status"] == "succeeded", decided.json()
    last = asked_nodes(events_of(alice, session))[-1]
    assert last == (SHOUT_PATH, {"error": "This tool call is rejected."})
    [row] = ToolCall.objects.filter(tool_name="shout")
    assert (row.status, row.decided_by) == (ToolCall.Status.REJECTED, bob)


def test_only_the_approver_decides_a_held_tool_node(
    held_flow, alice, bob, make_user, held, api_for
):
    session, request = held(alice)
    stranger = make_user("carol")

    own = answer(api_for, alice, request.pk, {"approved": True})
    other = answer(api_for, stranger, request.pk, {"approved": True})
    # Nor is it a call whose result the requester may post.
    posted = api_for(alice).post(
        f"/api/sessions/{session}/function-responses/?wait=1",
        {
            "call_id": f"wf_tool_confirmation:{SHOUT_PATH}",
            "response": {"confirmed": True},
        },
        format="json",
    )

    # The requester sees her request but may not decide it; a stranger sees none.
    assert own.status_code == 403, own.content
    assert other.status_code == 404, other.content
    assert posted.status_code == 400, posted.content
    request.refresh_from_db()
    assert request.status == Request.Status.PENDING
    assert Run.objects.filter(session_id=session).count() == 1
    assert ToolCall.objects.get(tool_name="shout").status == "awaiting_approval"


async def test_a_held_tool_node_is_approved_over_the_inbox_socket(
    held_flow, alice, bob, held, events_of
):
    session, request = await sync(held)(alice)
    socket = await open_socket("/ws/inbox/", await sync(auth)(bob))
    await socket.receive_json_from(timeout=TIMEOUT)  # the count waiting

    await socket.send_json_to(
        {"type": "decide", "approval_id": request.pk, "approved": True}
    )
    ack = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.disconnect()

    assert ack["type"] == "ack", ack
    await sync(wait_for_run)(session, "succeeded")
    last = asked_nodes(await sync(events_of)(alice, session))[-1]
    assert last == (SHOUT_PATH, {"shout": "FORECAST DONE"})


def test_a_tool_node_held_again_in_a_later_turn_asks_again(
    held_flow, alice, bob, held, say, api_for
):
    # ADK asks a node's confirmation under one id per node path, in every turn.
    session, first = held(alice)
    assert answer(api_for, bob, first.pk, {"approved": True}).status_code == 200

    again = say(alice, session, "weather again")

    assert (again["status"], again["waiting_for"]) == ("waiting", "approval")
    second = Request.objects.get(session_id=session, status="pending")
    assert second.pk != first.pk
    decided = answer(api_for, bob, second.pk, {"approved": True})
    assert decided.json()["run"]["status"] == "succeeded", decided.json()
    assert ToolCall.objects.filter(tool_name="shout", status="ok").count() == 2


def test_an_expired_tool_node_approval_gives_the_node_the_refusal(
    held_flow, alice, held, events_of
):
    session, request = held(alice)
    Request.objects.filter(pk=request.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert expire_due() == 1

    wait_for_run(session, "succeeded")
    last = asked_nodes(events_of(alice, session))[-1]
    assert last == (SHOUT_PATH, {"error": "This tool call is rejected."})
    row = ToolCall.objects.get(tool_name="shout")
    assert (row.status, row.decided_by) == (ToolCall.Status.EXPIRED, None)


def test_a_held_tool_node_inside_a_workflow_an_agent_calls_asks_too(
    held_flow, alice, bob, start_session, say, api_for, events_of
):
    session = start_session(alice, "planner")

    run = say(alice, session, "check oslo")

    assert (run["status"], run["waiting_for"]) == ("waiting", "approval"), run
    request = Request.objects.get(session_id=session)
    assert (request.kind, request.tool_name) == ("approval", "shout")
    decided = answer(api_for, bob, request.pk, {"approved": True})
    assert decided.json()["run"]["status"] == "succeeded", decided.json()
    result = [
        r for f in events_of(alice, session) for r in f["event"]["function_responses"]
    ]
    # The decision (ADK's request answered), then the workflow's result.
    assert [(r["name"], r["response"]) for r in result] == [
        ("adk_request_input", {"confirmed": True}),
        ("weather_check", {"shout": "OSLO IS SUNNY"}),
    ]


def test_an_approver_changes_a_tool_nodes_arguments_and_the_node_runs_them(
    held_flow, alice, bob, held, api_for, events_of
):
    session, request = held(alice)

    decided = answer(
        api_for, bob, request.pk, {"approved": True, "arguments": {"text": "quiet"}}
    )

    assert decided.status_code == 200, decided.content
    assert decided.json()["run"]["status"] == "succeeded", decided.json()
    last = asked_nodes(events_of(alice, session))[-1]
    assert last == (SHOUT_PATH, {"shout": "QUIET"})
    ran = ToolCall.objects.get(tool_name="shout", status="ok")
    assert (ran.args, ran.asked_args, ran.args_edited_by) == (
        {"text": "quiet"},
        {"text": "forecast done"},
        bob,
    )
