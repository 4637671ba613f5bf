"""One inbox for every kind of request: what waits on me, what I asked, one answer.

`/api/requests/` lists the pending requests the signed-in user may answer (by the
one rule), `?mine=1` what she asked of others; each reads the same for every
kind; `POST /api/requests/{id}/answer/` answers any kind, once.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import Request, Run, Session
from tests.agents.requests.conftest import client_of, paused

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "s3cr3t-k3y"

# The contract's shape (/tmp/prompts/api16.md), for every kind.
KEYS = {
    "id",
    "kind",
    "status",
    "session",
    "session_title",
    "agent",
    "call_id",
    "tool_call_id",
    "resume_id",
    "tool_name",
    "args",
    "title",
    "description",
    "reason",
    "requester",
    "answer_group",
    "who_may_answer",
    "may_answer",
    "may_remember",
    "created_at",
    "expires_at",
    "answered_by",
    "answered_at",
    "comment",
    "approvals_required",
    "approvals",
    "approved_args",
    "args_edited_by",
    "response",
    "scheme",
    "fields",
    "authorization_url",
    "run",
    "answer_run",
}


@pytest.fixture
def waiting(people) -> dict[str, Request]:
    """alice's paused sessions: an approval and a call each for her, and for a group;
    a credential for her."""
    return {
        agent: paused(people["owner"], agent)[1]
        for agent in ["teller", "audited_teller", "exporter", "reimbursement", "quotes"]
    }


def listed(user, query: str = "") -> list[int]:
    response = client_of(user).get(f"/api/requests/{query}")
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()]


def ids(waiting: dict[str, Request], *agents: str) -> list[int]:
    """The requests of `agents`, newest first, as the inbox lists them."""
    return sorted((waiting[agent].pk for agent in agents), reverse=True)


def answer(user, request_id: int, body: dict):
    return client_of(user).post(
        f"/api/requests/{request_id}/answer/?wait=1", body, format="json"
    )


def test_the_inbox_holds_what_waits_on_each_person_and_the_count_agrees(
    people, waiting
):
    inboxes = {who: listed(people[who]) for who in people}
    counts = {
        who: client_of(people[who]).get("/api/requests/count/").json() for who in people
    }

    assert inboxes == {
        "owner": ids(waiting, "teller", "exporter", "quotes"),
        "member": ids(waiting, "audited_teller", "reimbursement"),
        # Staff may decide every call and approval, another user's own too.
        "staff": ids(waiting, "teller", "audited_teller", "exporter", "reimbursement"),
        "stranger": [],
    }
    assert counts == {who: {"count": len(inboxes[who])} for who in people}


def test_my_requests_are_what_i_wait_on_from_others(people, waiting):
    assert listed(people["owner"], "?mine=1") == ids(
        waiting, "audited_teller", "reimbursement"
    )
    assert listed(people["member"], "?mine=1") == []
    assert listed(people["stranger"], "?mine=1") == []


def test_a_request_reads_as_a_person_reads_it(people, waiting):
    approval = waiting["audited_teller"]

    mine = client_of(people["owner"]).get(f"/api/requests/{approval.pk}/").json()
    theirs = client_of(people["member"]).get(f"/api/requests/{approval.pk}/").json()

    assert set(mine) == KEYS
    assert {key: mine[key] for key in KEYS - {"created_at", "run", "session"}} == {
        "id": approval.pk,
        "kind": "approval",
        "status": "pending",
        "session_title": "audited_teller: send 500 to bob",
        "agent": approval.agent,
        "call_id": approval.call_id,
        "tool_call_id": approval.tool_call_id,
        "resume_id": "",
        "tool_name": "recorded_wire",
        "args": {"recipient": "bob", "amount": 500},
        "title": "Approve a call of recorded_wire",
        "description": "Wires money and remembers that it did.",
        "reason": "The tool asks for a person's approval before each call.",
        "requester": "alice",
        "answer_group": "auditors",
        "who_may_answer": "A member of auditors or staff (not alice)",
        "may_answer": False,
        "may_remember": False,
        "expires_at": None,
        "answered_by": None,
        "answered_at": None,
        "comment": "",
        "approvals_required": 1,
        "approvals": [],
        "approved_args": None,
        "args_edited_by": None,
        "response": None,
        "scheme": "",
        "fields": [],
        "authorization_url": None,
        "answer_run": None,
    }
    assert (mine["session"], mine["run"]) == (approval.session_id, str(approval.run_id))
    assert theirs["may_answer"] is True


def test_adks_developer_text_is_never_the_reason(people, waiting):
    approval = waiting["teller"]
    assert "FunctionResponse" in approval.hint  # ADK's own, for developers

    shown = client_of(people["owner"]).get(f"/api/requests/{approval.pk}/").json()

    assert "FunctionResponse" not in str(shown)
    assert shown["reason"] == "The tool asks for a person's approval before each call."


def test_each_kind_has_its_wording(people, waiting):
    shown = {
        agent: client_of(people["owner"]).get(f"/api/requests/{request.pk}/").json()
        for agent, request in waiting.items()
    }

    assert shown["exporter"]["title"] == "Post the result of start_export"
    assert shown["exporter"]["who_may_answer"] == "alice, or staff"
    assert shown["reimbursement"]["reason"] == (
        "The tool waits for a member of managers to post its result."
    )
    assert (shown["quotes"]["scheme"], shown["quotes"]["fields"]) == (
        "apiKey",
        ["api_key"],
    )
    assert shown["quotes"]["who_may_answer"] == ("alice only: a credential is personal")
    assert shown["quotes"]["title"].startswith("Give a credential for ")


def test_a_decision_with_a_comment_is_stored_and_shown(people, waiting):
    approval = waiting["audited_teller"]

    decided = answer(
        people["member"], approval.pk, {"approved": True, "comment": "  Fine.  "}
    )

    assert decided.status_code == 200, decided.content
    body = decided.json()
    assert set(body) == {"run", "request"}
    assert body["run"]["status"] == "succeeded"
    assert {k: body["request"][k] for k in ("status", "answered_by", "comment")} == {
        "status": "approved",
        "answered_by": "carol",
        "comment": "Fine.",
    }
    assert body["request"]["answer_run"] == body["run"]["id"]
    old = client_of(people["owner"]).get(f"/api/approvals/{approval.pk}/").json()
    assert old["comment"] == "Fine."
    assert listed(people["member"]) == [waiting["reimbursement"].pk]
    assert listed(people["owner"], "?mine=1&status=approved") == [approval.pk]


def test_every_kind_is_answered_the_same_way(people, waiting):
    call = answer(people["owner"], waiting["exporter"].pk, {"response": {"rows": 3}})
    credential = answer(people["owner"], waiting["quotes"].pk, {"api_key": SECRET})
    rejected = answer(people["owner"], waiting["teller"].pk, {"approved": False})

    assert [r.status_code for r in (call, credential, rejected)] == [200] * 3
    assert [r.json()["request"]["status"] for r in (call, credential, rejected)] == [
        "answered",
        "answered",
        "rejected",
    ]
    assert SECRET not in credential.content.decode()
    assert listed(people["owner"]) == []
    assert client_of(people["owner"]).get("/api/requests/count/").json() == {"count": 0}


def test_the_listing_takes_a_status_a_session_and_pages(people, waiting):
    answer(people["owner"], waiting["teller"].pk, {"approved": True})
    owner = people["owner"]

    everything = listed(owner, "?status=all")
    session = waiting["exporter"].session_id

    assert everything == ids(waiting, "teller", "exporter", "quotes")
    assert listed(owner, "?status=approved") == [waiting["teller"].pk]
    assert listed(owner, f"?session={session}") == [waiting["exporter"].pk]
    assert listed(owner, "?status=all&limit=2") == everything[:2]
    assert listed(owner, f"?status=all&before={everything[1]}") == everything[2:]
    refused = client_of(owner).get("/api/requests/?status=done")
    assert (refused.status_code, list(refused.json())) == (400, ["status"])


@pytest.mark.parametrize(
    ("who", "status"),
    [("owner", 403), ("stranger", 404), ("staff", 200)],
)
def test_only_whoever_the_rule_names_answers(people, waiting, who, status):
    approval = waiting["audited_teller"]

    answered = answer(people[who], approval.pk, {"approved": True})

    assert answered.status_code == status, answered.content
    approval.refresh_from_db()
    assert (approval.status == "approved") is (status == 200)


def test_a_credential_is_its_owners_alone(people, waiting):
    credential = waiting["quotes"]

    staff = answer(people["staff"], credential.pk, {"api_key": "k"})
    read = client_of(people["staff"]).get(f"/api/requests/{credential.pk}/")

    assert (staff.status_code, read.status_code) == (404, 404)
    credential.refresh_from_db()
    assert credential.status == "pending"


def test_deciding_twice_is_a_conflict_and_changes_nothing(people, waiting):
    approval = waiting["teller"]
    answer(people["owner"], approval.pk, {"approved": True, "comment": "first"})

    again = answer(people["staff"], approval.pk, {"approved": False, "comment": "no"})

    assert again.status_code == 409
    assert again.json() == {"detail": "This approval has already been decided."}
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by, approval.comment) == (
        "approved",
        people["owner"],
        "first",
    )
    assert Run.objects.filter(session_id=approval.session_id).count() == 2


def test_deciding_an_expired_request_is_a_conflict(people):
    session, approval = paused(people["owner"], "hasty_teller")
    Request.objects.filter(pk=approval.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    late = answer(people["owner"], approval.pk, {"approved": True})

    assert late.status_code == 409
    assert late.json() == {"detail": "This approval expired: nobody answered in time."}
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by) == ("expired", None)


def test_closing_a_session_expires_its_requests_and_an_answer_is_refused(
    people, waiting
):
    approval = waiting["teller"]
    owner = client_of(people["owner"])
    assert owner.post(f"/api/sessions/{approval.session_id}/close/").status_code == 200

    refused = answer(people["owner"], approval.pk, {"approved": True})

    assert refused.status_code == 409
    assert refused.json() == {
        "detail": "This approval expired: nobody answered in time."
    }
    approval.refresh_from_db()
    assert (approval.status, approval.answered_by) == ("expired", None)
    assert approval.pk not in listed(people["owner"])  # nobody can answer it now
    assert Run.objects.filter(session_id=approval.session_id).count() == 1


def test_answering_in_a_closed_session_is_refused_and_changes_nothing(people, waiting):
    """A request still pending in a closed session (closed before closing expired
    what waited in it) is refused as closed, and stays as it was."""
    approval = waiting["teller"]
    Session.objects.filter(pk=approval.session_id).update(closed_at=timezone.now())

    refused = answer(people["owner"], approval.pk, {"approved": True})

    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("This session is closed")
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert approval.pk not in listed(people["owner"])  # nobody can answer it now
    assert Run.objects.filter(session_id=approval.session_id).count() == 1


def test_a_request_of_a_deleted_session_is_not_found(people, waiting):
    approval = waiting["teller"]
    owner = client_of(people["owner"])
    assert owner.delete(f"/api/sessions/{approval.session_id}/").status_code == 204

    gone = answer(people["owner"], approval.pk, {"approved": True})

    assert gone.status_code == 404
    assert not Request.objects.filter(pk=approval.pk).exists()


@pytest.mark.parametrize(
    ("agent", "body", "field"),
    [
        ("teller", {"approved": True, "comment": "x" * 2001}, "comment"),
        ("teller", {"approved": "yes"}, "approved"),
        ("teller", {"approved": False, "remember": True}, "remember"),
        ("teller", {"response": {"ok": True}}, "approved"),
        ("exporter", {"approved": True}, "response"),
        ("quotes", {"password": "p", "extra": 1}, "extra"),
    ],
)
def test_a_bad_answer_is_refused_by_field_and_changes_nothing(
    people, waiting, agent, body, field
):
    request = waiting[agent]

    refused = answer(people["owner"], request.pk, body)

    assert refused.status_code == 400, refused.content
    assert field in refused.json()
    request.refresh_from_db()
    assert request.status == "pending"


def test_remembering_where_the_catalog_does_not_allow_it_is_refused(people, waiting):
    approval = waiting["teller"]

    refused = answer(people["owner"], approval.pk, {"approved": True, "remember": True})

    assert refused.status_code == 400
    assert list(refused.json()) == ["remember"]
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert Run.objects.filter(session_id=approval.session_id).count() == 1


def test_reading_changes_nothing(people, waiting):
    before = list(Request.objects.values_list("pk", "status").order_by("pk"))
    for who in people:
        listed(people[who])
        listed(people[who], "?mine=1&status=all")
        client_of(people[who]).get("/api/requests/count/")

    assert list(Request.objects.values_list("pk", "status").order_by("pk")) == before
