"""People: only staff list, change or invite users; an invitation's link makes one
account, once, before it expires, and a forged one opens nothing; a user switched
off stops at once on every credential (web session, API token, gateway token,
open socket)."""

import json
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from agents.realtime.consumers import CLOSE_UNAUTHENTICATED
from project.asgi import application
from toolsets import personal_tokens
from toolsets.models import Invite, Toolset
from toolsets.people import invites

STRONG = "correct-horse-battery-staple"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


@pytest.fixture
def staff(make_user):
    return make_user("sam", is_staff=True)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/users/", None),
        ("get", "/api/users/bob/", None),
        ("post", "/api/users/", {"username": "x", "password": STRONG}),
        ("patch", "/api/users/bob/", {"is_active": False}),
        ("patch", "/api/users/alice/", {"is_staff": True}),
        ("get", "/api/invites/", None),
        ("post", "/api/invites/", {"is_staff": True}),
    ],
)
def test_a_user_cannot_list_change_or_invite_users(
    api_for, alice, bob, method, path, body
):
    answer = getattr(api_for(alice), method)(path, body, format="json")

    assert answer.status_code == 403
    alice.refresh_from_db()
    bob.refresh_from_db()
    assert bob.is_active and not alice.is_staff
    assert not Invite.objects.exists()
    assert get_user_model().objects.count() == 2


@pytest.mark.django_db
def test_a_user_gets_no_people_page(client, alice):
    client.force_login(alice)

    assert client.get("/staff/people/").status_code == 403
    assert client.get("/staff/changes/").status_code == 403


def accept(client: Client, token: str, username: str):
    return client.post(
        f"/invite/{token}/",
        {"username": username, "password1": STRONG, "password2": STRONG},
    )


@pytest.mark.django_db
def test_an_invite_link_makes_one_account_once(staff):
    issued = invites.create_invite(by=staff, is_staff=True)

    first = accept(Client(), issued.token, "newbie")
    again = accept(Client(), issued.token, "another")

    assert first.status_code == 302
    assert again.status_code == 410
    assert b"used already" in again.content
    assert get_user_model().objects.get(username="newbie").is_staff
    assert not get_user_model().objects.filter(username="another").exists()


@pytest.mark.django_db
def test_an_expired_invite_link_makes_nothing(staff):
    issued = invites.create_invite(by=staff)
    Invite.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    shown = Client().get(f"/invite/{issued.token}/")
    posted = accept(Client(), issued.token, "late")

    assert shown.status_code == posted.status_code == 410
    assert b"expired" in posted.content
    assert not get_user_model().objects.filter(username="late").exists()
    assert Invite.objects.get().used_at is None


@pytest.mark.django_db
@pytest.mark.parametrize("forged", ["x" * 43, "a%00b", "../../api/users", "y" * 500])
def test_a_forged_invite_link_makes_nothing(staff, forged):
    issued = invites.create_invite(by=staff, is_staff=True)

    answer = accept(Client(), forged, "mallory")

    assert answer.status_code in {404, 410}
    assert not get_user_model().objects.filter(username="mallory").exists()
    assert invites.check(token=issued.token).used_at is None


@pytest.mark.django_db
def test_an_invite_for_staff_does_not_make_a_superuser(staff):
    issued = invites.create_invite(by=staff, is_staff=True)

    accept(Client(), issued.token, "newbie")

    assert not get_user_model().objects.get(username="newbie").is_superuser


def mcp_status(token: str) -> int:
    """POST /mcp (initialize) through the ASGI app, as an MCP client would."""

    async def post() -> int:
        communicator = HttpCommunicator(
            application,
            "POST",
            "/mcp",
            body=json.dumps(INITIALIZE).encode(),
            headers=[
                (b"authorization", f"Bearer {token}".encode()),
                (b"content-type", b"application/json"),
                (b"accept", b"application/json, text/event-stream"),
            ],
        )
        response = await communicator.get_response(timeout=10)
        return response["status"]

    return async_to_sync(post)()


@pytest.mark.django_db(transaction=True)
def test_a_user_switched_off_stops_on_every_credential_at_once(api_for, staff, bob):
    browser = Client()
    browser.force_login(bob)
    api = api_for(bob)
    Toolset.objects.get_or_create(name="notes")
    gateway = personal_tokens.issue_token(user=bob, name="ide", toolsets=["notes"])
    assert browser.get("/api/sessions/").status_code == 200
    assert api.get("/api/sessions/").status_code == 200
    assert mcp_status(gateway.token) == 200

    answer = api_for(staff).patch(
        "/api/users/bob/", {"is_active": False}, format="json"
    )

    assert answer.status_code == 200
    assert browser.get("/api/sessions/").status_code in {401, 403}
    assert browser.get("/", follow=False)["Location"].startswith("/login/")
    assert api.get("/api/sessions/").status_code == 401
    assert mcp_status(gateway.token) == 401


@pytest.mark.django_db(transaction=True)
def test_a_user_switched_off_loses_her_open_sockets(api_for, staff, bob):
    token_socket_path = "/ws/inbox/"
    api = api_for(bob)
    token = api._credentials["HTTP_AUTHORIZATION"].split()[1]

    async def scenario() -> tuple[dict, bool]:
        socket = WebsocketCommunicator(
            application,
            token_socket_path,
            headers=[(b"authorization", f"Token {token}".encode())],
        )
        connected, _ = await socket.connect(timeout=10)
        assert connected
        first = json.loads(await socket.receive_from(timeout=10))
        assert first["type"] == "inbox"
        await _switch_off(staff, api_for)
        closed = await socket.receive_output(timeout=10)
        again = WebsocketCommunicator(
            application,
            token_socket_path,
            headers=[(b"authorization", f"Token {token}".encode())],
        )
        await again.connect(timeout=10)
        refused = await again.receive_output(timeout=10)
        return closed, refused

    closed, refused = async_to_sync(scenario)()

    assert closed == {"type": "websocket.close", "code": CLOSE_UNAUTHENTICATED}
    assert refused["code"] == CLOSE_UNAUTHENTICATED


async def _switch_off(staff, api_for) -> None:
    def patch() -> int:
        client = api_for(staff)
        return client.patch(
            "/api/users/bob/", {"is_active": False}, format="json"
        ).status_code

    assert await database_sync_to_async(patch)() == 200
