"""A workflow's request for input is its session owner's: nobody else sees it in
the inbox or answers it, even by the ADK id it is asked under (the same in every
session for a node's confirmation)."""

import pytest

from agents.models import Request
from tests.agents import workflow_agents
from tests.agents.test_workflows import agents  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db(transaction=True)

ADK_ID = "wf_tool_confirmation:refunds@1/refund@1"


def test_another_user_neither_sees_nor_answers_a_workflows_request(
    agents,  # noqa: F811
    alice,
    bob,
    start_session,
    say,
    api_for,
):
    workflow_agents.REFUNDS.clear()
    session = start_session(alice, "refunds")
    say(alice, session, "refund order 7")
    own = start_session(bob, "refunds")
    say(bob, own, "refund order 8")

    listed = api_for(bob).get("/api/requests/").json()
    answered = api_for(bob).post(
        f"/api/sessions/{session}/function-responses/",
        {"call_id": ADK_ID, "response": {"confirmed": True}},
        format="json",
    )

    assert {r["session"] for r in listed} == {own}
    assert answered.status_code == 404
    assert Request.objects.get(session_id=session).status == "pending"
    assert workflow_agents.REFUNDS == []
