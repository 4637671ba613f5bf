"""Edit, then approve; or answer in the tool's place (issue 45, item 1).

An approver may approve a held call with other arguments (within the tool's
schema and its requester's grant condition) or reject it with a text that the
model reads as the tool's answer. The audit keeps the asked and the approved
arguments, and who changed them.
"""

import pytest

from agents.models import Request
from tests.toolsets import tools
from tests.toolsets.conftest import tool
from toolsets import grants
from toolsets.grant_conditions import parse_condition
from toolsets.models import Grant, ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

LAUNCHER = "rocketeer.launch_rocket"


@pytest.fixture
def held(catalog, alice, bob, make_group, api_for, staff, start_session, say):
    """alice's launch of the moon, held for launch-control (bob) to decide."""
    make_group("launch-control", bob)
    marked = api_for(staff).patch(
        f"/api/tools/{LAUNCHER}/",
        {"requires_approval": True, "approver_group": "launch-control"},
        format="json",
    )
    assert marked.status_code == 200, marked.content
    session = start_session(alice, "rocketeer")
    run = say(alice, session, "go")
    assert run["status"] == "waiting"
    approval = Request.objects.get(session_id=session, kind="approval")
    return session, approval


def answer(api_for, user, approval: Request, body: dict):
    return api_for(user).post(
        f"/api/requests/{approval.pk}/answer/?wait=1", body, format="json"
    )


def function_responses(frames: list[dict], name: str) -> list[dict]:
    return [
        r["response"]
        for f in frames
        for r in f["event"]["function_responses"]
        if r["name"] == name
    ]


def test_an_edited_approval_runs_the_edited_call(held, bob, api_for, events_of, alice):
    session, approval = held

    answered = answer(
        api_for, bob, approval, {"approved": True, "arguments": {"target": "mars"}}
    )

    assert answered.status_code == 200, answered.content
    shown = answered.json()["request"]
    assert shown["status"] == "approved"
    assert shown["args"] == {"target": "moon"}
    assert shown["approved_args"] == {"target": "mars"}
    assert shown["args_edited_by"] == "bob"
    assert tools.LAUNCHES == ["mars"]
    results = function_responses(events_of(alice, session), "launch_rocket")
    assert results[-1] == {"status": "launched", "target": "mars"}


def test_the_audit_keeps_the_asked_and_the_approved_arguments(
    held, bob, api_for, staff
):
    _, approval = held

    answer(api_for, bob, approval, {"approved": True, "arguments": {"target": "mars"}})

    rows = api_for(staff).get("/api/tool-calls/").json()
    by_status = {row["status"]: row for row in rows}
    held_row, ran = by_status["approved"], by_status["ok"]
    assert held_row["args"] == {"target": "moon"}
    assert held_row["approved_args"] == {"target": "mars"}
    assert held_row["args_edited_by"] == "bob"
    assert held_row["decided_by"] == "bob"
    assert ran["args"] == {"target": "mars"}
    assert ran["asked_args"] == {"target": "moon"}
    assert ran["args_edited_by"] == "bob"


def test_the_same_arguments_are_no_edit(held, bob, api_for):
    _, approval = held

    answered = answer(
        api_for, bob, approval, {"approved": True, "arguments": {"target": "moon"}}
    )

    assert answered.json()["request"]["approved_args"] is None
    assert tools.LAUNCHES == ["moon"]


@pytest.mark.parametrize(
    "arguments, named",
    [
        ({"target": 7}, "target"),
        ({"target": "mars", "countdown": 3}, "countdown"),
        ({}, "target"),
    ],
)
def test_arguments_outside_the_schema_are_refused(held, bob, api_for, arguments, named):
    _, approval = held

    refused = answer(api_for, bob, approval, {"approved": True, "arguments": arguments})

    assert refused.status_code == 400, refused.content
    assert refused.json()["arguments"][0].startswith(f"{named}: ")
    approval.refresh_from_db()
    assert (approval.status, approval.approved_args) == ("pending", None)
    assert tools.LAUNCHES == []
    assert not ToolCall.objects.filter(status="ok").exists()


def test_arguments_outside_the_grant_condition_are_refused(held, alice, bob, api_for):
    _, approval = held
    grants.grant_tool(
        target=tool(LAUNCHER),
        effect=Grant.Effect.ALLOW,
        user=alice,
        condition=parse_condition({"target": {"enum": ["moon", "mars"]}}),
    )

    refused = answer(
        api_for, bob, approval, {"approved": True, "arguments": {"target": "sun"}}
    )
    allowed = answer(
        api_for, bob, approval, {"approved": True, "arguments": {"target": "mars"}}
    )

    assert refused.status_code == 400, refused.content
    message = refused.json()["arguments"][0]
    assert message.startswith("target: ") and "condition" in message
    assert allowed.status_code == 200, allowed.content
    assert tools.LAUNCHES == ["mars"]


def test_arguments_with_a_rejection_are_refused(held, bob, api_for):
    _, approval = held

    refused = answer(
        api_for, bob, approval, {"approved": False, "arguments": {"target": "mars"}}
    )

    assert refused.status_code == 400
    assert "arguments" in refused.json()
    approval.refresh_from_db()
    assert approval.status == "pending"


def test_a_response_with_an_approval_is_refused(held, bob, api_for):
    _, approval = held

    refused = answer(api_for, bob, approval, {"approved": True, "response": "no"})

    assert refused.status_code == 400
    assert "response" in refused.json()
    approval.refresh_from_db()
    assert approval.status == "pending"


def test_a_stranger_cannot_edit(held, api_for, make_user):
    _, approval = held
    carol = make_user("carol")

    refused = answer(
        api_for, carol, approval, {"approved": True, "arguments": {"target": "mars"}}
    )

    assert refused.status_code == 404
    approval.refresh_from_db()
    assert (approval.status, approval.approved_args) == ("pending", None)


def test_a_response_is_the_tools_answer_to_the_model(
    held, bob, api_for, events_of, alice, staff
):
    session, approval = held

    answered = answer(
        api_for,
        bob,
        approval,
        {"approved": False, "response": "Launch window closed; try tomorrow."},
    )

    assert answered.status_code == 200, answered.content
    shown = answered.json()["request"]
    assert (shown["status"], shown["response"]) == (
        "rejected",
        "Launch window closed; try tomorrow.",
    )
    assert tools.LAUNCHES == []
    results = function_responses(events_of(alice, session), "launch_rocket")
    assert results[-1] == {"result": "Launch window closed; try tomorrow."}
    rows = api_for(staff).get("/api/tool-calls/").json()
    assert [row["status"] for row in rows] == ["rejected"]
    assert "Launch window closed" in rows[0]["result_summary"]


@pytest.fixture
def wire(catalog, alice, start_session, say):
    """alice's transfer through the demo bank, whose tool asks ADK's confirmation
    itself (require_confirmation=True), held for her to decide."""
    session = start_session(alice, "bank")
    say(alice, session, 'Wire money: 50 to "Bob"')
    return session, Request.objects.get(session_id=session, kind="approval")


def test_an_adk_confirmation_tool_runs_the_edited_call(wire, alice, api_for, events_of):
    session, approval = wire
    edited = {**approval.args, "amount": 20.5}

    answered = answer(api_for, alice, approval, {"approved": True, "arguments": edited})

    assert answered.status_code == 200, answered.content
    results = function_responses(events_of(alice, session), "wire_money")
    assert results[-1]["message"] == "Sent 20.5 dollars to Bob."


def test_an_adk_confirmation_tool_answers_with_the_response(
    wire, alice, api_for, events_of
):
    session, approval = wire

    answered = answer(
        api_for, alice, approval, {"approved": False, "response": "Bob is closed."}
    )

    assert answered.status_code == 200, answered.content
    results = function_responses(events_of(alice, session), "wire_money")
    assert results[-1] == {"result": "Bob is closed."}
