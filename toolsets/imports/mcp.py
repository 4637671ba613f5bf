"""MCP servers, imported through ADK's McpToolset."""

from typing import Any

from django.conf import settings
from google.adk.tools.mcp_tool import (
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from mcp import StdioServerParameters

from toolsets.imports.registrations import McpServer, prefix_of, remember, validated


def import_mcp_server(
    *,
    name: str,
    command: list[str] | None = None,
    url: str | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
    tool_filter: list[str] | None = None,
    prefix: str | None = None,
) -> McpToolset:
    """The ADK toolset of an MCP server; nothing connects until tools are listed.

    Args:
        command: A stdio server: the program and its arguments. It gets `env`
            over MCP's minimal default environment, never Toolcrib's.
        url: A streamable HTTP server's endpoint, e.g. http://host:8000/mcp.
        headers: Headers for every HTTP request (e.g. Authorization).
        tool_filter: Only these tools of the server, by their MCP names.
        prefix: Put before each tool's name (with `_`); default the import's
            name, "" for none.
    """
    server = validated(McpServer, locals())  # the arguments, as given
    return mcp_toolset(server)


def mcp_toolset(server: McpServer) -> McpToolset:
    """A new McpToolset for a registered server."""
    timeout = server.timeout or float(settings.TOOLCRIB_IMPORT_TIMEOUT)
    if server.command:
        params: Any = StdioConnectionParams(
            server_params=StdioServerParameters(
                command=server.command[0],
                args=list(server.command[1:]),
                env=dict(server.env) or None,
                cwd=server.cwd or None,
            ),
            timeout=timeout,
        )
    else:
        params = StreamableHTTPConnectionParams(
            url=server.url, headers=dict(server.headers) or None, timeout=timeout
        )
    toolset = McpToolset(
        connection_params=params,
        tool_filter=list(server.tool_filter) if server.tool_filter else None,
        tool_name_prefix=prefix_of(server),
    )
    return remember(toolset, server)
