"""The gateway at /mcp with the Python `mcp` SDK's own client, against a live Daphne:
two users with different grants list and call their tools, governed and audited."""

import asyncio
import json

import httpx
import pytest
import websockets
from mcp import types
from mcp.shared.exceptions import MCPError

from agents.events.wire import EventFrame
from tests.toolsets.gateway.conftest import CLIENT_NAME, mcp_client, tool_names


async def test_each_user_sees_exactly_the_tools_her_grants_allow(gateway, api):
    admin = api("admin")
    admin.grant(user="alice", toolset="webpage", effect="allow")
    admin.grant(user="bob", toolset="records", effect="deny")

    async with mcp_client(gateway.url, api("alice").token) as alice:
        alices = await tool_names(alice)
    async with mcp_client(gateway.url, api("bob").token) as bob:
        bobs = await tool_names(bob)

    webpage = {name for name in alices if name.startswith("webpage.")}
    records = {name for name in alices if name.startswith("records.")}
    assert webpage and records
    assert alices - bobs == webpage | records
    assert bobs <= alices
    assert not any(name.startswith(("shell.", "sql.")) for name in alices)


async def test_a_listed_tool_carries_its_schema(gateway, api):
    async with mcp_client(gateway.url, api("alice").token) as alice:
        listed = {tool.name: tool for tool in (await alice.list_tools()).tools}

    schema = listed["math.calculate"].input_schema
    assert schema["type"] == "object"
    assert schema["properties"]["expression"]["type"] == "string"
    assert schema["required"] == ["expression"]


async def test_a_call_answers_and_is_audited_with_the_clients_name(gateway, api):
    async with mcp_client(gateway.url, api("alice").token) as alice:
        result = await alice.call_tool("math.calculate", {"expression": "6 * 7"})

    assert not result.is_error
    assert result.structured_content["result"] == 42
    [audited] = api("admin").calls(tool="math.calculate", agent=CLIENT_NAME)
    assert (audited["user"], audited["status"], audited["args"]) == (
        "alice",
        "ok",
        {"expression": "6 * 7"},
    )
    # Her own audit shows it too.
    assert [c["id"] for c in api("alice").calls(agent=CLIENT_NAME)] == [audited["id"]]


async def test_an_unknown_tool_is_an_mcp_error_and_audited(gateway, api):
    async with mcp_client(gateway.url, api("bob").token) as bob:
        with pytest.raises(MCPError) as refused:
            await bob.call_tool("nothing.here", {})

    assert refused.value.error.code == types.INVALID_PARAMS
    assert "Unknown tool: nothing.here" in refused.value.error.message
    [audited] = api("admin").calls(tool="nothing.here")
    assert (audited["user"], audited["status"], audited["agent"]) == (
        "bob",
        "denied",
        CLIENT_NAME,
    )


async def test_an_unknown_tool_with_a_nul_is_refused_and_audited_storably(gateway, api):
    async with mcp_client(gateway.url, api("bob").token) as bob:
        with pytest.raises(MCPError) as refused:
            await bob.call_tool("no\u0000pe", {"x": "a\u0000b"})

    assert "Unknown tool: no\ufffdpe" in refused.value.error.message
    [audited] = api("admin").calls(tool="no\ufffdpe")
    assert (audited["status"], audited["args"]) == ("denied", {})


async def test_a_tool_outside_her_grants_cannot_be_called(gateway, api):
    api("admin").grant(user="bob", tool="loader.factorial", effect="deny")

    async with mcp_client(gateway.url, api("bob").token) as bob:
        with pytest.raises(MCPError) as refused:
            await bob.call_tool("loader.factorial", {"n": 5})

    assert "Unknown tool: loader.factorial" in refused.value.error.message
    statuses = [c["status"] for c in api("admin").calls(tool="loader.factorial")]
    assert statuses == ["denied"]


async def test_arguments_off_the_schema_are_refused_without_running(gateway, api):
    async with mcp_client(gateway.url, api("alice").token) as alice:
        result = await alice.call_tool("loader.fibonacci", {"count": "many"})

    assert result.is_error
    [text] = result.content
    assert "Invalid arguments for fibonacci, so it did not run" in text.text
    [audited] = api("admin").calls(tool="loader.fibonacci")
    assert (audited["status"], audited["attempts"]) == ("invalid_args", 0)


async def test_a_call_over_the_rate_limit_is_refused_and_audited(gateway, api):
    admin = api("admin")
    changed = admin.client.patch(
        "/api/tools/bank.balance/", json={"policy": {"rate_limit": [1, 3600]}}
    )
    assert changed.status_code == 200, changed.text

    async with mcp_client(gateway.url, api("alice").token) as alice:
        first = await alice.call_tool("bank.balance", {})
        second = await alice.call_tool("bank.balance", {})

    assert not first.is_error
    assert second.is_error
    assert "Rate limited" in second.content[0].text
    audited = admin.calls(tool="bank.balance")
    assert [(c["status"], c["attempts"]) for c in audited] == [
        ("rate_limited", 0),
        ("ok", 1),
    ]


async def test_a_deny_leaves_the_tool_list_within_a_second(gateway, api):
    changed = asyncio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with mcp_client(
        gateway.url, api("alice").token, on_message=on_message
    ) as alice:
        assert "headlines.get_headlines" in await tool_names(alice)
        await asyncio.sleep(0.3)  # the client's GET stream opens

        await asyncio.to_thread(
            api("admin").grant, user="alice", toolset="headlines", effect="deny"
        )
        await asyncio.wait_for(changed.wait(), timeout=1.0)

        assert "headlines.get_headlines" not in await tool_names(alice)


async def test_a_request_without_a_valid_token_is_refused_with_401(gateway):
    async with httpx.AsyncClient() as http:
        missing = await http.post(f"{gateway.url}/mcp/", json={})
        forged = await http.post(
            f"{gateway.url}/mcp/",
            json={},
            headers={"Authorization": "Bearer 0123abcd"},
        )

    assert missing.status_code == forged.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert "missing" in missing.json()["detail"]
    assert "refused" in forged.json()["detail"]


async def test_staff_see_a_gateway_call_on_the_firehose(gateway, api):
    headers = {"Authorization": f"Token {api('admin').token}"}
    url = f"{gateway.ws_url}/ws/firehose/?agent={CLIENT_NAME}"
    async with websockets.connect(url, additional_headers=headers) as firehose:
        async with mcp_client(gateway.url, api("alice").token) as alice:
            await alice.call_tool("math.calculate", {"expression": "40 + 2"})
        frame = json.loads(await asyncio.wait_for(firehose.recv(), timeout=5))

    event = EventFrame.model_validate(frame).event
    assert (event.kind, event.author) == ("function_response", CLIENT_NAME)
    [call] = event.function_calls
    [response] = event.function_responses
    assert (call.name, call.args) == ("math.calculate", {"expression": "40 + 2"})
    assert (response.status, response.response["result"]) == ("ok", 42)


async def test_arguments_breaking_the_input_rule_are_refused_and_audited(gateway, api):
    async with mcp_client(gateway.url, api("bob").token) as bob:
        result = await bob.call_tool("briefing.shorten", {"text": "a\u0000b"})

    assert result.is_error
    assert "Invalid arguments" in result.content[0].text
    [audited] = api("admin").calls(tool="briefing.shorten")
    assert (audited["user"], audited["status"], audited["args"]) == (
        "bob",
        "invalid_args",
        {},
    )
