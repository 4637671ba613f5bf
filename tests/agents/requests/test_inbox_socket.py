"""The inbox socket: a live doorbell for every request a user may answer, or made.

On connect it says how many requests wait on the user; then each request that is
recorded, answered or expired rings the sockets of whoever may answer it and of
its requester, and nobody else's. It also takes `decide` frames.
"""

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from agents.answers.expiry import expire_due
from agents.models import Request, Run
from agents.tokens import issue_token
from project.asgi import application
from tests.agents.requests.conftest import client_of, paused

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
QUIET = 0.3  # long enough for a frame already rung to arrive


async def open_inbox(user) -> WebsocketCommunicator:
    """The user's inbox socket, its first frame (the count) read."""
    socket = await connect_inbox(user)
    first = await socket.receive_json_from(timeout=TIMEOUT)
    assert first["type"] == "inbox", first
    return socket


async def connect_inbox(user) -> WebsocketCommunicator:
    token = await sync(issue_token)(user=user)
    socket = WebsocketCommunicator(
        application,
        "/ws/inbox/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    return socket


async def rings(socket: WebsocketCommunicator) -> list[dict]:
    """Every frame the socket received until it went quiet."""
    frames = []
    while not await socket.receive_nothing(timeout=QUIET):
        frames.append(await socket.receive_json_from(timeout=TIMEOUT))
    return frames


def ring(event: str, request: Request, status: str) -> dict:
    return {
        "type": "request",
        "event": event,
        "id": request.pk,
        "kind": request.kind,
        "status": status,
    }


def delete_session(user, session: str):
    return client_of(user).delete(f"/api/sessions/{session}/")


def close_session(user, session: str):
    return client_of(user).post(f"/api/sessions/{session}/close/")


def count_of(user) -> dict:
    return client_of(user).get("/api/requests/count/").json()


def decide(user, request: Request, body: dict):
    return client_of(user).post(
        f"/api/requests/{request.pk}/answer/?wait=1", body, format="json"
    )


async def test_the_first_frame_counts_what_waits_on_me(people):
    await sync(paused)(people["owner"], "teller")
    await sync(paused)(people["owner"], "audited_teller")

    counts = {}
    for who in ("owner", "member", "staff", "stranger"):
        socket = await connect_inbox(people[who])
        counts[who] = await socket.receive_json_from(timeout=TIMEOUT)
        await socket.disconnect()

    assert counts == {
        "owner": {"type": "inbox", "count": 1},
        "member": {"type": "inbox", "count": 1},
        "staff": {"type": "inbox", "count": 2},
        "stranger": {"type": "inbox", "count": 0},
    }


async def test_a_new_request_rings_who_may_answer_it_and_its_requester(people):
    sockets = {who: await open_inbox(people[who]) for who in people}

    _, request = await sync(paused)(people["owner"], "audited_teller")
    heard = {who: await rings(socket) for who, socket in sockets.items()}

    new = ring("new", request, "pending")
    assert heard == {"owner": [new], "member": [new], "staff": [new], "stranger": []}
    for socket in sockets.values():
        await socket.disconnect()


async def test_a_decision_rings_once_it_is_stored(people):
    _, request = await sync(paused)(people["owner"], "audited_teller")
    sockets = {who: await open_inbox(people[who]) for who in people}

    decided = await sync(decide)(people["member"], request, {"approved": False})
    heard = {who: await rings(socket) for who, socket in sockets.items()}

    assert decided.status_code == 200, decided.content
    answered = ring("answered", request, "rejected")
    assert heard == {
        "owner": [answered],
        "member": [answered],
        "staff": [answered],
        "stranger": [],
    }
    for socket in sockets.values():
        await socket.disconnect()


async def test_a_credential_rings_its_owner_alone(people):
    sockets = {who: await open_inbox(people[who]) for who in people}

    _, request = await sync(paused)(people["owner"], "quotes")
    heard = {who: await rings(socket) for who, socket in sockets.items()}

    assert heard == {
        "owner": [ring("new", request, "pending")],
        "member": [],
        "staff": [],
        "stranger": [],
    }
    for socket in sockets.values():
        await socket.disconnect()


async def test_an_expiry_with_nobody_looking_rings(people):
    _, request = await sync(paused)(people["owner"], "hasty_teller")
    await Request.objects.filter(pk=request.pk).aupdate(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    socket = await open_inbox(people["owner"])

    assert await sync(expire_due)() == 1
    heard = await rings(socket)

    assert heard == [ring("expired", request, "expired")]
    await socket.disconnect()


async def test_a_decision_over_the_inbox_socket(people):
    _, request = await sync(paused)(people["owner"], "audited_teller")
    socket = await open_inbox(people["member"])

    await socket.send_json_to(
        {
            "type": "decide",
            "approval_id": request.pk,
            "approved": True,
            "comment": "ok by me",
        }
    )
    frames = await rings(socket)

    assert frames[0]["type"] == "ack"
    assert ring("answered", request, "approved") in frames[1:]
    await request.arefresh_from_db()
    assert (request.status, request.comment) == ("approved", "ok by me")
    assert request.answered_by_id == people["member"].pk
    await socket.disconnect()


@pytest.mark.parametrize(
    ("who", "code"),
    [("owner", "forbidden"), ("stranger", "not_found"), ("member", "already_decided")],
)
async def test_the_inbox_socket_refuses_a_decision_and_changes_nothing(
    people, who, code
):
    _, request = await sync(paused)(people["owner"], "audited_teller")
    first = await open_inbox(people["member"])
    await first.send_json_to(
        {"type": "decide", "approval_id": request.pk, "approved": False}
    )
    await rings(first)
    await first.disconnect()
    socket = await open_inbox(people[who])
    runs = await Run.objects.filter(session_id=request.session_id).acount()

    await socket.send_json_to(
        {"type": "decide", "approval_id": request.pk, "approved": True}
    )
    refused = await socket.receive_json_from(timeout=TIMEOUT)

    assert (refused["type"], refused["error"]["code"]) == ("error", code)
    await request.arefresh_from_db()
    assert (request.status, request.answered_by_id) == (
        "rejected",
        people["member"].pk,
    )
    assert await Run.objects.filter(session_id=request.session_id).acount() == runs
    await socket.disconnect()


async def test_a_decide_frame_names_an_approval_never_another_kind(people):
    _, call = await sync(paused)(people["owner"], "exporter")
    socket = await open_inbox(people["owner"])

    await socket.send_json_to(
        {"type": "decide", "approval_id": call.pk, "approved": True}
    )
    refused = await socket.receive_json_from(timeout=TIMEOUT)

    assert (refused["type"], refused["error"]["code"]) == ("error", "not_found")
    await call.arefresh_from_db()
    assert call.status == "pending"
    await socket.disconnect()


async def test_the_inbox_socket_takes_no_other_frames(people):
    socket = await open_inbox(people["owner"])

    await socket.send_json_to({"type": "message", "text": "hi"})
    unsupported = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to({"type": "ping"})
    pong = await socket.receive_json_from(timeout=TIMEOUT)

    assert unsupported["error"]["code"] == "unsupported"
    assert pong == {"type": "pong"}
    await socket.disconnect()


async def test_a_deleted_sessions_requests_ring_as_expired(people):
    session, request = await sync(paused)(people["owner"], "audited_teller")
    socket = await open_inbox(people["member"])

    deleted = await sync(delete_session)(people["owner"], session)
    heard = await rings(socket)

    assert deleted.status_code == 204
    assert heard == [ring("expired", request, "expired")]
    await socket.disconnect()


async def test_a_closed_sessions_requests_expire_and_ring(people):
    """Closing a session expires what waits in it: nobody can answer it any more,
    so the approver's inbox drops the card and the audit says expired."""
    session, request = await sync(paused)(people["owner"], "audited_teller")
    socket = await open_inbox(people["member"])

    closed = await sync(close_session)(people["owner"], session)
    heard = await rings(socket)

    assert closed.status_code == 200, closed.content
    assert heard == [ring("expired", request, "expired")]
    await request.arefresh_from_db()
    assert request.status == Request.Status.EXPIRED
    assert await sync(count_of)(people["member"]) == {"count": 0}
    await socket.disconnect()
