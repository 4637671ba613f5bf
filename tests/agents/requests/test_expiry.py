"""Expiry: a request past its time is expired by the sweep, never by a listing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.answers.tasks import expire_requests_task
from agents.models import Request, Run
from agents.turns.start import wait_for_run
from tests.agents.requests.conftest import client_of, paused

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
REJECTED = "Sorry, that did not work: This tool call is rejected."


@pytest.fixture
def overdue(people):
    """An approval of alice's whose time ran out a second ago, not yet swept."""
    session, approval = paused(people["owner"], "hasty_teller")
    Request.objects.filter(pk=approval.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    return session, approval


def test_reading_requests_expires_nothing(people, overdue):
    session, approval = overdue
    client = client_of(people["owner"])

    reads = [
        client.get("/api/approvals/"),
        client.get("/api/approvals/?status=pending"),
        client.get(f"/api/approvals/?session={session}"),
        client.get(f"/api/approvals/{approval.pk}/"),
        client.get("/api/calls/"),
        client.get("/api/auth-requests/"),
        client.get(f"/api/sessions/{session}/calls/"),
        client.get("/api/requests/"),
        client.get("/api/requests/?mine=1&status=all"),
        client.get("/api/requests/count/"),
        client.get(f"/api/requests/{approval.pk}/"),
    ]

    assert [r.status_code for r in reads] == [200] * len(reads)
    assert [a["id"] for a in reads[1].json()] == [approval.pk]
    assert reads[3].json()["status"] == "pending"
    assert [r["id"] for r in reads[7].json()] == [approval.pk]
    assert reads[-1].json()["status"] == "pending"
    approval.refresh_from_db()
    assert (approval.status, approval.answered_at) == ("pending", None)
    assert Run.objects.filter(session_id=session).count() == 1


def test_the_sweep_expires_what_is_due_and_tells_the_agent(people, overdue):
    session, approval = overdue
    waiting, other = paused(people["owner"], "teller")  # no time: never expires

    expired = expire_requests_task()

    assert expired == 1
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by) == ("expired", None)
    run = wait_for_run(run=approval.answer_run, timeout=TIMEOUT)
    assert (run.status, run.user) == ("succeeded", people["owner"])
    texts = [
        f["event"]["text"]
        for f in client_of(people["owner"])
        .get(f"/api/sessions/{session}/events/")
        .json()
        if f["event"]["kind"] == "text"
    ]
    assert texts[-1] == REJECTED
    other.refresh_from_db()
    assert other.status == "pending"
    assert expire_requests_task() == 0  # swept once


def test_an_answer_after_the_time_is_refused_and_the_agent_told(people, overdue):
    session, approval = overdue

    late = client_of(people["owner"]).post(
        f"/api/approvals/{approval.pk}/decide/", {"approved": True}, format="json"
    )

    assert late.status_code == 400
    assert late.json() == {"approved": ["This approval has already been decided."]}
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by) == ("expired", None)
    run = wait_for_run(run=approval.answer_run, timeout=TIMEOUT)
    assert run.status == "succeeded"
    assert Run.objects.filter(session_id=session).count() == 2
