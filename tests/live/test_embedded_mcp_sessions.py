"""The embedded server runs a socket's turns on its own loop: an imported MCP server's
session is kept across those turns, and closed cleanly when the server stops.

The MCP server is the `mcp` package's own (tests/toolsets/builtin/mcp_server.py),
over stdio, started through `sh`, which appends its pid to a file first: one line
per start. The Daphne is this module's own, so stopping it is part of the test.
"""

import json

import httpx
import pytest
import websockets

from tests.live.mcp_imports import register, started_by
from tests.live.server import LiveServer, daphne, stop
from tests.processes import has_exited

IMPORT = "socket_calc"
AGENT = "socket_calc_agent"
NOT_CLEAN = "did not close cleanly"
TIMEOUT = 30


@pytest.fixture
def web(live_env, tmp_path):
    with daphne(live_env, tmp_path / "daphne.log") as server:
        yield server


async def add_over_a_socket(web: LiveServer, headers: dict[str, str]) -> str:
    """A new session, "add a=2 b=3" sent on its socket; the tool's answer."""
    async with httpx.AsyncClient(base_url=web.url, headers=headers) as http:
        session = (await http.post("/api/sessions/", json={"agent": AGENT})).json()
    url = f"{web.ws_url}/ws/sessions/{session['id']}/"
    async with websockets.connect(url, additional_headers=headers) as socket:
        await socket.send(json.dumps({"type": "message", "text": "add a=2 b=3"}))
        answer = None
        while True:
            frame = json.loads(await socket.recv())
            event = frame.get("event") or {}
            for response in event.get("function_responses") or []:
                answer = response["response"]["content"][0]["text"]
            if event.get("kind") == "run_finished":
                assert event["run"]["status"] == "succeeded", event
                return answer


async def test_socket_turns_share_one_mcp_session_closed_when_the_server_stops(
    web, tmp_path
):
    starts, tools = tmp_path / "starts.txt", tmp_path / "tools.txt"
    starts.touch()
    tools.write_text("add echo")
    register(web, name=IMPORT, agent=AGENT, starts=starts, tools=tools)
    headers = {"Authorization": f"Token {web.token('alice', 'alice')}"}

    answers = [await add_over_a_socket(web, headers) for _ in range(2)]
    # Listing the tools at registration starts one server of its own; the two
    # turns on the sockets' loop share one more.
    servers = started_by(starts, web.process.pid)
    stop(web.process)

    assert answers == ["5", "5"]
    assert len(servers) == 2, servers
    assert all(has_exited(pid) for pid in servers)
    assert NOT_CLEAN not in (tmp_path / "daphne.log").read_text()
