"""The gateway as an OAuth protected resource, end to end with real parts: a live
Daphne, the test OpenID Connect provider (tests/oidc: the npm oidc-provider) as its
authorization server, and the Python SDK's OAuth client (OAuthClientProvider), which
finds the provider through the gateway's 401 and metadata, registers itself, and goes
through PKCE and the authorization code; the test plays the user at the provider's
login and consent pages."""

import asyncio
import base64
import hashlib
import re
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import types
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp.shared.exceptions import MCPError

from tests.live.server import (
    BIN,
    ROOT,
    LiveServer,
    free_port,
    prepare_database,
    server_env,
    stop,
    wait_for_port,
)
from tests.oidc.provider import Provider, running_provider
from tests.toolsets.gateway.conftest import Api, mcp_client, tool_names
from tests.toolsets.gateway.test_auth import HEADERS, INITIALIZE
from toolsets.gateway import oauth
from toolsets.models import Toolset

ELSEWHERE = "https://elsewhere.example/mcp"  # another resource the provider serves
SCOPE = "mcp"
CLIENT_REDIRECT = "http://127.0.0.1:9/callback"  # the MCP client's; never contacted
# The toolset scopes the provider lets clients ask for at the gateway (the
# administrator declares them there, as the gateway's metadata lists them).
TOOLSET_SCOPES = "toolset:math toolset:loader toolset:bank"
PASSWORDS = {"alice": "alice-idp", "bob": "bob-idp", "erin": "erin-idp"}


@dataclass
class OAuthGateway:
    server: LiveServer
    provider: Provider
    env: dict[str, str]
    signing_key: dict  # the provider's private JWK, to sign tokens as it does

    @property
    def resource(self) -> str:
        return f"{self.server.url}/mcp"


def _private_jwk() -> dict:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key, as_dict=True)
    jwk.pop("key_ops")  # the provider verifies with its keys too (use: sig)
    return {**jwk, "kid": "test", "use": "sig", "alg": "RS256"}


@contextmanager
def _daphne_on(port: int, env: dict[str, str], log: Path) -> Iterator[LiveServer]:
    # The gateway's URL is a setting (the audience of its tokens), so the port is
    # chosen before the server starts.
    with log.open("wb") as out:
        process = _popen_daphne(port, env, out)
    try:
        wait_for_port(port, process)
        yield LiveServer(url=f"http://127.0.0.1:{port}", process=process)
    finally:
        stop(process)


def _popen_daphne(port, env, out) -> subprocess.Popen:
    command = [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port)]
    return subprocess.Popen(
        [*command, "project.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )


@pytest.fixture(scope="module")
def oauth_gateway(tmp_path_factory) -> Iterator[OAuthGateway]:
    """Toolcrib with OAuth on, its provider, and alice, bob and erin known to both."""
    folder = tmp_path_factory.mktemp("gateway-oauth")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    key = _private_jwk()
    resources = {
        f"{url}/mcp": {"scope": f"{SCOPE} {TOOLSET_SCOPES}"},
        ELSEWHERE: {"scope": SCOPE},
    }
    with running_provider(
        redirect_uris=[f"{url}/oidc/callback/"],
        folder=folder,
        resources=resources,
        signing_key=key,
    ) as provider:
        for login, password in PASSWORDS.items():
            claims = {"preferred_username": login, "email": f"{login}@example.com"}
            provider.set_account(login, password=password, claims=claims)
        provider.set_account("carol", password="carol-idp", claims={})
        env = server_env(
            {
                "DATABASE_URL": f"sqlite:///{folder / 'gateway.sqlite3'}",
                "TOOLCRIB_DATA_DIR": str(folder),
                **provider.settings_env(),
                # The demo users' groups are Toolcrib's own: no claim touches them.
                "TOOLCRIB_OIDC_MANAGED_GROUPS": "idp-*",
                "TOOLCRIB_GATEWAY_URL": f"{url}/mcp",
                "TOOLCRIB_GATEWAY_OAUTH_SCOPES": SCOPE,
            }
        )
        prepare_database(env)
        with _daphne_on(port, env, folder / "daphne.log") as server:
            gateway = OAuthGateway(server, provider, env, key)
            for login in ("alice", "bob"):  # the demo's users, with passwords
                link_at_toolcrib(gateway, login)
            sign_in_to_toolcrib(gateway, "erin")
            yield gateway


def sign_in_to_toolcrib(gateway: OAuthGateway, login: str) -> None:
    """Her first sign-in on Toolcrib's web pages through the provider: it makes her
    user, linked to her account there."""
    with httpx.Client(timeout=30) as browser:
        landed = play_user(
            browser, f"{gateway.server.url}/oidc/authenticate/?next=/", login
        )
    assert landed == f"{gateway.server.url}/", landed


def link_at_toolcrib(gateway: OAuthGateway, username: str) -> None:
    """She signs in to Toolcrib with her password, then links her account to the
    provider's account of the same login (/oidc/link/)."""
    url = gateway.server.url
    with httpx.Client(timeout=30) as browser:
        browser.get(f"{url}/login/")
        signed_in = browser.post(
            f"{url}/login/",
            data={
                "username": username,
                "password": username,
                "csrfmiddlewaretoken": browser.cookies["csrftoken"],
            },
            headers={"Referer": f"{url}/login/"},
        )
        assert signed_in.status_code == 302, signed_in.text
        link = browser.post(
            f"{url}/oidc/link/?next=/",
            data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
            headers={"Referer": f"{url}/tokens/"},
        )
        assert link.status_code == 302, link.text
        landed = play_user(browser, link.headers["location"], username)
    assert landed == f"{url}/", landed


def play_user(
    browser: httpx.Client, url: str, login: str, *, stop_at: str = "-"
) -> str:
    """A person in a browser: follow redirects, sign in at the provider's login page,
    allow at its consent page; the URL the flow ends on, or is sent to (`stop_at`)."""
    answer = None
    for _ in range(20):
        if answer is None:
            if url.startswith(stop_at):
                return url
            answer = browser.get(url)
        if answer.is_redirect:
            url = urljoin(url, answer.headers["location"])
            answer = None
            continue
        form = re.search(r'action="([^"]+)"', answer.text)
        if form is None or "/interaction/" not in url:  # off the provider's pages
            return url
        action = urljoin(url, form.group(1))
        password = PASSWORDS.get(login, "carol-idp")
        data = {"login": login, "password": password} if "/login" in action else {}
        answer = browser.post(action, data=data)
        url = action
    raise AssertionError("too many steps")


class MemoryStorage:
    """The SDK's TokenStorage, in memory: one client's registration and tokens."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@dataclass
class Signed:
    """What one OAuth client went through: where it was sent, what it holds."""

    storage: MemoryStorage = field(default_factory=MemoryStorage)
    sent_to: list[str] = field(default_factory=list)


@asynccontextmanager
async def oauth_client(gateway: OAuthGateway, login: str, *, name: str):
    """The SDK's client with its OAuth provider on /mcp, initialized; `login` is who
    signs in when the provider's pages ask."""
    signed = Signed()
    browser = httpx.Client(timeout=30)

    async def redirect_handler(url: str) -> None:
        signed.sent_to.append(url)

    async def callback_handler() -> AuthorizationCodeResult:
        back = await asyncio.to_thread(
            play_user, browser, signed.sent_to[-1], login, stop_at=CLIENT_REDIRECT
        )
        query = {
            key: values[0] for key, values in parse_qs(urlsplit(back).query).items()
        }
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    auth = OAuthClientProvider(
        server_url=gateway.resource,
        client_metadata=OAuthClientMetadata(
            client_name=name,
            redirect_uris=[CLIENT_REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=signed.storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    try:
        async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
            async with streamable_http_client(gateway.resource, http_client=http) as (
                read,
                write,
            ):
                session = ClientSession(
                    read,
                    write,
                    client_info=types.Implementation(name=name, version="1"),
                )
                async with session:
                    await session.initialize()
                    yield session, signed
    finally:
        browser.close()


def issue_token(
    gateway: OAuthGateway, login: str, *, resource: str, scope: str
) -> dict:
    """The provider's token endpoint's answer for a client registered now, through
    the code flow with PKCE, for `resource` (RFC 8707)."""
    issuer = gateway.provider.issuer
    with httpx.Client(timeout=30) as browser:
        client = browser.post(
            f"{issuer}/reg",
            json={
                "redirect_uris": [CLIENT_REDIRECT],
                "application_type": "native",
                "token_endpoint_auth_method": "none",
            },
        )
        assert client.status_code == 201, client.text
        client_id = client.json()["client_id"]
        verifier = "v" * 64
        challenge = (
            base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
            .decode()
            .rstrip("=")
        )
        params = {
            "client_id": client_id,
            "response_type": "code",
            "redirect_uri": CLIENT_REDIRECT,
            "scope": scope,
            "state": "s",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": resource,
        }
        start = str(httpx.URL(f"{issuer}/auth", params=params))
        back = play_user(browser, start, login, stop_at=CLIENT_REDIRECT)
        code = parse_qs(urlsplit(back).query)["code"][0]
        answer = browser.post(
            f"{issuer}/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": CLIENT_REDIRECT,
                "client_id": client_id,
                "code_verifier": verifier,
                "resource": resource,
            },
        )
    assert answer.status_code == 200, answer.text
    return answer.json()


def forge(gateway: OAuthGateway, *, key: dict | None = None, **claims) -> str:
    """An access token signed with the provider's key (or `key`), these claims over
    a valid set for alice at the gateway."""
    now = int(time.time())
    body = {
        "iss": gateway.provider.issuer,
        "sub": "alice",
        "aud": gateway.resource,
        "iat": now,
        "exp": now + 600,
        "scope": SCOPE,
        "client_id": "forged",
        **claims,
    }
    private = jwt.algorithms.RSAAlgorithm.from_jwk(key or gateway.signing_key)
    return jwt.encode(
        body, private, algorithm="RS256", headers={"kid": "test", "typ": "at+jwt"}
    )


def initialize(gateway: OAuthGateway, token: str) -> httpx.Response:
    return httpx.post(
        gateway.resource,
        json=INITIALIZE,
        headers={**HEADERS, "Authorization": f"Bearer {token}"},
    )


def post_in_session(
    gateway: OAuthGateway, body: dict, token: str, session: str
) -> httpx.Response:
    headers = {**HEADERS, "Authorization": f"Bearer {token}", "Mcp-Session-Id": session}
    return httpx.post(gateway.resource, json=body, headers=headers)


def api_token(gateway: OAuthGateway, username: str) -> str:
    return gateway.server.token(username, username)


def test_the_gateway_publishes_its_resource_metadata(oauth_gateway):
    issuer = oauth_gateway.provider.issuer
    suffixed = httpx.get(
        f"{oauth_gateway.server.url}/.well-known/oauth-protected-resource/mcp"
    )
    plain = httpx.get(
        f"{oauth_gateway.server.url}/.well-known/oauth-protected-resource"
    )
    refused = httpx.post(oauth_gateway.resource, json=INITIALIZE, headers=HEADERS)

    assert suffixed.status_code == 200
    assert suffixed.json() == plain.json()
    assert suffixed.json()["resource"] == oauth_gateway.resource
    assert suffixed.json()["authorization_servers"] == [issuer]
    scopes = suffixed.json()["scopes_supported"]
    assert scopes[0] == SCOPE
    assert {"toolset:math", "toolset:loader", "toolset:bank"} <= set(scopes)
    assert all(scope.startswith("toolset:") for scope in scopes[1:])
    assert refused.status_code == 401
    # Asked for the required scope alone, a client reaches all its user's tools.
    assert refused.headers["www-authenticate"] == (
        'Bearer realm="toolcrib", resource_metadata="'
        f'{oauth_gateway.server.url}/.well-known/oauth-protected-resource/mcp", '
        f'scope="{SCOPE}"'
    )


async def test_an_oauth_client_signs_her_in_and_sees_exactly_her_tools(oauth_gateway):
    url = oauth_gateway.server.url
    admin = Api(url, api_token(oauth_gateway, "admin"))
    admin.grant(user="bob", tool="math.calculate", effect="deny")
    async with mcp_client(url, api_token(oauth_gateway, "alice")) as by_token:
        alice_tools = await tool_names(by_token)
    async with mcp_client(url, api_token(oauth_gateway, "bob")) as by_token:
        bob_tools = await tool_names(by_token)

    async with oauth_client(oauth_gateway, "alice", name="oauth-ide") as (
        alice,
        signed,
    ):
        seen_by_alice = await tool_names(alice)
        result = await alice.call_tool("math.calculate", {"expression": "6 * 7"})
    async with oauth_client(oauth_gateway, "bob", name="oauth-ide") as (bob, _):
        seen_by_bob = await tool_names(bob)

    authorize = parse_qs(urlsplit(signed.sent_to[0]).query)
    assert signed.sent_to[0].startswith(f"{oauth_gateway.provider.issuer}/auth?")
    assert authorize["resource"] == [oauth_gateway.resource]
    assert authorize["code_challenge_method"] == ["S256"]
    assert signed.storage.client_info.client_id  # registered at the provider
    assert seen_by_alice == alice_tools
    assert seen_by_bob == bob_tools
    assert seen_by_alice - seen_by_bob == {"math.calculate"}
    assert result.structured_content["result"] == 42
    calls = admin.calls(agent="oauth-ide")
    assert [
        (call["user"], call["tool_full_name"], call["status"]) for call in calls
    ] == [("alice", "math.calculate", "ok")]


def test_a_token_for_another_resource_is_refused(oauth_gateway):
    issued = issue_token(oauth_gateway, "alice", resource=ELSEWHERE, scope=SCOPE)

    answer = initialize(oauth_gateway, issued["access_token"])

    assert (
        jwt.decode(issued["access_token"], options={"verify_signature": False})["aud"]
        == ELSEWHERE
    )
    assert answer.status_code == 401
    assert "for another resource" in answer.json()["detail"]
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]


def test_a_token_the_provider_issued_for_the_gateway_opens_it(oauth_gateway):
    issued = issue_token(
        oauth_gateway, "alice", resource=oauth_gateway.resource, scope=SCOPE
    )

    assert initialize(oauth_gateway, issued["access_token"]).status_code == 200


def test_an_expired_token_is_refused(oauth_gateway):
    expired = forge(
        oauth_gateway, iat=int(time.time()) - 7200, exp=int(time.time()) - 3600
    )

    answer = initialize(oauth_gateway, expired)

    assert answer.status_code == 401
    assert "has expired" in answer.json()["detail"]


def test_a_token_signed_with_another_key_is_refused(oauth_gateway):
    forged = forge(oauth_gateway, key=_private_jwk())

    answer = initialize(oauth_gateway, forged)

    assert answer.status_code == 401
    assert "signature" in answer.json()["detail"]


def test_an_id_token_is_not_an_access_token(oauth_gateway):
    issued = issue_token(
        oauth_gateway, "alice", resource=oauth_gateway.resource, scope=f"openid {SCOPE}"
    )

    answer = initialize(oauth_gateway, issued["id_token"])

    assert answer.status_code == 401
    assert "not an access token" in answer.json()["detail"]


def test_a_token_without_the_required_scope_gets_403(oauth_gateway):
    answer = initialize(oauth_gateway, forge(oauth_gateway, scope="openid"))

    assert answer.status_code == 403
    assert 'error="insufficient_scope"' in answer.headers["www-authenticate"]
    assert f'scope="{SCOPE}"' in answer.headers["www-authenticate"]


def test_a_subject_never_signed_in_to_toolcrib_is_refused(oauth_gateway):
    issued = issue_token(
        oauth_gateway, "carol", resource=oauth_gateway.resource, scope=SCOPE
    )

    answer = initialize(oauth_gateway, issued["access_token"])

    assert answer.status_code == 401
    assert "No Toolcrib account is linked" in answer.json()["detail"]


def test_a_switched_off_account_is_refused(oauth_gateway):
    issued = issue_token(
        oauth_gateway, "erin", resource=oauth_gateway.resource, scope=SCOPE
    )
    assert initialize(oauth_gateway, issued["access_token"]).status_code == 200
    database = oauth_gateway.env["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as db:
        db.execute("UPDATE auth_user SET is_active = 0 WHERE username = 'erin'")

    answer = initialize(oauth_gateway, issued["access_token"])

    assert answer.status_code == 401
    assert "erin is switched off" in answer.json()["detail"]


def personal_token(gateway: OAuthGateway, username: str, toolsets: list[str]) -> str:
    api = Api(gateway.server.url, api_token(gateway, username))
    made = api.client.post(
        "/api/gateway/tokens/", json={"name": "beside oauth", "toolsets": toolsets}
    )
    assert made.status_code == 201, made.text
    return made.json()["token"]


async def names_and_refusal(
    gateway: OAuthGateway, token: str, *, client: str, outside: str
) -> tuple[set[str], str]:
    """What a client with this token lists, and its refusal calling `outside`."""
    async with mcp_client(gateway.server.url, token, name=client) as session:
        names = await tool_names(session)
        with pytest.raises(MCPError) as refused:
            await session.call_tool(outside, {})
    return names, refused.value.error.message


async def test_toolset_scopes_limit_a_client_as_a_personal_tokens_toolsets_do(
    oauth_gateway,
):
    url = oauth_gateway.server.url
    scoped = issue_token(
        oauth_gateway,
        "alice",
        resource=oauth_gateway.resource,
        scope=f"{SCOPE} toolset:math toolset:loader",
    )
    pat = personal_token(oauth_gateway, "alice", ["math", "loader"])
    async with mcp_client(url, api_token(oauth_gateway, "alice")) as by_api_token:
        all_hers = await tool_names(by_api_token)

    by_scope, scope_refusal = await names_and_refusal(
        oauth_gateway,
        scoped["access_token"],
        client="scoped-ide",
        outside="bank.balance",
    )
    by_pat, pat_refusal = await names_and_refusal(
        oauth_gateway, pat, client="pat-ide", outside="bank.balance"
    )

    claims = jwt.decode(scoped["access_token"], options={"verify_signature": False})
    assert set(claims["scope"].split()) == {SCOPE, "toolset:math", "toolset:loader"}
    assert "bank.balance" in all_hers  # hers, but outside the token's toolsets
    assert (
        by_scope
        == by_pat
        == {
            "math.calculate",
            "loader.factorial",
            "loader.fibonacci",
            "loader.load_math_tools",
        }
    )
    assert scope_refusal == pat_refusal
    assert "Unknown tool: bank.balance" in scope_refusal
    admin = Api(url, api_token(oauth_gateway, "admin"))
    for client in ("scoped-ide", "pat-ide"):
        calls = admin.calls(agent=client)
        assert [(c["tool_name"], c["status"]) for c in calls] == [
            ("bank.balance", "denied")
        ]


async def test_a_token_without_toolset_scopes_reaches_all_her_tools(oauth_gateway):
    url = oauth_gateway.server.url
    plain = issue_token(
        oauth_gateway, "alice", resource=oauth_gateway.resource, scope=SCOPE
    )
    async with mcp_client(url, api_token(oauth_gateway, "alice")) as by_api_token:
        all_hers = await tool_names(by_api_token)

    async with mcp_client(url, plain["access_token"]) as by_oauth:
        seen = await tool_names(by_oauth)

    assert seen == all_hers
    assert "bank.balance" in seen


async def test_toolset_scopes_only_narrow_her_grants(oauth_gateway):
    url = oauth_gateway.server.url
    admin = Api(url, api_token(oauth_gateway, "admin"))
    admin.grant(user="bob", tool="loader.fibonacci", effect="deny")
    scoped = issue_token(
        oauth_gateway,
        "bob",
        resource=oauth_gateway.resource,
        scope=f"{SCOPE} toolset:loader",
    )

    names, refusal = await names_and_refusal(
        oauth_gateway,
        scoped["access_token"],
        client="bob-scoped",
        outside="loader.fibonacci",
    )

    assert "loader.factorial" in names
    assert "loader.fibonacci" not in names
    assert "Unknown tool: loader.fibonacci" in refusal


def test_a_toolset_scope_names_the_toolset_and_only_it():
    assert oauth.toolsets_in(["mcp"]) is None
    assert oauth.toolsets_in(["mcp", "toolset:math", "toolset:files"]) == {
        "math",
        "files",
    }
    # A scope naming no toolset of the catalog limits to nothing, never to all.
    assert oauth.toolsets_in(["toolset:"]) == frozenset({""})
    assert oauth.toolsets_in(["toolset:*"]) == frozenset({"*"})


def test_scopes_are_read_from_scope_and_from_scp():
    assert oauth.granted_scopes({"scope": "mcp toolset:math"}) == {
        "mcp",
        "toolset:math",
    }
    assert oauth.granted_scopes({"scp": ["mcp", "toolset:math", 7]}) == {
        "mcp",
        "toolset:math",
    }
    assert oauth.granted_scopes({"scp": "mcp toolset:math"}) == {
        "mcp",
        "toolset:math",
    }
    assert oauth.granted_scopes({"scope": 5}) == frozenset()


@pytest.mark.django_db
def test_the_metadata_lists_a_scope_for_each_toolset_a_scope_can_spell(settings):
    settings.TOOLCRIB_GATEWAY_OAUTH_SCOPES = ["mcp"]
    Toolset.objects.create(name="zz_open")
    Toolset.objects.create(name="zz_off", enabled=False)
    Toolset.objects.create(name="zz_gone", missing=True)
    Toolset.objects.create(name="zz two words")

    scopes = oauth.supported_scopes()

    assert scopes[0] == "mcp"
    assert "toolset:zz_open" in scopes
    assert not {"toolset:zz_off", "toolset:zz_gone"} & set(scopes)
    assert not [scope for scope in scopes if " " in scope]
    assert scopes[1:] == sorted(scopes[1:])
