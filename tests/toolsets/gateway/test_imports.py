"""Imported tool servers behind the gateway: an admin imports an OpenAPI spec and an
MCP server, and a user's MCP client lists and calls their tools, governed."""

import json
import sys
from pathlib import Path

from tests.toolsets.gateway.conftest import CLIENT_NAME, mcp_client, tool_names

MCP_SERVER = Path(__file__).resolve().parents[1] / "builtin" / "mcp_server.py"


def health_spec(url: str) -> str:
    """An OpenAPI spec of the live server's own /healthz: a real API to call."""
    return json.dumps(
        {
            "openapi": "3.0.3",
            "info": {"title": "Health", "version": "1"},
            "servers": [{"url": url}],
            "paths": {
                "/healthz": {
                    "get": {
                        "operationId": "get_health",
                        "summary": "Is Toolcrib up?",
                        "responses": {"200": {"description": "Its checks."}},
                    }
                }
            },
        }
    )


def register(api, **body) -> dict:
    body.setdefault("approve_tools", True)
    made = api("admin").client.post("/api/imports/", json=body, timeout=60)
    assert made.status_code == 201, made.text
    return made.json()


async def test_an_imported_openapi_tool_is_served_and_audited(gateway, api):
    spec = health_spec(gateway.url)
    imported = register(
        api, kind="openapi", name="health", spec=spec, allow_private_network=True
    )
    [tool] = [t["full_name"] for t in imported["tools"]]

    async with mcp_client(gateway.url, api("alice").token) as alice:
        assert tool in await tool_names(alice)
        result = await alice.call_tool(tool, {})

    assert not result.is_error, result.content
    assert result.structured_content["status"] == "ok"
    [audited] = api("admin").calls(tool=tool)
    assert (audited["user"], audited["agent"], audited["status"]) == (
        "alice",
        CLIENT_NAME,
        "ok",
    )


async def test_an_imported_mcp_server_is_served_under_grants(gateway, api, tmp_path):
    tools_file = tmp_path / "tools.txt"
    tools_file.write_text("add echo")
    command = [sys.executable, str(MCP_SERVER), "stdio", str(tools_file)]
    register(api, kind="mcp", name="relay", command=command)
    api("admin").grant(user="bob", toolset="relay", effect="deny")

    async with mcp_client(gateway.url, api("alice").token) as alice:
        relayed = {name for name in await tool_names(alice) if "relay" in name}
        result = await alice.call_tool("relay.relay_add", {"a": 2, "b": 3})
    async with mcp_client(gateway.url, api("bob").token) as bob:
        bobs = await tool_names(bob)

    assert relayed == {"relay.relay_add", "relay.relay_echo"}
    assert not result.is_error, result.content
    assert "5" in json.dumps(result.structured_content)
    assert not {name for name in bobs if "relay" in name}
