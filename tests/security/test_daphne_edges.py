"""What a live Daphne answers to input an attacker shapes, before and at the app.

One server for the module (tests/toolsets/gateway/conftest.py: Daphne on a migrated
SQLite file with the demo users and catalog), spoken to over real HTTP, MCP and
websockets.
"""

import json

import httpx
import pytest
from mcp import types

from tests.toolsets.gateway import conftest as live

gateway_settings, gateway_env, gateway, api = (
    live.gateway_settings,
    live.gateway_env,
    live.gateway,
    live.api,
)

PROTOCOL = "2025-06-18"
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    },
}


@pytest.fixture(scope="module")
def mcp(gateway, api) -> httpx.Client:
    """An initialized MCP session of alice's, over plain HTTP."""
    client = httpx.Client(
        base_url=gateway.url,
        headers={
            "Authorization": f"Bearer {api('alice').token}",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
        },
        timeout=30,
    )
    opened = client.post("/mcp", content=json.dumps(INITIALIZE))
    client.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    client.headers["Mcp-Protocol-Version"] = PROTOCOL
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post("/mcp", content=json.dumps(initialized)).status_code == 202
    yield client
    client.close()


OUT_OF_RANGE = {
    "1e400": "1e400",
    "-1e400": "-1e400",
    "NaN": "NaN",
    "Infinity": "Infinity",
    "4,301 digits": "9" * 4301,
}


@pytest.mark.parametrize("number", OUT_OF_RANGE.values(), ids=OUT_OF_RANGE)
def test_an_mcp_call_with_a_number_out_of_range_is_a_parse_error(mcp, api, number):
    body = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
        '"math.calculate", "arguments": {"expression": ' + number + "}}}"
    )

    answer = mcp.post("/mcp", content=body)

    assert answer.status_code == 400, answer.text[:300]
    refusal = answer.json()
    assert refusal["error"]["code"] == types.PARSE_ERROR
    assert refusal["error"]["message"].startswith("Parse error: ")
    assert api("admin").calls(tool="math.calculate") == []


def test_the_mcp_session_goes_on_after_a_parse_error(mcp):
    mcp.post("/mcp", content='{"jsonrpc": "2.0", "id": 8, "method": "x", "a": 1e400}')

    listed = mcp.post(
        "/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    )

    assert listed.status_code == 200
    assert "math.calculate" in listed.text
