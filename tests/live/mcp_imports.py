"""An MCP import whose stdio server logs each start, for tests on live servers.

The server is the `mcp` package's own (tests/toolsets/builtin/mcp_server.py),
started through `sh`, which appends "pid parent-pid" to a file first: one line per
start, so the file counts the sessions each process opened.
"""

import shlex
import sys
from pathlib import Path

import httpx

from tests.live.server import LiveServer

MCP_SERVER = Path(__file__).parents[1] / "toolsets" / "builtin" / "mcp_server.py"


def register(
    web: LiveServer, *, name: str, agent: str, starts: Path, tools: Path
) -> None:
    """Import the server as `name`, and make `agent`, which adds with its tool."""
    server = shlex.join([sys.executable, str(MCP_SERVER), "stdio", str(tools)])
    script = f"echo $$ $PPID >> {shlex.quote(str(starts))}; exec {server}"
    admin = {"Authorization": f"Token {web.token('admin', 'admin')}"}
    with httpx.Client(base_url=web.url, headers=admin, timeout=30) as http:
        imported = http.post(
            "/api/imports/",
            json={
                "kind": "mcp",
                "name": name,
                "command": ["/bin/sh", "-c", script],
                "approve_tools": True,
            },
        )
        assert imported.status_code == 201, imported.text
        made = http.post(
            "/api/agents/",
            json={
                "name": agent,
                "model": "offline/demo",
                "instruction": f"To add two numbers, use {name}_add.",
                "toolsets": [name],
            },
        )
        assert made.status_code == 201, made.text


def started_by(starts: Path, parent: int | None) -> list[int]:
    """The servers started (one "pid parent-pid" line each) by `parent` (None: all)."""
    lines = [line.split() for line in starts.read_text().splitlines() if line]
    return [int(pid) for pid, ppid in lines if parent is None or int(ppid) == parent]
