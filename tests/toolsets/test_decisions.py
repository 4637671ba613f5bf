"""The audit of a held call: `awaiting_approval`, then what was decided, by whom
and when, and the call's own row once an approved call runs. A rejected or
expired call never runs, and its one row says so."""

import csv
import io
import json
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from agents.adk.builder import sync_code_agents
from agents.answers.expiry import expire_due
from agents.models import Request, Run, Session
from agents.requests import wording
from agents.turns.start import wait_for_run
from tests.toolsets.test_approvals import WIRED
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
TEST_AGENTS = [
    "tests.toolsets.test_approvals.teller",
    "tests.toolsets.test_approvals.asking_teller",
    "tests.toolsets.test_approvals.audited_teller",
    "tests.toolsets.test_approvals.hasty_teller",
    "tests.toolsets.test_approvals.brisk_teller",
]
# Nothing that ran failed: a healthy day of approvals counts no failure.
FAILURES = {"error", "timeout"}


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
def held(start_session, say):
    """A session whose turn holds one wire for approval, and that approval."""

    def make(user, agent: str = "teller") -> tuple[str, Request]:
        session = start_session(user, agent)
        say(user, session, "send 500 to bob")
        return session, Request.objects.get(session_id=session, kind="approval")

    return make


@pytest.fixture
def decide(api_for):
    def post(user, approval: Request, approved: bool):
        return api_for(user).post(
            f"/api/approvals/{approval.pk}/decide/?wait=1",
            {"approved": approved},
            format="json",
        )

    return post


def audit_of(approval: Request) -> list[dict]:
    """The audit rows of the held call, oldest first."""
    rows = ToolCall.objects.filter(
        session_id=approval.session_id, call_id=approval.tool_call_id
    ).order_by("started_at", "id")
    return list(rows.values("status", "attempts", "decided_by__username", "decided_at"))


def test_a_held_call_is_audited_awaiting_approval(alice, held):
    _, approval = held(alice)

    assert audit_of(approval) == [
        {
            "status": "awaiting_approval",
            "attempts": 0,
            "decided_by__username": None,
            "decided_at": None,
        }
    ]


def test_a_held_call_reads_as_waiting_not_as_adks_placeholder(alice, held):
    _, approval = held(alice)

    row = ToolCall.objects.get(call_id=approval.tool_call_id)
    assert "please approve or reject" not in row.result_summary
    # The audit gives the reason the inbox's card gives, in the same words.
    assert row.result_summary == wording.reason(approval)


def test_an_approval_is_audited_with_who_and_when_then_the_run(
    alice, auditor, held, decide
):
    _, approval = held(alice, "audited_teller")

    decided = decide(auditor, approval, True)

    approval.refresh_from_db()
    assert decided.status_code == 200, decided.content
    assert audit_of(approval) == [
        {
            "status": "approved",
            "attempts": 0,
            "decided_by__username": "dave",
            "decided_at": approval.answered_at,
        },
        # The run of the approved call says who approved it, and when, too.
        {
            "status": "ok",
            "attempts": 1,
            "decided_by__username": "dave",
            "decided_at": approval.answered_at,
        },
    ]
    assert WIRED == [{"recipient": "bob", "amount": 500}]


def test_a_rejection_is_audited_once_with_who_and_when(alice, held, decide):
    _, approval = held(alice)

    decide(alice, approval, False)

    approval.refresh_from_db()
    assert audit_of(approval) == [
        {
            "status": "rejected",
            "attempts": 0,
            "decided_by__username": "alice",
            "decided_at": approval.answered_at,
        }
    ]
    assert WIRED == []


def test_a_tool_that_asks_itself_is_held_then_decided(alice, held, decide):
    _, approval = held(alice, "asking_teller")
    asked = audit_of(approval)

    decide(alice, approval, False)

    assert [row["status"] for row in asked] == ["awaiting_approval"]
    assert [row["status"] for row in audit_of(approval)] == ["rejected"]
    assert WIRED == []


def test_an_expiry_with_nobody_looking_is_audited_expired(alice, held):
    _, approval = held(alice, "brisk_teller")

    answer = None
    for _ in range(100):  # The sweep runs on a timer; nobody reads anything.
        answer = Run.objects.filter(resumes_id=approval.run_id).first()
        if answer is not None:
            break
        time.sleep(0.05)
    assert answer is not None, "the approval never expired"
    wait_for_run(run=answer, timeout=TIMEOUT)

    approval.refresh_from_db()
    assert audit_of(approval) == [
        {
            "status": "expired",
            "attempts": 0,
            "decided_by__username": None,
            "decided_at": approval.answered_at,
        }
    ]
    assert WIRED == []


def test_an_expiry_in_a_closed_session_is_audited_expired(alice, held):
    session, approval = held(alice, "hasty_teller")
    Session.objects.filter(pk=session).update(closed_at=timezone.now())
    Request.objects.filter(pk=approval.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert expire_due() == 1

    [row] = audit_of(approval)
    assert (row["status"], row["decided_by__username"]) == ("expired", None)
    assert row["decided_at"] is not None
    assert not Run.objects.filter(resumes_id=approval.run_id).exists()


def test_a_deleted_sessions_approval_is_audited_expired(alice, held, api_for):
    session, approval = held(alice)
    before = timezone.now()

    deleted = api_for(alice).delete(f"/api/sessions/{session}/")

    assert deleted.status_code == 204
    assert not Request.objects.filter(pk=approval.pk).exists()
    [row] = audit_of(approval)
    assert (row["status"], row["decided_by__username"]) == ("expired", None)
    assert row["decided_at"] >= before


def test_the_exports_carry_the_decision(alice, staff, held, decide, api_for):
    _, approval = held(alice)
    decide(alice, approval, False)
    approval.refresh_from_db()
    client = api_for(staff)

    listed = client.get("/api/tool-calls/").json()
    rows = list(
        csv.DictReader(
            io.StringIO(client.get("/api/tool-calls/?format=csv").getvalue().decode())
        )
    )
    lines = [
        json.loads(line)
        for line in client.get("/api/tool-calls/?format=jsonl")
        .getvalue()
        .decode()
        .splitlines()
    ]

    when = approval.answered_at
    for found in (listed, rows, lines):
        [row] = found
        assert (row["status"], row["decided_by"]) == ("rejected", "alice")
        assert row["access_rule"].startswith("toolset")
    assert listed[0]["decided_at"] == when.isoformat().replace("+00:00", "Z")
    assert rows[0]["decided_at"] == lines[0]["decided_at"] == listed[0]["decided_at"]


def test_the_audit_filters_by_decision(alice, staff, held, decide, api_for):
    _, rejected = held(alice)
    _, approved = held(alice)
    decide(alice, rejected, False)
    decide(alice, approved, True)

    statuses = {
        status: len(api_for(staff).get(f"/api/tool-calls/?status={status}").json())
        for status in ("approved", "rejected", "expired", "ok")
    }

    assert statuses == {"approved": 1, "rejected": 1, "expired": 0, "ok": 1}


def test_a_day_of_approvals_audits_no_failure(alice, held, decide, staff, api_for):
    for approved in (True, False, True):
        _, approval = held(alice)
        decide(alice, approval, approved)
    held(alice)  # still waiting

    calls = api_for(staff).get("/api/tool-calls/").json()

    assert sorted(call["status"] for call in calls) == [
        "approved",
        "approved",
        "awaiting_approval",
        "ok",
        "ok",
        "rejected",
    ]
    assert not [call for call in calls if call["status"] in FAILURES]
