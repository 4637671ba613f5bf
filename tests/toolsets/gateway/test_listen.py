"""A 2026-07-28 client (no session, no GET stream) hears of access changes on its
`subscriptions/listen` stream: the Python SDK's Client, pinned to that revision,
on the live gateway."""

import asyncio

import httpx2
from mcp import types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

from tests.toolsets.gateway.conftest import CLIENT_NAME

MODERN = "2026-07-28"


def modern_client(url: str, http: httpx2.AsyncClient) -> Client:
    return Client(
        streamable_http_client(f"{url}/mcp", http_client=http),
        mode=MODERN,
        client_info=types.Implementation(name=CLIENT_NAME, version="1.0"),
    )


async def names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def test_a_deny_reaches_a_2026_client_on_its_listen_stream(gateway, api):
    headers = {"Authorization": f"Bearer {api('alice').token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with modern_client(gateway.url, http) as alice:
            version = alice.protocol_version
            before = await names(alice)
            async with alice.listen(tools_list_changed=True) as changes:
                await asyncio.to_thread(
                    api("admin").grant, user="alice", toolset="headlines", effect="deny"
                )
                event = await asyncio.wait_for(anext(aiter(changes)), timeout=1.0)
            after = await names(alice)

    assert version == MODERN
    assert changes.honored.tools_list_changed is True
    assert isinstance(event, ToolsListChanged)
    assert "headlines.get_headlines" in before
    assert "headlines.get_headlines" not in after


async def test_a_2026_client_hears_nothing_of_another_users_change(gateway, api):
    headers = {"Authorization": f"Bearer {api('bob').token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with modern_client(gateway.url, http) as bob:
            async with bob.listen(tools_list_changed=True) as changes:
                await asyncio.to_thread(
                    api("admin").grant, user="alice", toolset="math", effect="deny"
                )
                heard = asyncio.ensure_future(anext(aiter(changes)))
                done, _ = await asyncio.wait({heard}, timeout=1.0)
                heard.cancel()

    assert done == set()
