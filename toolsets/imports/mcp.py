"""MCP servers, imported through ADK's McpToolset."""

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.mcp_tool import (
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from mcp import StdioServerParameters
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
)
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from toolsets.imports.registrations import McpServer, prefix_of, remember, validated

ToolsetT = TypeVar("ToolsetT", bound=McpToolset)


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


class KeptMcpToolset(McpToolset):
    """An McpToolset whose MCP sessions outlive the run that opened them.

    ADK's Runner.close() closes every toolset of its agent when a run ends, which
    would stop a stdio server after every turn. The process's cache of stored
    imports (toolsets.imports.stored) owns this one and closes it for good with
    aclose_sessions() when the import changes, is evicted, or the process stops.

    Its sessions live on the event loop that listed its tools (the process's turn
    loop): close_sessions() closes them there, and waits, so a stdio server is
    stopped before the process goes on (or exits).
    """

    _loop: asyncio.AbstractEventLoop | None = None

    async def get_tools(self, readonly_context: ReadonlyContext | None = None):
        self._loop = asyncio.get_running_loop()
        return await super().get_tools(readonly_context)

    async def close(self) -> None:
        """Nothing: a run ended, and the sessions stay open for the next one."""

    async def aclose_sessions(self) -> None:
        """Close the MCP sessions (a stdio server stops)."""
        await super().close()

    def close_on_own_loop(self, timeout: float) -> bool:
        """Close the sessions on the loop they live on, and wait (false: that loop
        no longer runs, or never listed the tools)."""
        loop = self._loop
        if loop is None or not loop.is_running():
            return False
        if _running_loop() is loop:  # on that loop's thread: it cannot wait here
            loop.create_task(self.aclose_sessions())
            return True
        closing = asyncio.run_coroutine_threadsafe(self.aclose_sessions(), loop)
        closing.result(timeout)
        return True


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _TokenMemory:
    """An OAuth client's tokens, in this toolset's memory only (never stored)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def _oauth_client(server: McpServer) -> Callable[..., Any]:
    """An HTTP client factory whose clients authenticate with the server's OAuth
    client credentials (the MCP SDK's flow: discovery, then client_credentials);
    the token is shared by the toolset's sessions."""
    oauth = server.oauth
    assert oauth is not None
    provider = ClientCredentialsOAuthProvider(
        server_url=server.url,
        storage=_TokenMemory(),
        client_id=oauth.client_id,
        client_secret=oauth.client_secret,
        scope=oauth.scope or None,
        issuer=oauth.issuer,
    )

    def factory(headers=None, timeout=None, auth=None):
        return create_mcp_http_client(headers=headers, timeout=timeout, auth=provider)

    return factory


def mcp_toolset(server: McpServer) -> McpToolset:
    """A new McpToolset for a registered server, closed by whoever closes it."""
    return _build(McpToolset, server)


def kept_mcp_toolset(server: McpServer) -> KeptMcpToolset:
    """A new KeptMcpToolset for a registered server: a run's end leaves it open."""
    return _build(KeptMcpToolset, server)


def _build(cls: type[ToolsetT], server: McpServer) -> ToolsetT:
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
            url=server.url,
            headers=dict(server.headers) or None,
            timeout=timeout,
            **({"httpx_client_factory": _oauth_client(server)} if server.oauth else {}),
        )
    toolset = cls(
        connection_params=params,
        tool_filter=list(server.tool_filter) if server.tool_filter else None,
        tool_name_prefix=prefix_of(server),
    )
    return remember(toolset, server)
