"""Who may answer a request: one rule, for every kind, over REST and the socket.

A credential: only the session owner. A call or an approval: the owner or staff;
with an answer group, its members or staff, never the requester (unless the
catalog lets her decide her own calls of the tool). Anyone else finds nothing
(404), and nothing changes. An inbox holds exactly what its user may answer.
"""

import pytest
from asgiref.sync import sync_to_async as sync

from agents.models import Request, Run, Session
from agents.requests import rules
from tests.agents.requests.conftest import client_of, paused
from tests.agents.test_long_running import (
    drain_backlog,
    frames_until_finished,
    open_socket,
)

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
ANSWERED = {"call": "already_answered", "approval": "already_decided"}
ANSWERED["credential"] = "already_answered"

# The rule, row by row: who may answer a request of an agent's kind and group.
RULE = {
    "exporter": {"owner", "staff"},
    "reimbursement": {"member", "staff"},
    "teller": {"owner", "staff"},
    "audited_teller": {"member", "staff"},
    "quotes": {"owner"},
}
# And an approval to a group that the catalog lets its requester decide herself.
SELF_APPROVED = {"owner", "member", "staff"}
WHO = ["owner", "member", "staff", "stranger"]


def rest_answer(user, request: Request):
    """Answer `request` as `user` over REST, the way its kind is answered."""
    client = client_of(user)
    if request.kind == Request.Kind.CALL:
        return client.post(
            f"/api/sessions/{request.session_id}/function-responses/?wait=1",
            {"call_id": request.call_id, "response": {"ok": True}},
            format="json",
        )
    if request.kind == Request.Kind.APPROVAL:
        return client.post(
            f"/api/approvals/{request.pk}/decide/?wait=1",
            {"approved": True},
            format="json",
        )
    return client.post(
        f"/api/auth-requests/{request.pk}/answer/?wait=1",
        {"api_key": "k"},
        format="json",
    )


def answer_frame(request: Request) -> dict:
    """The socket frame that answers `request`, the way its kind is answered."""
    if request.kind == Request.Kind.CALL:
        return {
            "type": "function_response",
            "call_id": request.call_id,
            "response": {"ok": True},
        }
    if request.kind == Request.Kind.APPROVAL:
        return {"type": "decide", "approval_id": request.pk, "approved": True}
    return {
        "type": "credential",
        "call_id": request.call_id,
        "credential": {"api_key": "k"},
    }


def test_the_inbox_filter_and_the_rule_for_one_request_agree(people):
    owner = people["owner"]
    requests = {}
    for number, (agent, kind, group) in enumerate(
        [
            ("exporter", "call", ""),
            ("reimbursement", "call", "managers"),
            ("teller", "approval", ""),
            ("audited_teller", "approval", "auditors"),
            ("quotes", "credential", ""),
            ("self_approved", "approval", "auditors"),
        ]
    ):
        session = Session.objects.create(
            id=f"s{number}", adk_id=f"s{number}", app_name=agent, owner=owner
        )
        requests[agent] = Request.objects.create(
            kind=kind,
            session=session,
            call_id="c",
            answer_group=group,
            self_approval=agent == "self_approved",
        )

    answers = {
        (agent, who): rules.may_answer(user=people[who], request=request)
        for agent, request in requests.items()
        for who in WHO
    }
    inboxes = {
        (agent, who): Request.objects.filter(rules.addressed_to(people[who]))
        .filter(pk=request.pk)
        .exists()
        for agent, request in requests.items()
        for who in WHO
    }

    rule = {**RULE, "self_approved": SELF_APPROVED}
    assert answers == {(a, w): w in rule[a] for a in rule for w in WHO}
    assert inboxes == answers


def test_staff_never_answer_their_own_request_to_a_group(people):
    staff = people["staff"]
    session = Session.objects.create(id="s", adk_id="s", app_name="x", owner=staff)
    request = Request.objects.create(
        kind="approval", session=session, call_id="c", answer_group="auditors"
    )

    assert not rules.may_answer(user=staff, request=request)
    assert rules.may_answer(user=people["member"], request=request)
    assert rules.may_see(user=staff, request=request)


@pytest.mark.parametrize(
    ("agent", "who"),
    [(agent, who) for agent, answerers in RULE.items() for who in sorted(answerers)],
)
def test_whoever_the_rule_names_answers_over_rest(people, agent, who):
    session, request = paused(people["owner"], agent)

    answered = rest_answer(people[who], request)

    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded"
    request.refresh_from_db()
    assert (request.status != "pending", request.answered_by) == (True, people[who])
    assert str(request.answer_run_id) == answered.json()["id"]


@pytest.mark.parametrize(
    ("agent", "who", "status"),
    [
        ("exporter", "member", 404),
        ("exporter", "stranger", 404),
        ("reimbursement", "owner", 403),
        ("reimbursement", "stranger", 404),
        ("teller", "member", 404),
        ("teller", "stranger", 404),
        ("audited_teller", "owner", 403),
        ("audited_teller", "stranger", 404),
        ("quotes", "staff", 404),
        ("quotes", "member", 404),
        ("quotes", "stranger", 404),
    ],
)
def test_anyone_else_is_refused_over_rest_and_nothing_changes(
    people, agent, who, status
):
    session, request = paused(people["owner"], agent)

    refused = rest_answer(people[who], request)

    assert refused.status_code == status, refused.content
    request.refresh_from_db()
    assert (request.status, request.answered_by) == ("pending", None)
    assert Run.objects.filter(session_id=session).count() == 1


def test_answering_twice_is_refused_and_changes_nothing(people):
    session, request = paused(people["owner"], "teller")
    rest_answer(people["owner"], request)

    again = rest_answer(people["staff"], request)

    assert again.status_code == 400
    assert again.json() == {"approved": ["This approval has already been decided."]}
    request.refresh_from_db()
    assert (request.status, request.answered_by) == ("approved", people["owner"])
    assert Run.objects.filter(session_id=session).count() == 2


@pytest.mark.parametrize(
    ("agent", "who"),
    [
        ("exporter", "owner"),
        ("exporter", "staff"),
        ("reimbursement", "staff"),
        ("teller", "owner"),
        ("teller", "staff"),
        ("audited_teller", "staff"),
        ("quotes", "owner"),
    ],
)
async def test_whoever_the_rule_names_answers_over_the_socket_once(people, agent, who):
    session, request = await sync(paused)(people["owner"], agent)
    socket = await open_socket(people[who], session)
    await drain_backlog(socket)

    await socket.send_json_to(answer_frame(request))
    ack = await socket.receive_json_from(timeout=TIMEOUT)
    await frames_until_finished(socket)  # the resumed turn, to its end
    await socket.send_json_to(answer_frame(request))
    again = await socket.receive_json_from(timeout=TIMEOUT)

    assert ack["type"] == "ack"
    assert (again["type"], again["error"]["code"]) == ("error", ANSWERED[request.kind])
    await request.arefresh_from_db()
    assert request.answered_by_id == people[who].pk
    await socket.disconnect()


@pytest.mark.parametrize(
    ("agent", "who", "code"),
    [
        ("reimbursement", "owner", "forbidden"),
        ("audited_teller", "owner", "forbidden"),
        ("quotes", "staff", "not_found"),
    ],
)
async def test_the_socket_refuses_whom_the_rule_does_not_name(people, agent, who, code):
    session, request = await sync(paused)(people["owner"], agent)
    socket = await open_socket(people[who], session)
    await drain_backlog(socket)

    await socket.send_json_to(answer_frame(request))
    refused = await socket.receive_json_from(timeout=TIMEOUT)

    assert (refused["type"], refused["error"]["code"]) == ("error", code)
    await request.arefresh_from_db()
    assert request.status == "pending"
    assert await Run.objects.filter(session_id=session).acount() == 1
    await socket.disconnect()


@pytest.mark.parametrize(
    ("agent", "code"),
    [
        ("exporter", "unknown_call"),
        ("teller", "not_found"),
        ("quotes", "not_found"),
    ],
)
async def test_another_users_socket_finds_nothing_to_answer(people, agent, code):
    session, request = await sync(paused)(people["owner"], agent)
    own = await sync(client_of)(people["stranger"])
    made = await sync(own.post)("/api/sessions/", {"agent": agent}, format="json")
    theirs = made.json()["id"]
    socket = await open_socket(people["stranger"], theirs)

    await socket.send_json_to(answer_frame(request))
    refused = await socket.receive_json_from(timeout=TIMEOUT)

    assert (refused["type"], refused["error"]["code"]) == ("error", code)
    await request.arefresh_from_db()
    assert request.status == "pending"
    assert await Run.objects.filter(session_id=session).acount() == 1
    await socket.disconnect()
