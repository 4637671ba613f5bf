"""A gateway call's approval (a request with no session) under the one rule.

Only who may answer it by the catalog's rule decides it: not a stranger, who can
neither read nor answer it; not its caller, where an approver group decides (no
self-approval); and never through the older endpoints by kind, which name a
session's requests. Its arguments are kept redacted; its caller sees it among her
own requests.
"""

import pytest
from asgiref.sync import async_to_sync
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group

from agents.models import Request
from agents.requests.record import arecord_gateway_approval
from agents.tokens import issue_token
from project.asgi import application
from tests.agents.requests.conftest import client_of

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


@pytest.fixture
def people(make_user):
    managers = Group.objects.get_or_create(name="managers")[0]
    member = make_user("bob")
    managers.user_set.add(member)
    return {
        "caller": make_user("alice"),
        "member": member,
        "stranger": make_user("eve"),
        "staff": make_user("root", is_staff=True),
    }


def held(caller, *, group: str = "managers", self_approval: bool = False) -> Request:
    return async_to_sync(arecord_gateway_approval)(
        caller_id=caller.pk,
        client="my-editor",
        call_id="direct-0123",
        tool_name="inventory_admin.restock_item",
        args={"item": "widget", "api_key": "sk-secret"},
        args_digest="d" * 64,
        hint="An administrator requires approval for each call.",
        answer_group=group,
        timeout=None,
        self_approval=self_approval,
        description="Add units of an item to the stock.",
    )


def test_a_stranger_can_neither_read_nor_answer_it(people):
    request = held(people["caller"])
    stranger = client_of(people["stranger"])

    read = stranger.get(f"/api/requests/{request.pk}/")
    answered = stranger.post(
        f"/api/requests/{request.pk}/answer/", {"approved": True}, format="json"
    )

    assert (read.status_code, answered.status_code) == (404, 404)
    assert stranger.get("/api/requests/").json() == []
    assert stranger.get("/api/requests/?mine=1").json() == []
    request.refresh_from_db()
    assert request.status == "pending"


def test_its_caller_sees_it_but_may_not_approve_it_herself(people):
    request = held(people["caller"])
    caller = client_of(people["caller"])

    answered = caller.post(
        f"/api/requests/{request.pk}/answer/", {"approved": True}, format="json"
    )
    mine = caller.get("/api/requests/?mine=1").json()

    assert answered.status_code == 403
    assert [row["id"] for row in mine] == [request.pk]
    assert caller.get("/api/requests/").json() == []
    request.refresh_from_db()
    assert request.status == "pending"


def test_its_arguments_are_shown_redacted_to_its_approver(people):
    request = held(people["caller"])

    [row] = client_of(people["member"]).get("/api/requests/").json()

    assert row["id"] == request.pk
    assert row["args"] == {"item": "widget", "api_key": "[redacted]"}
    assert (row["agent"], row["requester"], row["session"]) == (
        "my-editor",
        "alice",
        None,
    )
    assert row["who_may_answer"] == "A member of managers or staff (not alice)"
    assert row["may_answer"] is True


def test_its_caller_may_approve_it_where_the_catalog_lets_her(people):
    request = held(people["caller"], self_approval=True)
    caller = client_of(people["caller"])

    answered = caller.post(
        f"/api/requests/{request.pk}/answer/", {"approved": True}, format="json"
    )

    assert answered.status_code == 200, answered.content
    assert answered.json()["run"] is None
    request.refresh_from_db()
    assert (request.status, request.answered_by_id) == (
        "approved",
        people["caller"].pk,
    )


def test_it_cannot_be_remembered_for_a_session_it_has_not(people):
    request = held(people["caller"], self_approval=True)

    answered = client_of(people["caller"]).post(
        f"/api/requests/{request.pk}/answer/",
        {"approved": True, "remember": True},
        format="json",
    )

    assert answered.status_code == 400
    request.refresh_from_db()
    assert request.status == "pending"


def test_the_older_endpoints_by_kind_do_not_reach_it(people):
    request = held(people["caller"])
    member = client_of(people["member"])

    assert member.get("/api/approvals/").json() == []
    assert member.get(f"/api/approvals/{request.pk}/").status_code == 404
    decided = member.post(
        f"/api/approvals/{request.pk}/decide/", {"approved": True}, format="json"
    )
    assert decided.status_code == 404
    request.refresh_from_db()
    assert request.status == "pending"


async def test_its_approver_decides_it_over_the_inbox_socket(people):
    request = await sync(held)(people["caller"])
    token = await sync(issue_token)(user=people["member"])
    socket = WebsocketCommunicator(
        application,
        "/ws/inbox/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    assert (await socket.receive_json_from(timeout=TIMEOUT))["count"] == 1

    await socket.send_json_to(
        {"type": "decide", "approval_id": request.pk, "approved": False}
    )
    ack = await socket.receive_json_from(timeout=TIMEOUT)
    ring = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.disconnect()

    assert ack == {"type": "ack", "run": None}
    assert (ring["id"], ring["status"]) == (request.pk, "rejected")
    await request.arefresh_from_db()
    assert (request.status, request.answered_by_id) == (
        "rejected",
        people["member"].pk,
    )


async def test_a_stranger_cannot_decide_it_over_the_inbox_socket(people):
    request = await sync(held)(people["caller"])
    token = await sync(issue_token)(user=people["stranger"])
    socket = WebsocketCommunicator(
        application,
        "/ws/inbox/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    assert (await socket.receive_json_from(timeout=TIMEOUT))["count"] == 0

    await socket.send_json_to(
        {"type": "decide", "approval_id": request.pk, "approved": True}
    )
    refusal = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.disconnect()

    assert refusal["type"] == "error"
    assert refusal["error"]["code"] == "not_found"
    await request.arefresh_from_db()
    assert request.status == "pending"
