"""The TypeScript SDK's client (npm @modelcontextprotocol/sdk, tests/mcp_ts/) on
the gateway: two users with different grants list their tools and call one."""

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FOLDER = ROOT / "tests" / "mcp_ts"
SCRIPT = FOLDER / "client.mjs"
INSTALLED = FOLDER / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"


def require_client() -> str:
    """The node binary, or a skip (a failure on CI) saying how to install the SDK."""
    node = shutil.which("node")
    if node and INSTALLED.exists():
        return node
    message = (
        "the TypeScript MCP SDK is not installed: run scripts/ensure-mcp-ts.sh "
        "(node and npm, then npm ci in tests/mcp_ts)"
    )
    if os.environ.get("TOOLCRIB_REQUIRE_SERVICES") or os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


async def run_client(url: str, token: str, tool: str, args: dict) -> dict:
    node = require_client()
    process = await asyncio.create_subprocess_exec(
        node,
        str(SCRIPT),
        f"{url}/mcp",
        token,
        tool,
        json.dumps(args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    sys.stderr.write(err.decode(errors="replace"))
    assert process.returncode == 0, err.decode(errors="replace")
    return json.loads(out.decode().strip().splitlines()[-1])


async def test_the_typescript_client_lists_and_calls_as_two_users(gateway, api):
    api("admin").grant(user="bob", toolset="inventory_query", effect="deny")

    alice = await run_client(
        gateway.url, api("alice").token, "loader.factorial", {"n": 5}
    )
    bob = await run_client(
        gateway.url, api("bob").token, "math.calculate", {"expression": "2 ** 10"}
    )

    inventory = {"inventory_query.count_items", "inventory_query.find_item"}
    assert inventory <= set(alice["tools"])
    assert not inventory & set(bob["tools"])
    assert alice["call"]["isError"] is False
    assert alice["call"]["structuredContent"]["result"] == 120
    assert bob["call"]["structuredContent"]["result"] == 1024
    audited = api("admin").calls(agent="ts-sdk-test")
    assert {(c["user"], c["tool_full_name"], c["status"]) for c in audited} == {
        ("alice", "loader.factorial", "ok"),
        ("bob", "math.calculate", "ok"),
    }
