"""A person removed or demoted at the provider loses access and staff rights here
within TOOLCRIB_SSO_RECHECK_SECONDS, on every credential: her web session, her API
token, her gateway token at /mcp. Not only at her next sign-in.

Against the real test provider (tests/oidc), which holds a refresh token for
Toolcrib's client: the provider forgets her (her refresh token then fails with
invalid_grant), or her groups change there. Time is driven by the setting (0: every
request re-checks) or by moving her last check back, never by sleeping."""

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.utils import timezone
from knox.models import AuthToken

from agents.realtime.consumers import CLOSE_UNAUTHENTICATED
from project.asgi import application
from tests.oidc.flow import CALLBACK, sign_in, use_provider
from tests.oidc.provider import Provider, running_provider
from toolsets import personal_tokens as gateway_tokens
from toolsets.gateway import auth as gateway_auth
from toolsets.models import GatewayToken, ProviderIdentity, Toolset
from toolsets.sso.recheck import forget_recent_checks

pytestmark = pytest.mark.django_db(transaction=True)

STAFF_GROUP = "toolcrib-admins"
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


@pytest.fixture(scope="module")
def provider(tmp_path_factory) -> Iterator[Provider]:
    folder = tmp_path_factory.mktemp("oidc-offboarding")
    with running_provider(redirect_uris=[CALLBACK], folder=folder) as running:
        yield running


def erin_at(provider: Provider, groups: list[str]) -> None:
    provider.set_account(
        "erin",
        password="erin-pw",
        claims={"preferred_username": "erin", "groups": groups},
    )


@pytest.fixture
def sso(provider, settings) -> Provider:
    use_provider(settings, provider)
    settings.TOOLCRIB_OIDC_STAFF_GROUP = STAFF_GROUP
    settings.TOOLCRIB_SSO_RECHECK_SECONDS = 0  # every request asks the provider
    erin_at(provider, [STAFF_GROUP, "support"])
    return provider


@pytest.fixture
def erin(client, sso):
    """erin, signed in through the provider in `client`: staff, in support."""
    landed = sign_in(client, sso, login="erin", password="erin-pw")
    assert landed["Location"] == "/inbox/"
    user = get_user_model().objects.get(username="erin")
    assert user.is_staff
    return user


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


def socket_close_code(session: str, cookie: bytes) -> int | None:
    """The close code a cookie socket to the session gets, or None if it opens."""

    async def connect() -> int | None:
        socket = WebsocketCommunicator(
            application,
            f"/ws/sessions/{session}/",
            headers=[
                (b"host", b"testserver"),
                (b"cookie", cookie),
                (b"origin", b"http://testserver"),
            ],
        )
        connected, _ = await socket.connect(timeout=10)
        assert connected
        await socket.send_json_to({"type": "ping"})
        message = await socket.receive_output(timeout=10)
        if message["type"] == "websocket.close":
            return message["code"]
        assert json.loads(message["text"]) == {"type": "pong"}
        await socket.disconnect()
        return None

    return async_to_sync(connect)()


def personal_token(user) -> str:
    toolset, _ = Toolset.objects.get_or_create(name="notes")
    issued = gateway_tokens.issue_token(user=user, name="ide", toolsets=["notes"])
    assert gateway_auth.authenticate(token=issued.token).user == user
    assert toolset
    return issued.token


def test_groups_removed_at_the_provider_end_her_staff_rights_at_the_recheck(
    client, sso, erin
):
    assert client.get("/api/groups/").status_code == 200

    erin_at(sso, [])
    answer = client.get("/api/groups/")

    assert answer.status_code == 403
    erin.refresh_from_db()
    assert not erin.is_staff
    assert not erin.groups.exists()
    assert erin.is_active  # demoted, not gone


def test_the_recheck_waits_for_its_time_and_not_for_her_next_sign_in(
    client, sso, erin, settings
):
    settings.TOOLCRIB_SSO_RECHECK_SECONDS = 600
    erin_at(sso, [])

    within = client.get("/api/groups/")  # her last check is seconds old
    ProviderIdentity.objects.filter(user=erin).update(
        checked_at=timezone.now() - timedelta(seconds=601)
    )
    forget_recent_checks()  # this process's memory of it ages with the clock, too
    past = client.get("/api/groups/")

    assert within.status_code == 200
    assert past.status_code == 403


@pytest.mark.parametrize("first", ["web session", "API token", "gateway token"])
def test_an_account_deleted_at_the_provider_opens_nothing_on_any_credential(
    client, sso, erin, api_for, first
):
    api = api_for(erin)
    assert api.get("/api/sessions/").status_code == 200
    pat = personal_token(erin)

    sso.remove_account("erin")
    # Whichever credential she uses first finds out; then the rest are revoked.
    answers = {
        "web session": lambda: client.get("/inbox/"),
        "API token": lambda: api.get("/api/sessions/"),
        "gateway token": lambda: mcp_status(pat),
    }
    found_out = answers.pop(first)()

    page = client.get("/inbox/")
    assert page.status_code == 302
    assert page["Location"].startswith("/login/")
    assert api.get("/api/sessions/").status_code == 401
    assert mcp_status(pat) == 401
    assert found_out == 401 or found_out.status_code in {302, 401}
    erin.refresh_from_db()
    assert not erin.is_active
    assert not erin.is_staff
    assert not erin.has_usable_password()
    assert not AuthToken.objects.filter(user=erin).exists()
    assert not GatewayToken.objects.filter(user=erin).exists()


def test_a_socket_with_her_session_cookie_is_refused_once_she_is_deleted(
    client, sso, erin, demo_agents, start_session
):
    session = start_session(erin, "weather_sentiment")
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    assert socket_close_code(session, cookie) is None

    sso.remove_account("erin")

    assert socket_close_code(session, cookie) == CLOSE_UNAUTHENTICATED


def test_a_deleted_account_that_comes_back_at_the_provider_signs_in_again(
    client, sso, erin
):
    sso.remove_account("erin")
    client.get("/inbox/")  # the re-check switches her off
    erin_at(sso, ["support"])

    landed = sign_in(client, sso, login="erin", password="erin-pw")

    assert landed["Location"] == "/inbox/"
    erin.refresh_from_db()
    assert erin.is_active
    assert client.get("/api/sessions/").status_code == 200


def test_staff_switching_her_off_is_not_undone_by_a_sign_in(client, sso, erin):
    client.logout()
    get_user_model().objects.filter(pk=erin.pk).update(is_active=False)

    landed = sign_in(client, sso, login="erin", password="erin-pw")

    assert landed["Location"] == "/login/?sso=failed"


def test_with_nothing_to_ask_the_provider_with_she_signs_in_again(
    client, sso, erin, api_for
):
    api = api_for(erin)
    # As after a sign-in from before the re-check existed: no tokens kept.
    ProviderIdentity.objects.filter(user=erin).update(
        refresh_token="", access_token="", access_token_expires_at=None
    )

    page = client.get("/inbox/")
    refused = api.get("/api/sessions/")
    sign_in(client, sso, login="erin", password="erin-pw")

    assert page.status_code == 302
    assert page["Location"].startswith("/login/")
    assert refused.status_code == 401
    assert "sign in again" in refused.json()["detail"]
    erin.refresh_from_db()
    assert erin.is_active  # nothing revoked: she only signs in again
    assert api.get("/api/sessions/").status_code == 200


def test_a_provider_that_does_not_answer_changes_nothing(
    client, settings, tmp_path, caplog
):
    with running_provider(redirect_uris=[CALLBACK], folder=tmp_path) as short_lived:
        use_provider(settings, short_lived)
        settings.TOOLCRIB_SSO_RECHECK_SECONDS = 0
        erin_at(short_lived, ["support"])
        sign_in(client, short_lived, login="erin", password="erin-pw")
    # The provider is gone: every re-check meets a refused connection.

    answer = client.get("/api/sessions/")

    assert answer.status_code == 200
    erin = get_user_model().objects.get(username="erin")
    assert erin.is_active
    assert list(erin.groups.values_list("name", flat=True)) == ["support"]
    assert "no answer, last known state kept" in caplog.text


def test_the_refresh_token_is_sealed_at_rest(sso, erin):
    identity = ProviderIdentity.objects.get(user=erin)

    assert identity.refresh_token
    assert identity.refresh_token.startswith("gAAAA")  # a Fernet token
