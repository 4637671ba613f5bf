"""Paused sessions of each kind of request, and the people around them."""

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from agents.adk.builder import sync_code_agents
from agents.models import Request
from agents.tokens import issue_token

# What each kind's paused Run waits for.
WAITS_FOR = {"call": "result", "approval": "approval", "credential": "credential"}
# The agents whose first turn pauses, with what to say, by kind and answer group.
PAUSES = {
    "exporter": "export sales",  # a call, answered by the owner
    "reimbursement": 'ask for approval of 500 for "a trip"',  # a call, by managers
    "teller": "send 500 to bob",  # an approval, by the owner
    "audited_teller": "send 500 to bob",  # an approval, by auditors
    "hasty_teller": "send 500 to bob",  # an approval that expires in a minute
    "quotes": "quote for ACME",  # a credential, by the owner only
}
TEST_AGENTS = [
    "tests.agents.test_long_running.exporter",
    "tests.toolsets.test_approvals.teller",
    "tests.toolsets.test_approvals.audited_teller",
    "tests.toolsets.test_approvals.hasty_teller",
]


@pytest.fixture(autouse=True)
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, *TEST_AGENTS]
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture
def people(make_user) -> dict:
    """The session owner, a member of every answer group, staff, and a stranger."""
    member = make_user("carol")
    for name in ("managers", "auditors"):
        Group.objects.create(name=name).user_set.add(member)
    return {
        "owner": make_user("alice"),
        "member": member,
        "staff": make_user("root", is_staff=True),
        "stranger": make_user("bob"),
    }


def client_of(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    return client


def paused(user, agent: str) -> tuple[str, Request]:
    """A new session of `agent` whose first turn waits for a person, and its request.

    Plain calls, not fixtures, so async tests can run it in a thread."""
    client = client_of(user)
    session = client.post("/api/sessions/", {"agent": agent}, format="json").json()
    said = client.post(
        f"/api/sessions/{session['id']}/messages/?wait=1",
        {"text": PAUSES[agent]},
        format="json",
    )
    request = Request.objects.get(session_id=session["id"])
    run = said.json()
    assert (run["status"], run["waiting_for"]) == (
        "waiting",
        WAITS_FOR[request.kind],
    ), said.content
    return session["id"], request
