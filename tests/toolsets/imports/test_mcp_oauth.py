"""An MCP server behind OAuth, connected with client credentials: the server (the MCP
SDK's own, in its OAuth mode) names its authorization server (a loopback one here),
Toolcrib fetches a token from it and lists and calls the tools; the client's secret
is sealed and never shown."""

import base64
import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from tests.toolsets.builtin import servers
from tests.toolsets.builtin.servers import Reply, json_reply
from toolsets.models import ToolImport

pytestmark = pytest.mark.django_db(transaction=True)

MCP_SERVER = Path(__file__).parent.parent / "builtin" / "mcp_server.py"
TOKEN = "tok-1f2e3d"
SECRET = "client-s3cret-value"


@pytest.fixture
def authorization_server():
    """Hands TOKEN to client `toolcrib` with SECRET, by client_credentials."""
    server = servers.serve()
    issuer = server.url("").rstrip("/")
    server.routes["/.well-known/oauth-authorization-server"] = json_reply(
        {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        }
    )

    def token(handler) -> Reply:
        basic = handler.headers.get("Authorization", "").removeprefix("Basic ")
        form = parse_qs(handler.body.decode())
        if base64.b64decode(basic).decode() != f"toolcrib:{SECRET}":
            return Reply(401, b'{"error": "invalid_client"}')
        if form.get("grant_type") != ["client_credentials"]:
            return Reply(400, b'{"error": "unsupported_grant_type"}')
        return json_reply(
            {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}
        )

    server.routes["/token"] = token
    yield server
    servers.stop(server)


@pytest.fixture
def protected_mcp_url(tmp_path, authorization_server):
    tools_file = tmp_path / "tools.txt"
    tools_file.write_text("add")
    issuer = authorization_server.url("").rstrip("/")
    process = subprocess.Popen(
        [sys.executable, str(MCP_SERVER), "oauth", str(tools_file), issuer, TOKEN],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = process.stdout.readline().strip()
        assert port.isdigit()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture
def admin(api_for, staff):
    return api_for(staff)


def oauth(issuer: str, secret: str = SECRET) -> dict:
    return {"client_id": "toolcrib", "client_secret": secret, "issuer": issuer}


def test_an_oauth_mcp_server_is_connected_with_client_credentials(
    admin, protected_mcp_url, authorization_server
):
    issuer = authorization_server.url("").rstrip("/")
    made = admin.post(
        "/api/imports/",
        {
            "kind": "mcp",
            "name": "vault",
            "url": protected_mcp_url,
            "oauth": oauth(issuer),
        },
        format="json",
    )

    assert made.status_code == 201, made.content
    assert [t["full_name"] for t in made.json()["tools"]] == ["vault.vault_add"]
    assert made.json()["registration"]["oauth"] == {
        "client_id": "toolcrib",
        "issuer": issuer,
        "scope": "",
    }
    assert ("POST", "/token") in [(m, p) for m, p, _ in authorization_server.seen]
    listed = admin.get("/api/imports/")
    for answer in (made, listed):
        assert SECRET not in answer.content.decode()
    stored = ToolImport.objects.values_list("registration", flat=True).get()
    assert SECRET not in json.dumps(stored)


def test_a_wrong_client_secret_is_refused_on_the_url_and_nothing_is_stored(
    admin, protected_mcp_url, authorization_server
):
    issuer = authorization_server.url("").rstrip("/")
    made = admin.post(
        "/api/imports/",
        {
            "kind": "mcp",
            "name": "vault",
            "url": protected_mcp_url,
            "oauth": oauth(issuer, secret="wrong"),
        },
        format="json",
    )

    assert made.status_code == 400
    assert made.json()["url"][0]
    assert not ToolImport.objects.exists()


def test_oauth_for_a_stdio_server_is_refused(admin):
    made = admin.post(
        "/api/imports/",
        {
            "kind": "mcp",
            "name": "vault",
            "command": ["true"],
            "oauth": oauth("https://auth.example"),
        },
        format="json",
    )
    assert made.status_code == 400
    assert "oauth" in json.dumps(made.json())
