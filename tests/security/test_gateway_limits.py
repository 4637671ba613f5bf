"""One token cannot hold the gateway's sessions or flood it with notifications.

Before, a token opened as many MCP sessions as it liked, and about 1,000
notifications were all accepted, one answered after more than 30 s: each one
waited its turn on Django's one thread for database work (the token looked up,
and written). Now a token holds at most TOOLCRIB_GATEWAY_MAX_SESSIONS_PER_TOKEN
sessions and sends at most TOOLCRIB_GATEWAY_NOTIFICATIONS_PER_MINUTE
notifications (a burst, then a steady rate); past either, a 429 with a JSON-RPC
error. Against a live Daphne, with the `mcp` SDK's own client and raw posts.
"""

import asyncio
import math
import time

import httpx
import httpx2
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.toolsets.gateway import conftest as live
from tests.toolsets.gateway.conftest import mcp_client, tool_names

gateway_env, gateway, api = live.gateway_env, live.gateway, live.api

SESSIONS = 2
PER_MINUTE = 30
IDLE_SECONDS = 5
ACCEPT = {"Accept": "application/json, text/event-stream"}
VERSION = "2025-06-18"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
ROOTS_CHANGED = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}


@pytest.fixture(scope="module")
def gateway_settings() -> dict[str, str]:
    return {
        "TOOLCRIB_GATEWAY_MAX_SESSIONS_PER_TOKEN": str(SESSIONS),
        "TOOLCRIB_GATEWAY_NOTIFICATIONS_PER_MINUTE": str(PER_MINUTE),
        "TOOLCRIB_GATEWAY_SESSION_IDLE_SECONDS": str(IDLE_SECONDS),
    }


def personal_token(api, username: str) -> str:
    """A token of its own per test: each test's counts start at nothing."""
    made = api(username).client.post(
        "/api/gateway/tokens/", json={"name": "limits", "toolsets": ["math"]}
    )
    assert made.status_code == 201, made.text
    return made.json()["token"]


def http(url: str, token: str, **kwargs) -> httpx.AsyncClient:
    headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
    return httpx.AsyncClient(base_url=url, headers=headers, timeout=60, **kwargs)


async def refused_initialize(url: str, token: str) -> MCPError:
    """What the SDK's client raises when its `initialize` is refused."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
        async with streamable_http_client(f"{url}/mcp/", http_client=client) as (
            read,
            write,
        ):
            async with ClientSession(read, write) as session:
                try:
                    await session.initialize()
                except MCPError as refused:
                    return refused
    raise AssertionError("initialize was not refused")


async def open_session(client: httpx.AsyncClient) -> dict[str, str]:
    opened = await client.post("/mcp", json=INITIALIZE)
    assert opened.status_code == 200, opened.text
    return {"Mcp-Session-Id": opened.headers["mcp-session-id"]}


async def test_a_tokens_session_past_the_limit_is_a_jsonrpc_error(gateway, api):
    token = personal_token(api, "alice")
    async with mcp_client(gateway.url, token) as first:
        async with mcp_client(gateway.url, token):
            refused = await refused_initialize(gateway.url, token)
            async with mcp_client(gateway.url, personal_token(api, "alice")) as other:
                others = await tool_names(other)
            still = await tool_names(first)
        # Closed (the client's DELETE): its slot is free again.
        async with mcp_client(gateway.url, token) as again:
            reopened = await tool_names(again)

    assert refused.error.code == types.INVALID_REQUEST
    assert refused.error.message == (
        f"Too many MCP sessions open for this token: {SESSIONS} at most. Close one "
        "(quit a client, or DELETE its session), or wait 5 seconds for an idle one "
        "to expire."
    )
    assert "math.calculate" in others & still & reopened


async def test_an_idle_session_frees_its_slot(gateway, api):
    async with http(gateway.url, personal_token(api, "bob")) as client:
        first = await open_session(client)
        await open_session(client)
        refused = await client.post("/mcp", json=INITIALIZE)
        await asyncio.sleep(IDLE_SECONDS + 1.5)
        expired = await client.post("/mcp", json=ROOTS_CHANGED, headers=first)
        reopened = await client.post("/mcp", json=INITIALIZE)

    assert refused.status_code == 429
    assert refused.json()["id"] == 7
    assert refused.json()["error"]["code"] == types.INVALID_REQUEST
    assert "Too many MCP sessions" in refused.json()["error"]["message"]
    assert expired.status_code == 404
    assert reopened.status_code == 200


async def test_a_notification_flood_is_refused_past_the_limit(gateway, api):
    token = personal_token(api, "alice")
    wide = httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
    async with http(gateway.url, token, limits=wide) as client:
        session = await open_session(client)
        headers = {**session, "Mcp-Protocol-Version": VERSION}

        started = time.monotonic()
        answers = await asyncio.gather(
            *(
                client.post("/mcp", json=ROOTS_CHANGED, headers=headers)
                for _ in range(1000)
            )
        )
        took = time.monotonic() - started
        listed = await client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
            headers=headers,
        )
    async with http(gateway.url, personal_token(api, "bob")) as bobs:
        bob = await bobs.post(
            "/mcp", json=ROOTS_CHANGED, headers=await open_session(bobs)
        )

    statuses = [answer.status_code for answer in answers]
    accepted, refused = statuses.count(202), statuses.count(429)
    one = next(answer for answer in answers if answer.status_code == 429)
    # The burst, and what refilled while the flood went on (slow on a busy machine).
    assert PER_MINUTE <= accepted <= PER_MINUTE + 1 + took * PER_MINUTE / 60
    assert accepted + refused == 1000
    # The wait is until the bucket holds one again: at most 60 / PER_MINUTE
    # seconds, less when part of one had refilled before that refusal.
    wait = int(one.headers["retry-after"])
    assert 1 <= wait <= math.ceil(60 / PER_MINUTE)
    assert one.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": types.INVALID_REQUEST,
            "message": f"Too many notifications for this token: {PER_MINUTE} a "
            f"minute at most. Try again in {wait} second{'s' if wait > 1 else ''}.",
        },
    }
    assert listed.status_code == 200 and "math.calculate" in listed.text
    assert bob.status_code == 202


async def test_notifications_are_accepted_again_as_the_limit_refills(gateway, api):
    async with http(gateway.url, personal_token(api, "bob")) as client:
        headers = {**await open_session(client), "Mcp-Protocol-Version": VERSION}
        burst = [
            (await client.post("/mcp", json=ROOTS_CHANGED, headers=headers)).status_code
            for _ in range(PER_MINUTE + 1)
        ]
        await asyncio.sleep(60 / PER_MINUTE + 0.5)
        later = await client.post("/mcp", json=ROOTS_CHANGED, headers=headers)

    assert burst == [202] * PER_MINUTE + [429]
    assert later.status_code == 202
