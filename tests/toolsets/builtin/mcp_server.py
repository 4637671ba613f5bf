"""An MCP server for the import tests, built with the `mcp` package's own server.

    python mcp_server.py stdio TOOLS_FILE   # speaks MCP on stdin/stdout
    python mcp_server.py http TOOLS_FILE    # streamable HTTP on 127.0.0.1, port printed
    python mcp_server.py oauth TOOLS_FILE ISSUER TOKEN   # the same, behind OAuth: only
        # requests bearing TOKEN, which the authorization server ISSUER hands out

TOOLS_FILE names the tools to offer (add, echo, shout, refuse), read once at start, so a
test changes the tool list by editing the file and starting a new session.

TOOLS_FILE.descriptions.json, if present, is read at every tools/list: a JSON object
of tool name -> description, so a test changes what a tool says under a running
server (a poisoned description).
"""

import json
import socket
import sys
from pathlib import Path

try:  # mcp 2.x renamed FastMCP
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server
    from mcp.server.fastmcp.exceptions import ToolError


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def echo(text: str) -> str:
    """Echo the text back."""
    return text


def shout(text: str) -> str:
    """Echo the text back in capitals."""
    return text.upper()


def refuse(text: str) -> str:
    """Refuse the text: the server answers with a result marked isError."""
    raise ToolError(f"the server refuses {text!r}")


class DescribedServer(Server):
    """Describes its tools as TOOLS_FILE.descriptions.json says now."""

    descriptions_file: Path

    async def list_tools(self):
        listed = await super().list_tools()
        if not self.descriptions_file.exists():
            return listed
        described = json.loads(self.descriptions_file.read_text())
        for tool in listed:
            tool.description = described.get(tool.name, tool.description)
        return listed


def build(tools_file: str) -> Server:
    wanted = Path(tools_file).read_text().split()
    server = DescribedServer("toolcrib-test")
    server.descriptions_file = Path(f"{tools_file}.descriptions.json")
    for tool in (add, echo, shout, refuse):
        if tool.__name__ in wanted:
            server.add_tool(tool)
    return server


class OneToken:
    """Accepts one bearer token (what the test's authorization server issues)."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str):
        from mcp.server.auth.provider import AccessToken

        if token != self.token:
            return None
        return AccessToken(token=token, client_id="toolcrib", scopes=[])


def build_oauth(tools_file: str, issuer: str, token: str, url: str) -> Server:
    from mcp.server.auth.settings import AuthSettings

    wanted = Path(tools_file).read_text().split()
    server = DescribedServer(
        "toolcrib-test",
        token_verifier=OneToken(token),
        auth=AuthSettings(issuer_url=issuer, resource_server_url=url),
    )
    server.descriptions_file = Path(f"{tools_file}.descriptions.json")
    for tool in (add, echo, shout, refuse):
        if tool.__name__ in wanted:
            server.add_tool(tool)
    return server


def serve_http(
    server: Server | None, oauth: tuple[str, str, str] | None = None
) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    if oauth is not None:  # the resource's URL names the port
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        server = build_oauth(*oauth, url=url)
    # Listening before the port is told: a client that connects before uvicorn
    # serves waits in the backlog instead of being refused.
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    mode, tools_file = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        build(tools_file).run()
    elif mode == "oauth":
        serve_http(None, oauth=(tools_file, sys.argv[3], sys.argv[4]))
    else:
        serve_http(build(tools_file))
