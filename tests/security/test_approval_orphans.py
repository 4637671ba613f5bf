"""An approval belongs to its session: deleting the session deletes its approvals.

Before, `Approval.session_id` was a bare string: a deleted session left its
approvals behind, and once such an orphan expired, every listing of approvals
(which sweeps expired ones) failed with a 500, for every user.
"""

import time

import pytest
from asgiref.sync import async_to_sync
from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool

from agents.adk.builder import sync_code_agents
from agents.adk.long_running import approval_timeout
from agents.adk.sessions import DjangoSessionService
from agents.models import Request, Run, Session
from agents.turns.start import wait_for_run
from demo.bank import wire_money

pytestmark = pytest.mark.django_db(transaction=True)

EXPIRY_SECONDS = 1.0


def quick_teller() -> LlmAgent:
    """Wires money once approved; an approval not decided within a second expires."""
    tool = FunctionTool(wire_money, require_confirmation=True)
    return LlmAgent(
        name="quick_teller", tools=[approval_timeout(tool, seconds=EXPIRY_SECONDS)]
    )


@pytest.fixture(autouse=True)
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.security.test_approval_orphans.quick_teller",
    ]
    return sync_code_agents()


@pytest.fixture
def pending(start_session, say):
    """A session whose turn left a wire waiting for approval, and that approval."""

    def make(user) -> tuple[str, Request]:
        session = start_session(user, "quick_teller")
        assert say(user, session, 'wire 500 to "bob"')["status"] == "waiting"
        return session, Request.objects.get(
            kind=Request.Kind.APPROVAL, session_id=session
        )

    return make


@pytest.fixture
def lenient_api_for(api_for):
    """A client that answers a server error with its status, as a browser sees it."""

    def client_for(user):
        client = api_for(user)
        client.raise_request_exception = False
        return client

    return client_for


def wait_until_expired(approval: Request) -> None:
    """Wait for the sweep its timer runs (no listing expires anything)."""
    deadline = approval.expires_at.timestamp() + 10
    expired = Request.objects.filter(pk=approval.pk, status=Request.Status.EXPIRED)
    while not expired.exists() and time.time() < deadline:
        time.sleep(0.05)


def test_deleting_a_session_over_rest_deletes_its_approvals(alice, pending, api_for):
    session, approval = pending(alice)

    deleted = api_for(alice).delete(f"/api/sessions/{session}/")

    assert deleted.status_code == 204
    assert not Request.objects.filter(
        kind=Request.Kind.APPROVAL, pk=approval.pk
    ).exists()


def test_deleting_a_session_through_adk_deletes_its_approvals(alice, pending):
    session, approval = pending(alice)
    row = Session.objects.get(pk=session)

    async_to_sync(DjangoSessionService().delete_session)(
        app_name=row.app_name, user_id=row.user_id, session_id=session
    )

    assert not Request.objects.filter(
        kind=Request.Kind.APPROVAL, pk=approval.pk
    ).exists()


def test_an_expired_approval_of_a_deleted_session_breaks_no_listing(
    alice, bob, pending, lenient_api_for
):
    session, approval = pending(alice)
    kept, other = pending(alice)
    assert lenient_api_for(alice).delete(f"/api/sessions/{session}/").status_code == 204

    wait_until_expired(other)  # asked last, so it expires last
    alices = lenient_api_for(alice).get("/api/approvals/")
    bobs = lenient_api_for(bob).get("/api/approvals/")

    assert (alices.status_code, bobs.status_code) == (200, 200)
    assert [(a["id"], a["session"]) for a in alices.json()] == [(other.id, kept)]
    assert alices.json()[0]["status"] == "expired"
    assert bobs.json() == []
    # The live session's expiry resumed its turn with ADK's rejection.
    answer = Run.objects.filter(session_id=kept, text="").get()
    assert wait_for_run(run=answer, timeout=10).status == "succeeded"
