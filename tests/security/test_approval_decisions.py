"""Decisions beyond yes or no, by someone who may not make them (issue 45).

A stranger cannot edit, answer in a tool's place, count as one of several
approvers, or decide another's approvals in bulk; a bulk refusal reads the same
for a request that exists and one that does not. A requester who may not decide
her request cannot edit it either. None of it changes anything.
"""

import pytest
from django.contrib.auth.models import Group

from agents.models import Request, RequestApproval
from tests.agents.requests import conftest as paused_sessions
from tests.agents.requests.conftest import client_of, paused

pytestmark = pytest.mark.django_db(transaction=True)

agents = paused_sessions.agents
people = paused_sessions.people

BODIES = [
    {"approved": True, "arguments": {"recipient": "mallory", "amount": 9999}},
    {"approved": False, "response": "Done, trust me."},
    {"approved": True},
]


@pytest.fixture
def held(people) -> Request:
    """alice's wire, decided by auditors (carol), needing two of them."""
    _, request = paused(people["owner"], "audited_teller")
    request.approvals_required = 2
    request.save(update_fields=["approvals_required"])
    return request


def unchanged(request: Request) -> None:
    request.refresh_from_db()
    assert request.status == "pending"
    assert (request.approved_args, request.args_edited_by_id) == (None, None)
    assert request.response is None
    assert not RequestApproval.objects.filter(request=request).exists()


@pytest.mark.parametrize("body", BODIES)
def test_a_stranger_cannot_decide_in_any_way(people, held, body):
    refused = client_of(people["stranger"]).post(
        f"/api/requests/{held.pk}/answer/", body, format="json"
    )

    assert refused.status_code == 404
    unchanged(held)


@pytest.mark.parametrize("body", BODIES)
def test_the_requester_cannot_decide_her_grouped_request(people, held, body):
    refused = client_of(people["owner"]).post(
        f"/api/requests/{held.pk}/answer/", body, format="json"
    )

    assert refused.status_code == 403
    unchanged(held)


def test_a_member_of_another_group_cannot_count(people, held, make_user):
    dave = make_user("dave")
    Group.objects.get_or_create(name="managers")[0].user_set.add(dave)

    refused = client_of(dave).post(
        f"/api/requests/{held.pk}/answer/", {"approved": True}, format="json"
    )

    assert refused.status_code == 404
    unchanged(held)


def test_bulk_refusals_leak_nothing(people, held):
    stranger = client_of(people["stranger"])
    missing = Request.objects.order_by("-pk").values_list("pk", flat=True)[0] + 1000

    answered = stranger.post(
        "/api/requests/decide/",
        {"ids": [held.pk, missing], "approved": False},
        format="json",
    )

    assert answered.status_code == 200
    first, second = answered.json()
    assert (first["code"], first["detail"]) == (second["code"], second["detail"])
    assert first["code"] == "not_found"
    unchanged(held)


def test_a_stranger_does_not_see_who_approved(people, held):
    member = client_of(people["member"])
    member.post(f"/api/requests/{held.pk}/answer/", {"approved": True}, format="json")

    listed = client_of(people["stranger"]).get("/api/requests/?status=all").json()
    mine = client_of(people["stranger"]).get("/api/requests/?mine=1&status=all")

    assert listed == [] and mine.json() == []
    assert RequestApproval.objects.filter(request=held).count() == 1
