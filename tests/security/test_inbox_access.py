"""Another user's requests, over the inbox's REST endpoints and its socket.

Nobody reads, counts or answers a request they may neither answer nor made; a
doorbell rings only the sockets of those who may (their user's, their groups',
staff's), never a bystander's, and a group of any name is a group a socket joins.
"""

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group

from agents.models import Request, Run
from agents.realtime.consumers import CLOSE_FORBIDDEN, CLOSE_UNAUTHENTICATED
from agents.tokens import issue_token
from project.asgi import application
from tests.agents.requests import conftest as paused_sessions
from tests.agents.requests.conftest import client_of, paused

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
QUIET = 0.3
# The paused sessions' fixtures: their agents (autouse), and the people around them.
agents = paused_sessions.agents
people = paused_sessions.people
# Names a Django group may have and a channel group may not.
ODD_GROUP_NAMES = ["launch control ✓", "a" * 150, "x/y:z?*"]


@pytest.fixture
def bystander(make_user):
    """A member of managers, which decides nothing of what the tests ask."""
    user = make_user("dave")
    Group.objects.get_or_create(name="managers")[0].user_set.add(user)
    return user


async def connect_inbox(user=None, headers=()) -> WebsocketCommunicator:
    extra = list(headers)
    if user is not None:
        token = await sync(issue_token)(user=user)
        extra.append((b"authorization", f"Token {token}".encode()))
    socket = WebsocketCommunicator(application, "/ws/inbox/", headers=extra)
    assert (await socket.connect(timeout=TIMEOUT))[0]
    return socket


def test_another_users_request_is_not_there_for_a_stranger(people):
    session, request = paused(people["owner"], "audited_teller")
    stranger = client_of(people["stranger"])

    reads = [
        stranger.get(f"/api/requests/{request.pk}/"),
        stranger.post(
            f"/api/requests/{request.pk}/answer/", {"approved": True}, format="json"
        ),
    ]
    lists = [
        stranger.get(query).json()
        for query in (
            "/api/requests/?status=all",
            "/api/requests/?mine=1&status=all",
            f"/api/requests/?session={session}&status=all",
            f"/api/requests/?mine=1&session={session}&status=all",
        )
    ]

    assert [r.status_code for r in reads] == [404, 404]
    assert reads[0].json() == reads[1].json() == {"detail": "No such request."}
    assert lists == [[], [], [], []]
    assert stranger.get("/api/requests/count/").json() == {"count": 0}
    request.refresh_from_db()
    assert request.status == "pending"
    assert Run.objects.filter(session_id=session).count() == 1


def test_a_missing_request_and_a_hidden_one_read_the_same(people):
    _, request = paused(people["owner"], "quotes")
    staff = client_of(people["staff"])

    hidden = staff.get(f"/api/requests/{request.pk}/")
    missing = staff.get(f"/api/requests/{request.pk + 1000}/")

    assert (hidden.status_code, hidden.json()) == (missing.status_code, missing.json())


async def test_a_ring_reaches_no_bystander(people, bystander):
    watching = await connect_inbox(bystander)
    await watching.receive_json_from(timeout=TIMEOUT)  # the count

    await sync(paused)(people["owner"], "audited_teller")
    await sync(paused)(people["owner"], "teller")
    await sync(paused)(people["owner"], "quotes")

    assert await watching.receive_nothing(timeout=QUIET)
    await watching.disconnect()


async def test_a_stranger_decides_nothing_over_the_inbox_socket(people):
    _, request = await sync(paused)(people["owner"], "teller")
    socket = await connect_inbox(people["stranger"])
    await socket.receive_json_from(timeout=TIMEOUT)

    await socket.send_json_to(
        {"type": "decide", "approval_id": request.pk, "approved": True}
    )
    refused = await socket.receive_json_from(timeout=TIMEOUT)

    assert refused["error"] == {"code": "not_found", "message": "No such request."}
    await request.arefresh_from_db()
    assert request.status == "pending"
    await socket.disconnect()


@pytest.mark.parametrize("name", ODD_GROUP_NAMES)
async def test_a_group_of_any_name_hears_its_requests(people, make_user, name):
    member = await sync(make_user)()
    await sync(_join)(member, name)
    socket = await connect_inbox(member)
    await socket.receive_json_from(timeout=TIMEOUT)

    _, request = await sync(paused)(people["owner"], "audited_teller")
    await Request.objects.filter(pk=request.pk).aupdate(answer_group=name)
    await sync(_reject)(people["staff"], request)
    heard = await socket.receive_json_from(timeout=TIMEOUT)

    assert (heard["type"], heard["id"], heard["status"]) == (
        "request",
        request.pk,
        "rejected",
    )
    await socket.disconnect()


async def test_an_inbox_socket_needs_a_user():
    socket = await connect_inbox()

    closed = await socket.receive_output(timeout=TIMEOUT)

    assert closed == {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}


async def test_a_cookie_inbox_socket_from_another_origin_is_refused(alice, client):
    await sync(client.force_login)(alice)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()

    socket = await connect_inbox(
        headers=[
            (b"host", b"localhost:8000"),
            (b"cookie", cookie),
            (b"origin", b"http://localhost:9999"),
        ]
    )
    closed = await socket.receive_output(timeout=TIMEOUT)

    assert closed == {"type": "websocket.close", "code": CLOSE_FORBIDDEN}


def _join(user, name: str) -> None:
    Group.objects.get_or_create(name=name)[0].user_set.add(user)


def _reject(user, request: Request) -> None:
    rejected = client_of(user).post(
        f"/api/requests/{request.pk}/answer/", {"approved": False}, format="json"
    )
    assert rejected.status_code == 202, rejected.content
