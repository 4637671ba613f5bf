"""Approval set in the catalog: an admin marks a plain tool, and each call waits."""

import pytest
from asgiref.sync import sync_to_async as sync

from agents.models import Request
from tests.agents.test_long_running import (
    drain_backlog,
    frames_until_finished,
    open_socket,
)
from tests.toolsets import tools
from tests.toolsets.conftest import tool
from toolsets.models import Tool, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

LAUNCHER = "rocketeer.launch_rocket"
TIMEOUT = 10


@pytest.fixture
def mark(api_for, staff):
    """Staff edits the tool through the catalog API."""

    def patch(**fields):
        response = api_for(staff).patch(
            f"/api/tools/{LAUNCHER}/", fields, format="json"
        )
        assert response.status_code == 200, response.content
        return response.json()

    return patch


@pytest.fixture
def launch(start_session, say):
    def go(user) -> tuple[str, Request | None]:
        session = start_session(user, "rocketeer")
        run = say(user, session, "go")
        approval = approvals().filter(session_id=session).first()
        # A launch the catalog holds ends waiting for its approval.
        assert run["status"] == ("waiting" if approval else "succeeded")
        return session, approval

    return go


@pytest.fixture
def decide(api_for):
    def post(user, approval_id, approved: bool):
        return api_for(user).post(
            f"/api/approvals/{approval_id}/decide/?wait=1",
            {"approved": approved},
            format="json",
        )

    return post


def approvals():
    return Request.objects.filter(kind=Request.Kind.APPROVAL)


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def texts(frames: list[dict]) -> list[str]:
    return [f["event"]["text"] for f in frames if f["event"]["kind"] == "text"]


def test_an_unmarked_tool_runs_without_asking(catalog, alice, launch):
    _, approval = launch(alice)

    assert approval is None
    assert tools.LAUNCHES == ["moon"]


def test_a_marked_tool_waits_and_runs_once_approved(
    catalog, alice, mark, launch, decide, events_of
):
    shown = mark(requires_approval=True)
    session, approval = launch(alice)

    assert shown["requires_approval"] is True
    assert tools.LAUNCHES == []
    assert "approval_request" in kinds(events_of(alice, session))
    assert (approval.status, approval.tool_name, approval.args) == (
        "pending",
        "launch_rocket",
        {"target": "moon"},
    )
    assert "administrator" in approval.hint
    assert approval.answer_group == "" and approval.expires_at is None

    decided = decide(alice, approval.id, True)

    assert decided.status_code == 200, decided.content
    assert decided.json()["status"] == "succeeded"
    assert tools.LAUNCHES == ["moon"]  # once: the re-run is not asked again
    assert approvals().filter(session_id=session).count() == 1
    assert texts(events_of(alice, session))[-1] == "done"
    statuses = list(ToolCall.objects.order_by("started_at").values_list("status"))
    assert statuses[-1] == (ToolCall.Status.OK,)


def test_a_rejected_call_of_a_marked_tool_never_runs(
    catalog, alice, mark, launch, decide, events_of
):
    mark(requires_approval=True)
    session, approval = launch(alice)

    decide(alice, approval.id, False)

    assert tools.LAUNCHES == []
    approval.refresh_from_db()
    assert approval.status == "rejected"
    responses = [
        r["response"]
        for f in events_of(alice, session)
        for r in f["event"]["function_responses"]
        if r["name"] == "launch_rocket"
    ]
    assert responses[-1] == {"error": "This tool call is rejected."}


def test_the_catalog_approver_group_decides_not_the_requester(
    catalog, alice, bob, make_group, mark, launch, decide, api_for
):
    make_group("launch-control", bob)
    shown = mark(
        requires_approval=True, approver_group="launch-control", approval_timeout=600
    )
    _, approval = launch(alice)

    own = decide(alice, approval.id, True)
    inbox = api_for(bob).get("/api/approvals/?status=pending").json()
    decided = decide(bob, approval.id, True)

    assert (shown["approver_group"], shown["approval_timeout"]) == (
        "launch-control",
        600,
    )
    assert approval.answer_group == "launch-control"
    assert approval.expires_at is not None
    assert own.status_code == 403
    assert tools.LAUNCHES == ["moon"]
    assert [a["id"] for a in inbox] == [approval.id]
    assert decided.status_code == 200


def test_unmarking_lets_the_next_call_run(catalog, alice, mark, launch):
    mark(requires_approval=True)
    launch(alice)
    mark(requires_approval=False)

    _, approval = launch(alice)

    assert approval is None
    assert tools.LAUNCHES == ["moon"]


def test_only_staff_mark_tools(catalog, alice, api_for):
    refused = api_for(alice).patch(
        f"/api/tools/{LAUNCHER}/", {"requires_approval": True}, format="json"
    )

    assert refused.status_code == 403
    assert tool(LAUNCHER).requires_approval is False


@pytest.mark.parametrize(
    "body",
    [
        {"approver_group": "nobody-by-this-name"},
        {"approval_timeout": 0},
        {"approval_timeout": "soon"},
        {"requires_approval": "perhaps"},
    ],
)
def test_bad_approval_settings_are_refused(catalog, staff, api_for, body):
    refused = api_for(staff).patch(f"/api/tools/{LAUNCHER}/", body, format="json")

    assert refused.status_code == 400
    assert set(refused.json()) == set(body)
    row = tool(LAUNCHER)
    assert (row.requires_approval, row.approver_group, row.approval_timeout) == (
        False,
        None,
        None,
    )


def test_the_admin_marks_a_tool_for_approval(catalog, staff, client, make_group):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    group = make_group("launch-control")
    row = tool(LAUNCHER)

    saved = client.post(
        f"/admin/toolsets/tool/{row.pk}/change/",
        {
            "description": row.description,
            "risk": row.risk,
            "enabled": "on",
            "requires_approval": "on",
            "approvals_required": 1,
            "approver_group": group.pk,
            "approval_timeout": "300",
            "policy": "{}",
        },
    )

    assert saved.status_code == 302, saved.content
    row.refresh_from_db()
    assert (row.requires_approval, row.approver_group, row.approval_timeout) == (
        True,
        group,
        300,
    )


async def test_the_owner_decides_a_catalog_approval_over_the_socket(
    catalog, alice, bob
):
    await sync(_mark)()
    session, approval = await sync(_launched_now)(alice)
    other, _ = await sync(_launched_now)(bob)
    foreign = await open_socket(bob, other)
    await drain_backlog(foreign)
    socket = await open_socket(alice, session)
    await drain_backlog(socket)

    await foreign.send_json_to(
        {"type": "decide", "approval_id": approval.id, "approved": True}
    )
    refused = await foreign.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to(
        {"type": "decide", "approval_id": approval.id, "approved": True}
    )
    ack = await socket.receive_json_from(timeout=TIMEOUT)
    frames = [f for f in await frames_until_finished(socket) if f["seq"] is not None]

    assert refused["error"]["code"] == "not_found"
    assert ack["type"] == "ack"
    assert texts(frames) == ["done"]
    assert tools.LAUNCHES == ["moon"]
    await socket.disconnect()
    await foreign.disconnect()


def _mark() -> None:
    Tool.objects.filter(full_name=LAUNCHER).update(requires_approval=True)


def _launched_now(user) -> tuple[str, Request]:
    """launch(), for async tests (fixtures that call the API are sync)."""
    from rest_framework.test import APIClient

    from agents.tokens import issue_token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    session = client.post("/api/sessions/", {"agent": "rocketeer"}, format="json")
    session_id = session.json()["id"]
    said = client.post(
        f"/api/sessions/{session_id}/messages/?wait=1", {"text": "go"}, format="json"
    )
    assert said.json()["status"] == "waiting", said.content
    return session_id, approvals().get(session_id=session_id)
