"""An MCP session of the gateway belongs to the token that opened it: another
user's token cannot use it (404, as if it did not exist), and no token gets 401."""

import httpx

from tests.toolsets.gateway import conftest as live

# The gateway's live server and API clients (tests/toolsets/gateway/conftest.py).
gateway_settings, gateway_env, gateway, api = (
    live.gateway_settings,
    live.gateway_env,
    live.gateway,
    live.api,
)

ACCEPT = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def post(url: str, body: dict, token: str | None, session: str | None = None):
    headers = dict(ACCEPT)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if session:
        headers["Mcp-Session-Id"] = session
        headers["Mcp-Protocol-Version"] = "2025-06-18"
    return httpx.post(f"{url}/mcp", json=body, headers=headers)


def test_another_users_token_cannot_use_her_mcp_session(gateway, api):
    alices = api("alice").token
    opened = post(gateway.url, INITIALIZE, alices)
    session = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(gateway.url, initialized, alices, session).status_code == 202

    by_bob = post(gateway.url, LIST, api("bob").token, session)
    anonymous = post(gateway.url, LIST, None, session)
    by_alice = post(gateway.url, LIST, alices, session)

    assert by_bob.status_code == 404
    assert "math.calculate" not in by_bob.text
    assert anonymous.status_code == 401
    assert by_alice.status_code == 200
    assert "math.calculate" in by_alice.text
