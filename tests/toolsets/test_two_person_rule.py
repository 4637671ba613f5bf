"""The two-person rule (issue 45, item 2): a tool may need N approvals from N
different people of its approver group, never the requester; the request shows
who approved so far, and one rejection ends it."""

import pytest
from asgiref.sync import sync_to_async as sync

from agents.models import Request
from tests.agents.requests.test_inbox_socket import open_inbox, rings
from tests.toolsets import tools
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

LAUNCHER = "rocketeer.launch_rocket"


@pytest.fixture
def carol(make_user):
    return make_user("carol")


@pytest.fixture
def four_eyes(catalog, bob, carol, make_group, api_for, staff):
    """Each launch needs two of launch-control (bob, carol); the catalog lets
    requesters decide their own calls, which the rule overrides."""
    make_group("launch-control", bob, carol)
    marked = api_for(staff).patch(
        f"/api/tools/{LAUNCHER}/",
        {
            "requires_approval": True,
            "approver_group": "launch-control",
            "approvals_required": 2,
            "requester_may_approve": True,
        },
        format="json",
    )
    assert marked.status_code == 200, marked.content
    assert marked.json()["approvals_required"] == 2
    return marked.json()


@pytest.fixture
def held(four_eyes, alice, start_session, say) -> Request:
    session = start_session(alice, "rocketeer")
    assert say(alice, session, "go")["status"] == "waiting"
    return Request.objects.get(session_id=session, kind="approval")


def answer(api_for, user, approval: Request, body: dict):
    return api_for(user).post(
        f"/api/requests/{approval.pk}/answer/?wait=1", body, format="json"
    )


def shown(api_for, user, approval: Request) -> dict:
    return api_for(user).get(f"/api/requests/{approval.pk}/").json()


def test_one_approval_of_two_runs_nothing(held, bob, carol, api_for):
    first = answer(api_for, bob, held, {"approved": True, "comment": "fine by me"})

    assert first.status_code == 200, first.content
    assert first.json()["run"] is None
    request = first.json()["request"]
    assert request["status"] == "pending"
    assert request["approvals_required"] == 2
    assert [(a["by"], a["comment"]) for a in request["approvals"]] == [
        ("bob", "fine by me")
    ]
    assert tools.LAUNCHES == []
    assert shown(api_for, bob, held)["may_answer"] is False
    assert shown(api_for, carol, held)["may_answer"] is True
    assert api_for(bob).get("/api/requests/count/").json() == {"count": 0}
    assert api_for(carol).get("/api/requests/count/").json() == {"count": 1}


def test_the_second_person_runs_the_call(held, bob, carol, api_for):
    answer(api_for, bob, held, {"approved": True})

    second = answer(api_for, carol, held, {"approved": True})

    assert second.status_code == 200, second.content
    request = second.json()["request"]
    assert request["status"] == "approved"
    assert request["answered_by"] == "carol"
    assert [a["by"] for a in request["approvals"]] == ["bob", "carol"]
    assert second.json()["run"]["status"] == "succeeded"
    assert tools.LAUNCHES == ["moon"]


def test_the_same_person_twice_is_refused(held, bob, api_for):
    answer(api_for, bob, held, {"approved": True})

    again = answer(api_for, bob, held, {"approved": True})

    assert again.status_code == 400
    assert "approved" in again.json()
    held.refresh_from_db()
    assert held.status == "pending"
    assert held.approvals.count() == 1
    assert tools.LAUNCHES == []


def test_the_requester_never_approves(held, alice, api_for):
    refused = answer(api_for, alice, held, {"approved": True})

    assert refused.status_code == 403
    held.refresh_from_db()
    assert (held.status, held.approvals.count()) == ("pending", 0)


def test_one_rejection_ends_it(held, bob, carol, api_for):
    answer(api_for, bob, held, {"approved": True})

    rejected = answer(api_for, carol, held, {"approved": False, "comment": "no"})

    assert rejected.status_code == 200, rejected.content
    assert rejected.json()["request"]["status"] == "rejected"
    assert tools.LAUNCHES == []
    late = answer(api_for, carol, held, {"approved": True})
    assert late.status_code == 409
    row = ToolCall.objects.get()
    assert (row.status, row.decided_by.username) == ("rejected", "carol")


def test_arguments_change_only_before_the_first_approval(held, bob, carol, api_for):
    first = answer(
        api_for, bob, held, {"approved": True, "arguments": {"target": "mars"}}
    )
    refused = answer(
        api_for, carol, held, {"approved": True, "arguments": {"target": "venus"}}
    )
    second = answer(api_for, carol, held, {"approved": True})

    assert first.json()["request"]["approved_args"] == {"target": "mars"}
    assert refused.status_code == 400
    assert "approved these arguments already" in refused.json()["arguments"][0]
    assert second.json()["request"]["status"] == "approved"
    assert tools.LAUNCHES == ["mars"]


def test_a_stranger_sees_nothing_and_counts_for_nothing(
    held, api_for, make_user, staff
):
    dave = make_user("dave")

    seen = api_for(dave).get(f"/api/requests/{held.pk}/")
    refused = answer(api_for, dave, held, {"approved": True})

    assert (seen.status_code, refused.status_code) == (404, 404)
    assert held.approvals.count() == 0


async def test_the_inbox_hears_each_approval(held, bob, carol):
    socket = await open_inbox(carol)
    bobs = await open_inbox(bob)

    await bobs.send_json_to(
        {"type": "decide", "approval_id": held.pk, "approved": True}
    )
    heard = await rings(socket)
    acked = await rings(bobs)

    assert acked[0]["type"] == "ack"
    assert {
        "type": "request",
        "event": "approval",
        "id": held.pk,
        "kind": "approval",
        "status": "pending",
        "approvals": 1,
        "approvals_required": 2,
    } in heard
    assert tools.LAUNCHES == []
    await socket.disconnect()
    await bobs.disconnect()


async def test_the_socket_refuses_the_same_person_twice(held, bob):
    socket = await open_inbox(bob)
    decide = {"type": "decide", "approval_id": held.pk, "approved": True}

    await socket.send_json_to(decide)
    await rings(socket)
    await socket.send_json_to(decide)
    refused = await rings(socket)

    errors = [f for f in refused if f["type"] == "error"]
    assert errors[0]["error"]["code"] == "already_approved_by_you"
    assert await sync(held.approvals.count)() == 1
    await socket.disconnect()


async def test_the_socket_edits_and_responds_as_rest_does(four_eyes, held, bob):
    socket = await open_inbox(bob)

    await socket.send_json_to(
        {
            "type": "decide",
            "approval_id": held.pk,
            "approved": True,
            "arguments": {"target": 7},
        }
    )
    refused = [f for f in await rings(socket) if f["type"] == "error"]
    await socket.send_json_to(
        {
            "type": "decide",
            "approval_id": held.pk,
            "approved": False,
            "response": "Not today.",
        }
    )
    frames = await rings(socket)

    assert refused[0]["error"]["code"] == "invalid_arguments"
    assert frames[0]["type"] == "ack"
    await held.arefresh_from_db()
    assert (held.status, held.response) == ("rejected", {"response": "Not today."})
    await socket.disconnect()


def test_approvals_required_is_checked(catalog, api_for, staff):
    for value in (0, 11, "two"):
        refused = api_for(staff).patch(
            f"/api/tools/{LAUNCHER}/", {"approvals_required": value}, format="json"
        )
        assert refused.status_code == 400
        assert "approvals_required" in refused.json()


def test_a_grant_asks_two_people_for_a_call_outside_its_condition(
    catalog, alice, bob, carol, make_group, api_for, staff, start_session, say
):
    make_group("launch-control", bob, carol)
    api_for(staff).patch(
        f"/api/tools/{LAUNCHER}/",
        {"approver_group": "launch-control"},
        format="json",
    )
    granted = api_for(staff).post(
        "/api/grants/",
        {
            "user": "alice",
            "tool": LAUNCHER,
            "effect": "allow",
            "condition": {"target": {"enum": ["mars"]}},
            "otherwise": "approval",
            "approvals_required": 2,
        },
        format="json",
    )
    session = start_session(alice, "rocketeer")
    say(alice, session, "go")  # to the moon: outside the condition
    held = Request.objects.get(session_id=session, kind="approval")

    first = answer(api_for, bob, held, {"approved": True})
    second = answer(api_for, carol, held, {"approved": True})

    assert granted.status_code == 201, granted.content
    assert granted.json()["approvals_required"] == 2
    assert held.approvals_required == 2
    assert first.json()["request"]["status"] == "pending"
    assert second.json()["request"]["status"] == "approved"
    assert tools.LAUNCHES == ["moon"]


def test_the_requester_neither_sees_buttons_nor_always_allows(held, alice, api_for):
    mine = shown(api_for, alice, held)
    remembered = answer(api_for, alice, held, {"approved": True, "remember": True})

    assert (mine["may_answer"], mine["may_remember"]) == (False, False)
    assert api_for(alice).get("/api/requests/count/").json() == {"count": 0}
    assert remembered.status_code == 403
    assert not held.session.standing_approvals.exists()
