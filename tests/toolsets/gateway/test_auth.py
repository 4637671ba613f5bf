"""Who may open the gateway: API tokens and personal access tokens, live; a token's
tools are its user's within its toolsets; a revoked or expired one gets 401."""

import sqlite3

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.toolsets.gateway.conftest import mcp_client, tool_names

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
HEADERS = {"Accept": "application/json, text/event-stream"}


def make_token(api, username: str, toolsets: list[str]) -> dict:
    made = api(username).client.post(
        "/api/gateway/tokens/", json={"name": "test", "toolsets": toolsets}
    )
    assert made.status_code == 201, made.text
    return made.json()


def initialize(url: str, token: str) -> httpx.Response:
    headers = {**HEADERS, "Authorization": f"Bearer {token}"}
    return httpx.post(f"{url}/mcp", json=INITIALIZE, headers=headers)


async def test_a_personal_token_reaches_her_tools_within_its_toolsets(gateway, api):
    # alice may not use shell: the token names it, but grants still decide.
    made = make_token(api, "alice", ["math", "loader", "shell"])

    async with mcp_client(gateway.url, made["token"]) as client:
        names = await tool_names(client)
        with pytest.raises(MCPError) as refused:
            await client.call_tool("bank.balance", {})
        result = await client.call_tool("math.calculate", {"expression": "1 + 1"})

    assert names == {
        "math.calculate",
        "loader.factorial",
        "loader.fibonacci",
        "loader.load_math_tools",
    }
    assert "Unknown tool: bank.balance" in refused.value.error.message
    assert result.structured_content["result"] == 2


def test_a_revoked_token_is_refused_with_401(gateway, api):
    made = make_token(api, "bob", ["math"])
    assert initialize(gateway.url, made["token"]).status_code == 200

    revoked = api("bob").client.delete(f"/api/gateway/tokens/{made['id']}/")
    answer = initialize(gateway.url, made["token"])

    assert revoked.status_code == 204
    assert answer.status_code == 401
    assert "refused" in answer.json()["detail"]


def test_an_expired_token_is_refused_with_401(gateway, gateway_env, api):
    made = make_token(api, "bob", ["math"])
    database = gateway_env["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as db:  # its expiry, come and gone
        db.execute(
            "UPDATE toolsets_gatewaytoken SET expires_at = '2001-01-01 00:00:00' "
            "WHERE id = ?",
            (made["id"],),
        )

    assert initialize(gateway.url, made["token"]).status_code == 401


def test_an_api_token_opens_the_gateway_as_plain_json_rpc(gateway, api):
    answer = initialize(gateway.url, api("bob").token)

    assert answer.status_code == 200
    assert answer.headers["mcp-session-id"]
