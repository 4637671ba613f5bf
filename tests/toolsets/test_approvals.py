"""Human approval: ADK's tool confirmation pauses a call until a person decides."""

import time
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async as sync
from django.contrib.auth.models import Group
from django.utils import timezone
from google.adk.agents import LlmAgent
from google.adk.models import LlmRequest, LlmResponse
from google.adk.tools import FunctionTool, ToolContext

from agents.adk import builder
from agents.adk.builder import sync_code_agents
from agents.adk.long_running import answered_by, approval_timeout
from agents.adk.offline import (
    OfflineLlm,
    calls_response,
    text_response,
    trailing_function_responses,
)
from agents.adk.offline_matching import ChosenCall, describe_result
from agents.answers.expiry import expire_due
from agents.models import Request, Run, Session
from agents.turns.start import wait_for_run
from demo.bank import wire_money
from tests.agents.test_long_running import (
    drain_backlog,
    frames_until_finished,
    open_socket,
)

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
WIRE = {"recipient": "bob", "amount": 500}
SENT = "Sent 500 dollars to bob."
REJECTED = "Sorry, that did not work: This tool call is rejected."
TEST_AGENTS = [
    "tests.toolsets.test_approvals.teller",
    "tests.toolsets.test_approvals.asking_teller",
    "tests.toolsets.test_approvals.audited_teller",
    "tests.toolsets.test_approvals.hasty_teller",
    "tests.toolsets.test_approvals.brisk_teller",
]
WIRED: list[dict] = []


def recorded_wire(recipient: str, amount: float) -> dict:
    """Wires money and remembers that it did.

    Args:
        recipient: Who receives the money.
        amount: How much to send, in dollars.
    """
    WIRED.append({"recipient": recipient, "amount": amount})
    return wire_money(recipient, amount)


def wire_after_asking(recipient: str, amount: float, tool_context: ToolContext) -> dict:
    """Wires money after asking the user, from inside the tool.

    Args:
        recipient: Who receives the money.
        amount: How much to send, in dollars.
    """
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(
            hint=f"Send {amount} to {recipient}?", payload={"note": ""}
        )
        return {"status": "awaiting approval"}
    if not confirmation.confirmed:
        return {"status": "error", "error": "The user said no."}
    return recorded_wire(recipient, amount)


class TellerLlm(OfflineLlm):
    """Calls `tool` once; then tells what the last result said."""

    tool: str = "recorded_wire"

    def answer(self, llm_request: LlmRequest) -> LlmResponse:
        results = trailing_function_responses(llm_request.contents)
        if not results:
            return calls_response([ChosenCall(self.tool, dict(WIRE))])
        last = results[-1]
        return text_response(describe_result(last.name, last.response))


def teller() -> LlmAgent:
    return LlmAgent(
        name="teller",
        model=TellerLlm(),
        tools=[FunctionTool(recorded_wire, require_confirmation=True)],
    )


def asking_teller() -> LlmAgent:
    return LlmAgent(
        name="asking_teller",
        model=TellerLlm(tool="wire_after_asking"),
        tools=[wire_after_asking],
    )


def audited_teller() -> LlmAgent:
    tool = FunctionTool(recorded_wire, require_confirmation=True)
    return LlmAgent(
        name="audited_teller",
        model=TellerLlm(),
        tools=[answered_by(tool, group="auditors")],
    )


def hasty_teller() -> LlmAgent:
    tool = FunctionTool(recorded_wire, require_confirmation=True)
    return LlmAgent(
        name="hasty_teller",
        model=TellerLlm(),
        tools=[approval_timeout(tool, seconds=60)],
    )


def brisk_teller() -> LlmAgent:
    tool = FunctionTool(recorded_wire, require_confirmation=True)
    return LlmAgent(
        name="brisk_teller",
        model=TellerLlm(),
        tools=[approval_timeout(tool, seconds=0.5)],
    )


@pytest.fixture(autouse=True)
def agents(db, settings):
    WIRED.clear()
    settings.TOOLCRIB_AGENTS = [*settings.TOOLCRIB_AGENTS, *TEST_AGENTS]
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture
def auditor(make_user):
    user = make_user("dave")
    Group.objects.get_or_create(name="auditors")[0].user_set.add(user)
    return user


@pytest.fixture
def pending(start_session, say):
    """A session whose turn left one tool call waiting for approval."""

    def make(user, agent: str = "teller") -> tuple[str, Request]:
        session = start_session(user, agent)
        run = say(user, session, "send 500 to bob")
        assert (run["status"], run["waiting_for"]) == ("waiting", "approval")
        return session, approval_of(session)

    return make


@pytest.fixture
def decide(api_for):
    def post(user, approval_id, approved, wait: bool = True):
        suffix = "?wait=1" if wait else ""
        return api_for(user).post(
            f"/api/approvals/{approval_id}/decide/{suffix}",
            {"approved": approved},
            format="json",
        )

    return post


def approvals():
    return Request.objects.filter(kind=Request.Kind.APPROVAL)


def approval_of(session: str) -> Request:
    """The session's one approval."""
    return approvals().get(session_id=session)


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def texts(frames: list[dict]) -> list[str]:
    return [f["event"]["text"] for f in frames if f["event"]["kind"] == "text"]


def test_the_call_waits_as_a_pending_approval(alice, pending, events_of, api_for):
    session, approval = pending(alice)

    frames = events_of(alice, session)
    inbox = api_for(alice).get("/api/approvals/?status=pending").json()

    assert "approval_request" in kinds(frames)
    asked = next(f["event"] for f in frames if f["event"]["kind"] == "approval_request")
    assert approval.call_id in asked["long_running_tool_ids"]
    assert (approval.status, approval.tool_name, approval.args, approval.agent) == (
        "pending",
        "recorded_wire",
        WIRE,
        "teller",
    )
    assert [(a["id"], a["session"], a["tool_name"]) for a in inbox] == [
        (approval.id, session, "recorded_wire")
    ]
    assert WIRED == []
    assert not Request.objects.filter(
        kind=Request.Kind.CALL, session_id=session
    ).exists()


def test_approved_the_tool_runs_and_the_agent_goes_on(
    alice, pending, decide, events_of, api_for
):
    session, approval = pending(alice)
    before = events_of(alice, session)[-1]["seq"]

    decided = decide(alice, approval.id, True)

    assert decided.status_code == 200, decided.content
    assert decided.json()["status"] == "succeeded"
    assert decided.json()["invocation_id"] == approval.invocation_id
    assert WIRED == [WIRE]
    frames = events_of(alice, session, after=before)
    assert texts(frames) == [SENT]
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by) == ("approved", alice)
    assert approval.answered_at is not None
    assert str(approval.answer_run_id) == decided.json()["id"]
    assert api_for(alice).get("/api/approvals/?status=pending").json() == []
    done = api_for(alice).get("/api/approvals/?status=approved").json()
    assert [(a["id"], a["decided_by"]) for a in done] == [(approval.id, "alice")]


def test_rejected_the_tool_never_runs(alice, pending, decide, events_of):
    session, approval = pending(alice)

    decided = decide(alice, approval.id, False)

    assert decided.json()["status"] == "succeeded"
    assert WIRED == []
    assert texts(events_of(alice, session))[-1] == REJECTED
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by) == ("rejected", alice)


def test_a_decision_survives_a_restart(alice, pending, decide, events_of):
    session, approval = pending(alice)
    builder._cache.clear()  # A fresh process: new agents, runner and services.

    decide(alice, approval.id, True)

    assert WIRED == [WIRE]
    assert texts(events_of(alice, session))[-1] == SENT


def test_a_tool_may_ask_for_confirmation_itself(alice, pending, decide, events_of):
    session, approval = pending(alice, agent="asking_teller")

    assert approval.hint == "Send 500 to bob?"
    assert WIRED == []
    decide(alice, approval.id, True)

    assert WIRED == [WIRE]
    assert texts(events_of(alice, session))[-1] == SENT


def test_a_decision_is_taken_once(alice, pending, decide):
    session, approval = pending(alice)

    first = decide(alice, approval.id, True)
    again = decide(alice, approval.id, False)

    assert first.status_code == 200
    assert again.status_code == 400
    assert again.json() == {"approved": ["This approval has already been decided."]}
    assert WIRED == [WIRE]
    assert Run.objects.filter(session_id=session).count() == 2


def test_another_user_finds_nothing_and_changes_nothing(
    alice, bob, pending, decide, api_for
):
    session, approval = pending(alice)

    refused = decide(bob, approval.id, True)

    assert refused.status_code == 404
    assert api_for(bob).get(f"/api/approvals/{approval.id}/").status_code == 404
    assert api_for(bob).get("/api/approvals/").json() == []
    assert decide(bob, 999999, True).status_code == 404
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert Run.objects.filter(session_id=session).count() == 1
    assert WIRED == []


@pytest.mark.parametrize("body", [{}, {"approved": "yes"}, {"approved": None}])
def test_malformed_decisions_are_refused(alice, pending, api_for, body):
    _, approval = pending(alice)

    refused = api_for(alice).post(
        f"/api/approvals/{approval.id}/decide/", body, format="json"
    )

    assert refused.status_code == 400
    approval.refresh_from_db()
    assert approval.status == "pending"


def test_an_unknown_status_filter_is_refused(alice, api_for):
    assert api_for(alice).get("/api/approvals/?status=maybe").status_code == 400


def test_an_approver_group_decides_and_the_requester_cannot(
    alice, auditor, pending, decide, api_for
):
    session, approval = pending(alice, agent="audited_teller")

    own = decide(alice, approval.id, True)
    mine = api_for(alice).get(f"/api/approvals/?session={session}").json()
    seen = api_for(alice).get(f"/api/approvals/{approval.id}/")
    alices_inbox = api_for(alice).get("/api/approvals/?status=pending").json()
    inbox = api_for(auditor).get("/api/approvals/?status=pending").json()
    decided = decide(auditor, approval.id, True)

    assert approval.answer_group == "auditors"
    assert own.status_code == 403
    # The requester sees her request and that it is not hers to decide...
    assert [(a["id"], a["may_decide"]) for a in mine] == [(approval.id, False)]
    assert (seen.status_code, seen.json()["may_decide"]) == (200, False)
    assert alices_inbox == []  # ...and her inbox holds only what she may decide.
    assert [(a["id"], a["may_decide"]) for a in inbox] == [(approval.id, True)]
    assert decided.status_code == 200
    assert WIRED == [WIRE]
    approval.refresh_from_db()
    assert approval.answered_by == auditor


def test_an_expired_approval_is_rejected_and_the_agent_told(
    alice, pending, decide, events_of, api_for
):
    session, approval = pending(alice, agent="hasty_teller")
    assert approval.expires_at is not None
    assert pending(alice)[1].expires_at is None  # No timeout: never expires.
    assert expire_due() == 0
    Request.objects.filter(pk=approval.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    late = decide(alice, approval.id, True)  # expires it first, and is refused
    listed = api_for(alice).get("/api/approvals/?status=expired").json()

    assert [a["id"] for a in listed] == [approval.id]
    assert late.status_code == 400
    run = Run.objects.filter(session_id=session).order_by("-created_at").first()
    wait_for_run(run=run, timeout=TIMEOUT)
    assert texts(events_of(alice, session))[-1] == REJECTED
    assert WIRED == []
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by) == ("expired", None)
    assert run.user == alice


def test_an_approval_expires_on_time_with_nobody_looking(alice, pending, events_of):
    session, approval = pending(alice, agent="brisk_teller")

    answer = None
    for _ in range(100):  # The expiry is swept on a timer; nobody lists approvals.
        answer = Run.objects.filter(session_id=session, text="").first()
        if answer is not None:
            break
        time.sleep(0.05)
    assert answer is not None, "the approval never expired"
    wait_for_run(run=answer, timeout=TIMEOUT)

    approval.refresh_from_db()
    assert approval.status == "expired"
    assert texts(events_of(alice, session))[-1] == REJECTED
    assert WIRED == []


def test_the_inbox_narrows_to_one_session(alice, pending, api_for):
    first, approval = pending(alice)
    second, other = pending(alice)

    only_first = api_for(alice).get(f"/api/approvals/?session={first}").json()
    only_second = api_for(alice).get(f"/api/approvals/?session={second}").json()

    assert [a["id"] for a in only_first] == [approval.id]
    assert [a["id"] for a in only_second] == [other.id]


def test_expiry_in_a_closed_session_breaks_no_listing(alice, pending, api_for):
    session, approval = pending(alice, agent="hasty_teller")
    Session.objects.filter(pk=session).update(closed_at=timezone.now())
    Request.objects.filter(pk=approval.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    expire_due()  # What the timer set for its expiry runs.
    listed = api_for(alice).get("/api/approvals/?status=expired")

    assert [a["id"] for a in listed.json()] == [approval.id]
    assert Run.objects.filter(session_id=session).count() == 1


def test_the_demo_bank_agent_is_registered(demo_agents):
    assert "bank" in demo_agents


async def test_the_owner_decides_over_the_socket(alice):
    session, approval = await sync(_pending_now)(alice)
    socket = await open_socket(alice, session)
    await drain_backlog(socket)

    await socket.send_json_to(
        {"type": "decide", "approval_id": approval.id, "approved": True}
    )

    ack = await socket.receive_json_from(timeout=TIMEOUT)
    assert ack["type"] == "ack"
    frames = [f for f in await frames_until_finished(socket) if f["seq"] is not None]
    assert texts(frames) == [SENT]
    assert WIRED == [WIRE]
    await socket.disconnect()


async def test_the_socket_refuses_unknown_foreign_and_malformed_decisions(alice, bob):
    session, approval = await sync(_pending_now)(alice)
    other, foreign = await sync(_pending_now)(bob)
    socket = await open_socket(alice, session)
    await drain_backlog(socket)

    await socket.send_json_to({"type": "decide", "approval_id": 999999, "approved": 1})
    malformed = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to(
        {"type": "decide", "approval_id": 999999, "approved": True}
    )
    unknown = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to(
        {"type": "decide", "approval_id": foreign.id, "approved": True}
    )
    refused = await socket.receive_json_from(timeout=TIMEOUT)

    assert malformed["error"]["code"] == "bad_frame"
    assert unknown["error"]["code"] == "not_found"
    assert refused["error"]["code"] == "not_found"
    statuses = await sync(
        lambda: sorted(approvals().values_list("status", flat=True))
    )()
    assert statuses == ["pending", "pending"]
    assert WIRED == []
    await socket.disconnect()


def _pending_now(user) -> tuple[str, Request]:
    """pending(), for async tests (fixtures that call the API are sync)."""
    from rest_framework.test import APIClient

    from agents.tokens import issue_token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    session = client.post("/api/sessions/", {"agent": "teller"}, format="json").json()[
        "id"
    ]
    said = client.post(
        f"/api/sessions/{session}/messages/?wait=1", {"text": "wire"}, format="json"
    )
    assert said.json()["status"] == "waiting", said.content
    return session, approval_of(session)


def test_the_demo_bank_waits_for_approval(alice, start_session, say, decide, events_of):
    session = start_session(alice, "bank")
    assert say(alice, session, 'wire 500 to "bob"')["status"] == "waiting"
    approval = approval_of(session)

    decide(alice, approval.id, True)

    assert approval.tool_name == "wire_money"
    assert texts(events_of(alice, session))[-1] == "Sent 500.0 dollars to bob."
