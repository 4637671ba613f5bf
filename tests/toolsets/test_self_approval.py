""" "Always allow for me": where the catalog lets a requester decide her own calls
of a tool, she decides them (even with an approver group) and may approve every
later call of it in her session at once."""

import time

import pytest

from agents.answers.standing import approve_standing
from agents.models import Request, StandingApproval
from tests.toolsets import tools
from tests.toolsets.conftest import tool

pytestmark = pytest.mark.django_db(transaction=True)

LAUNCHER = "rocketeer.launch_rocket"
TIMEOUT = 10


@pytest.fixture
def mark(api_for, staff):
    """Staff edits the tool through the catalog API."""

    def patch(**fields) -> dict:
        response = api_for(staff).patch(
            f"/api/tools/{LAUNCHER}/", fields, format="json"
        )
        assert response.status_code == 200, response.content
        return response.json()

    return patch


@pytest.fixture
def controlled(catalog, bob, make_group, mark):
    """Launches need bob's group's approval; the catalog lets requesters decide."""
    make_group("launch-control", bob)
    return mark(
        requires_approval=True,
        approver_group="launch-control",
        requester_may_approve=True,
    )


@pytest.fixture
def launch(say):
    def go(user, session: str) -> Request:
        say(user, session, "go")
        return approvals(session).order_by("-id").first()

    return go


def approvals(session: str):
    return Request.objects.filter(kind=Request.Kind.APPROVAL, session_id=session)


def answer(api_for, user, request_id: int, body: dict):
    return api_for(user).post(
        f"/api/requests/{request_id}/answer/?wait=1", body, format="json"
    )


def wait_until(check) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.05)


def test_staff_let_requesters_approve_a_tool(controlled, api_for, alice):
    shown = api_for(alice).get(f"/api/tools/{LAUNCHER}/").json()

    assert controlled["requester_may_approve"] is True
    assert shown["requester_may_approve"] is True
    assert tool(LAUNCHER).requester_may_approve is True


def test_only_staff_let_requesters_approve(catalog, api_for, alice):
    refused = api_for(alice).patch(
        f"/api/tools/{LAUNCHER}/", {"requester_may_approve": True}, format="json"
    )

    assert refused.status_code == 403
    assert tool(LAUNCHER).requester_may_approve is False


def test_the_admin_lets_requesters_approve(catalog, staff, client):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    row = tool(LAUNCHER)

    saved = client.post(
        f"/admin/toolsets/tool/{row.pk}/change/",
        {
            "description": row.description,
            "risk": row.risk,
            "enabled": "on",
            "requires_approval": "on",
            "approvals_required": 1,
            "requester_may_approve": "on",
            "policy": "{}",
        },
    )

    assert saved.status_code == 302, saved.content
    row.refresh_from_db()
    assert row.requester_may_approve is True


def test_the_request_reads_in_the_catalogs_words(
    controlled, alice, bob, api_for, start_session, launch
):
    approval = launch(alice, start_session(alice, "rocketeer"))

    mine = api_for(alice).get(f"/api/requests/{approval.pk}/").json()
    theirs = api_for(bob).get(f"/api/requests/{approval.pk}/").json()

    assert approval.self_approval is True
    assert mine["description"] == "Launch the rocket at a target."
    assert mine["reason"] == (
        "An administrator requires approval for each call of launch_rocket."
    )
    assert mine["who_may_answer"] == (
        "A member of launch-control or staff, or alice (the requester)"
    )
    assert (mine["may_answer"], mine["may_remember"]) == (True, True)
    assert (theirs["may_answer"], theirs["may_remember"]) == (True, False)
    inbox = [row["id"] for row in api_for(alice).get("/api/requests/").json()]
    assert inbox == [approval.pk]


def test_the_requester_decides_her_own_call_despite_the_group(
    controlled, alice, api_for, start_session, launch
):
    approval = launch(alice, start_session(alice, "rocketeer"))

    decided = answer(api_for, alice, approval.pk, {"approved": True})

    assert decided.status_code == 200, decided.content
    assert tools.LAUNCHES == ["moon"]
    assert not StandingApproval.objects.exists()


def test_always_allowed_calls_are_approved_at_once_in_that_session_only(
    controlled, alice, api_for, start_session, launch
):
    session = start_session(alice, "rocketeer")
    first = launch(alice, session)
    remembered = answer(api_for, alice, first.pk, {"approved": True, "remember": True})
    assert remembered.status_code == 200, remembered.content

    second = launch(alice, session)
    wait_until(lambda: tools.LAUNCHES == ["moon", "moon"])
    other = launch(alice, start_session(alice, "rocketeer"))

    second.refresh_from_db()
    assert (second.status, second.answered_by, second.comment) == (
        "approved",
        alice,
        "Approved at once: alice always allows launch_rocket in this session.",
    )
    other.refresh_from_db()
    assert other.status == "pending"
    assert tools.LAUNCHES == ["moon", "moon"]


def test_an_approver_may_not_remember_for_the_requester(
    controlled, alice, bob, api_for, start_session, launch
):
    approval = launch(alice, start_session(alice, "rocketeer"))

    refused = answer(api_for, bob, approval.pk, {"approved": True, "remember": True})

    assert refused.status_code == 400
    assert list(refused.json()) == ["remember"]
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert not StandingApproval.objects.exists()


def test_withdrawing_the_permission_asks_again(
    controlled, alice, api_for, start_session, launch, mark
):
    session = start_session(alice, "rocketeer")
    answer(
        api_for, alice, launch(alice, session).pk, {"approved": True, "remember": True}
    )
    mark(requester_may_approve=False)

    again = launch(alice, session)

    assert approve_standing() == 0
    again.refresh_from_db()
    assert (again.status, again.self_approval) == ("pending", False)
    assert tools.LAUNCHES == ["moon"]
