"""A turn that stops for a person ends `waiting` (for what, said), and the turn an
answer starts links back to it; a waiting turn holds up nothing."""

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone

from agents.answers.expiry import expire_due
from agents.models import Request, Run
from agents.turns import queue
from agents.turns.start import wait_for_run
from tests.agents.requests.conftest import client_of, paused

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
# The agents whose first turn pauses, and what their Run then waits for.
WAITING = {
    "exporter": "result",
    "teller": "approval",
    "quotes": "credential",
}
# An answer of each kind, as its REST endpoint takes it.
ANSWERS = {
    "exporter": lambda session, request: (
        f"/api/sessions/{session}/function-responses/?wait=1",
        {"call_id": request.call_id, "response": {"url": "s3://x/sales.csv"}},
    ),
    "teller": lambda session, request: (
        f"/api/approvals/{request.pk}/decide/?wait=1",
        {"approved": True},
    ),
    "quotes": lambda session, request: (
        f"/api/auth-requests/{request.pk}/answer/?wait=1",
        {"api_key": "k-123"},
    ),
}


def run_finished(client, session: str) -> list[dict]:
    """The run of each run_finished event of the session, in order."""
    frames = client.get(f"/api/sessions/{session}/events/").json()
    return [
        frame["event"]["run"]
        for frame in frames
        if frame["event"]["kind"] == "run_finished"
    ]


@pytest.mark.parametrize(("agent", "waiting_for"), WAITING.items())
def test_a_turn_that_pauses_ends_waiting_everywhere_it_shows(
    people, agent, waiting_for
):
    alice = people["owner"]
    client = client_of(alice)

    session, request = paused(alice, agent)

    run = Run.objects.get(session_id=session)
    shown = client.get(f"/api/runs/{run.pk}/").json()
    [finished] = run_finished(client, session)
    [listed] = [
        s for s in client.get("/api/sessions/").json()["results"] if s["id"] == session
    ]
    assert (run.status, run.waiting_for) == ("waiting", waiting_for)
    assert (shown["status"], shown["waiting_for"]) == ("waiting", waiting_for)
    assert finished == {
        "id": str(run.pk),
        "status": "waiting",
        "error": None,
        "waiting_for": waiting_for,
        "resumes": None,
        "stats": shown["stats"],
    }
    assert finished["stats"]["model_calls"] >= 1
    assert listed["last_run"] == {
        "id": str(run.pk),
        "status": "waiting",
        "waiting_for": waiting_for,
    }
    assert request.status == "pending"


@pytest.mark.parametrize("agent", WAITING)
def test_the_turn_an_answer_starts_resumes_the_waiting_one(people, agent):
    alice = people["owner"]
    client = client_of(alice)
    session, request = paused(alice, agent)
    url, body = ANSWERS[agent](session, request)

    answered = client.post(url, body, format="json")

    waited = Run.objects.get(session_id=session, status="waiting")
    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded"
    assert answered.json()["resumes"] == str(waited.pk)
    assert run_finished(client, session)[-1]["resumes"] == str(waited.pk)
    [listed] = [
        s for s in client.get("/api/sessions/").json()["results"] if s["id"] == session
    ]
    assert listed["last_run"]["status"] == "succeeded"


def test_an_expiry_resumes_the_waiting_turn_too(people):
    session, approval = paused(people["owner"], "hasty_teller")
    Request.objects.filter(pk=approval.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert expire_due() == 1
    approval.refresh_from_db()
    resumed = wait_for_run(run=approval.answer_run, timeout=TIMEOUT)
    assert resumed.resumes_id == approval.run_id
    assert resumed.status == "succeeded"


def test_the_next_message_of_a_waiting_session_runs(people):
    alice = people["owner"]
    client = client_of(alice)
    session, _ = paused(alice, "teller")

    said = client.post(
        f"/api/sessions/{session}/messages/?wait=1", {"text": "again"}, format="json"
    )

    # It ran to its end (the teller asks once more), queued behind nothing.
    assert said.status_code == 200, said.content
    assert said.json()["status"] == "waiting"
    assert [run["status"] for run in run_finished(client, session)] == [
        "waiting",
        "waiting",
    ]
    assert Request.objects.filter(session_id=session, status="pending").count() == 2


def test_recovery_leaves_a_waiting_run_alone(people, settings):
    settings.TOOLCRIB_RUN_LEASE = 0.3  # leases on: lost running runs are failed
    alice = people["owner"]
    session, _ = paused(alice, "teller")
    waiting = Run.objects.get(session_id=session)
    # Long past twice the turn timeout: a running run this old would be failed.
    Run.objects.filter(pk=waiting.pk).update(
        started_at=timezone.now() - timedelta(days=1)
    )

    failed = async_to_sync(queue.afail_lost_runs)()
    said = client_of(alice).post(
        f"/api/sessions/{session}/messages/?wait=1", {"text": "again"}, format="json"
    )

    waiting.refresh_from_db()
    assert failed == 0
    assert said.json()["status"] == "waiting"
    assert (waiting.status, waiting.waiting_for, waiting.error) == (
        "waiting",
        "approval",
        "",
    )
