"""The gateway takes only access tokens its provider issued for it: a token the same
provider issued for another resource (RFC 8707: a server that got one cannot replay
it here), or one naming the gateway but from another issuer, is refused (401); an
MCP session opened with one user's access token is not another's. A token limited
by its `toolset:<name>` scopes reaches nothing outside them: not by calling a tool
it was not offered, not with a scope that names no toolset, not through a session
a wider token of the same client opened."""

import json

import pytest
from mcp.shared.exceptions import MCPError

from tests.toolsets.gateway import test_oauth as live
from tests.toolsets.gateway.conftest import Api, mcp_client, tool_names

# The live gateway with OAuth on, and its provider (tests/toolsets/gateway/test_oauth.py).
oauth_gateway = live.oauth_gateway

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def test_a_token_issued_for_another_resource_is_refused(oauth_gateway):
    issued = live.issue_token(
        oauth_gateway, "alice", resource=live.ELSEWHERE, scope=live.SCOPE
    )

    answer = live.initialize(oauth_gateway, issued["access_token"])

    assert answer.status_code == 401
    assert "for another resource" in answer.json()["detail"]


def test_a_token_from_another_issuer_is_refused(oauth_gateway):
    forged = live.forge(oauth_gateway, iss="https://issuer.example")

    answer = live.initialize(oauth_gateway, forged)

    assert answer.status_code == 401
    assert "not issued by" in answer.json()["detail"]


def test_her_session_is_not_his(oauth_gateway):
    resource = oauth_gateway.resource
    alice = live.issue_token(oauth_gateway, "alice", resource=resource, scope="mcp")
    bob = live.issue_token(oauth_gateway, "bob", resource=resource, scope="mcp")
    opened = live.initialize(oauth_gateway, alice["access_token"])

    answer = live.post_in_session(
        oauth_gateway, LIST, bob["access_token"], opened.headers["mcp-session-id"]
    )

    assert answer.status_code == 404


MATH = {"math.calculate"}


def rpc_result(answer) -> dict:
    """The JSON-RPC message of a POST's answer, JSON or one SSE event."""
    assert answer.status_code == 200, answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [
            line[5:] for line in answer.text.splitlines() if line.startswith("data:")
        ]
        return json.loads(data[-1])
    return answer.json()


async def test_a_client_cannot_call_a_tool_outside_its_scopes(oauth_gateway):
    url = oauth_gateway.server.url
    scoped = live.issue_token(
        oauth_gateway,
        "alice",
        resource=oauth_gateway.resource,
        scope=f"{live.SCOPE} toolset:math",
    )

    async with mcp_client(url, scoped["access_token"], name="out-of-scope") as client:
        names = await tool_names(client)
        with pytest.raises(MCPError) as refused:
            await client.call_tool("bank.balance", {})

    admin = Api(url, live.api_token(oauth_gateway, "admin"))
    calls = admin.calls(agent="out-of-scope")
    assert names == MATH
    assert "Unknown tool: bank.balance" in refused.value.error.message
    # Audited as refused, and the tool never ran.
    assert [(c["tool_name"], c["status"]) for c in calls] == [
        ("bank.balance", "denied")
    ]


@pytest.mark.parametrize("scope", ["toolset:", "toolset:*", "toolset:nope"])
async def test_a_scope_naming_no_toolset_reaches_no_tool(oauth_gateway, scope):
    token = live.forge(oauth_gateway, scope=f"{live.SCOPE} {scope}")

    async with mcp_client(oauth_gateway.server.url, token) as client:
        names = await tool_names(client)
        with pytest.raises(MCPError) as refused:
            await client.call_tool("math.calculate", {"expression": "1 + 1"})

    assert names == set()
    assert "Unknown tool: math.calculate" in refused.value.error.message


async def test_a_toolset_scope_in_scp_limits_the_token_too(oauth_gateway):
    token = live.forge(oauth_gateway, scope=live.SCOPE, scp=["toolset:math"])

    async with mcp_client(oauth_gateway.server.url, token) as client:
        assert await tool_names(client) == MATH


def test_a_session_a_wider_token_opened_gives_a_scoped_token_no_more(
    oauth_gateway,
):
    # Both tokens are the same client's for the same user: one MCP session.
    wide = live.forge(oauth_gateway, scope=live.SCOPE)
    narrow = live.forge(oauth_gateway, scope=f"{live.SCOPE} toolset:math")
    opened = live.initialize(oauth_gateway, wide)
    session = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    live.post_in_session(oauth_gateway, initialized, wide, session)

    by_wide = rpc_result(live.post_in_session(oauth_gateway, LIST, wide, session))
    by_narrow = rpc_result(live.post_in_session(oauth_gateway, LIST, narrow, session))

    assert "bank.balance" in {tool["name"] for tool in by_wide["result"]["tools"]}
    assert {tool["name"] for tool in by_narrow["result"]["tools"]} == MATH
