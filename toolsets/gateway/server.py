"""The MCP server at `/mcp`: Streamable HTTP, the official `mcp` SDK's low-level
Server and its StreamableHTTPSessionManager, in front of Django's ASGI app.

- Sessions are stateful (`Mcp-Session-Id`), so a session can be told
  `notifications/tools/list_changed` on its GET stream (notifications.py).
- The session manager's task group must run for as long as the process: Daphne
  sends no reliable ASGI lifespan events, so the manager starts on the first MCP
  request, in a task of the server's loop, and lives until the process ends.
- Every request is authenticated here, before the SDK sees it (auth.py); an MCP
  session belongs to the credential that opened it (the SDK answers 404 to any
  other), and a revoked or expired token is refused (401) on its next request.
- With OAuth on (oauth.py), the gateway's Protected Resource Metadata is served
  here too, at `/.well-known/oauth-protected-resource[/mcp]`, and a 401 names it,
  with the scopes every token needs (TOOLCRIB_GATEWAY_OAUTH_SCOPES), so that a
  client asks for those (all its user's tools), not for every toolset's scope the
  metadata lists.
- A POST's JSON is read by the rule of every client's JSON first
  (agents.inputs.load_json): a number JSON cannot carry back (`1e400`, NaN, an
  integer past Python's 4,300 digits) is a JSON-RPC parse error, as the SDK answers
  malformed JSON, never a value that reaches a tool and the audit.
- Only bearer tokens open the gateway, never a cookie, so a page in a browser
  cannot reach it with the browser's credentials: the SDK's DNS-rebinding checks
  (Host and Origin) stay off, as Django's ALLOWED_HOSTS is not consulted here.
- A token's open sessions and its notifications are limited (limits.py): a
  POST's body is read here first, so a notification over the limit is refused
  before the token costs a query.
"""

import asyncio
import json
import time
from collections import deque
from typing import Any

from channels.db import database_sync_to_async
from django.db import close_old_connections
from mcp import types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import MCPError
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agents.client_input import BadJson, load_json
from project.errors import DomainError
from toolsets.gateway import oauth
from toolsets.gateway.auth import Caller, TokenRefused, aauthenticate, bearer_token
from toolsets.gateway.calls import UnknownTool, acall_tool, client_name
from toolsets.gateway.catalog import alist_tools
from toolsets.gateway.limits import (
    GatewaySessionManager,
    NotificationLimit,
    TooManyNotifications,
    TooManySessions,
    is_notification,
    jsonrpc_refusal,
    session_idle_timeout,
)
from toolsets.gateway.notifications import alisten_tools, awatch_tools

PATHS = frozenset({"/mcp", "/mcp/"})
CALLER_KEY = "toolcrib.caller"
SERVER_NAME = "toolcrib"
INSTRUCTIONS = (
    "Toolcrib's governed tools: the tools your grants allow now, named "
    "<toolset>.<tool>. Calls are audited; some wait for a person's approval."
)


class GatewayServer(Server):
    """The low-level Server, announcing `tools.listChanged`."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def build_server() -> GatewayServer:
    """The MCP server: tools/list and tools/call, for the request's caller."""
    return GatewayServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_subscriptions_listen=_listen,
    )


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    caller = _caller(ctx)
    await _watch(ctx, caller)
    tools = await alist_tools(caller=caller)
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool.name,
                description=tool.description or None,
                input_schema=tool.input_schema,
            )
            for tool in tools
        ]
    )


async def _call_tool(
    ctx: Any, params: types.CallToolRequestParams
) -> types.CallToolResult:
    caller = _caller(ctx)
    await _watch(ctx, caller)
    client_params = ctx.session.client_params
    client = client_name(client_params.client_info.name if client_params else None)
    try:
        outcome = await acall_tool(
            caller=caller,
            name=params.name,
            args=params.arguments,
            client=client,
            # A call held for approval: notifications/progress while it waits
            # (the SDK sends none unless the client gave a progressToken).
            progress=ctx.session.report_progress,
        )
    except UnknownTool as exc:
        raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
    # A refusal's words, or a person's answer in the tool's place; else the JSON.
    text = outcome.message or None
    if text is None:
        text = json.dumps(outcome.response, default=str, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=outcome.response,
        is_error=outcome.is_error,
    )


async def _listen(
    ctx: Any, params: types.SubscriptionsListenRequestParams
) -> types.SubscriptionsListenResult:
    # A 2026-07-28 client's way to hear of tool changes (notifications.py).
    return await alisten_tools(ctx=ctx, params=params, user_id=_caller(ctx).user.pk)


def _caller(ctx: Any) -> Caller:
    return ctx.request.scope[CALLER_KEY]


async def _watch(ctx: Any, caller: Caller) -> None:
    # The SDK hands low-level handlers the session's Connection only through
    # the request's ServerSession (mcp 2.3); its `state` and `exit_stack` tie
    # the watch to the session's life.
    connection = getattr(ctx.session, "_connection", None)
    if connection is not None and connection.session_id is not None:
        await awatch_tools(connection=connection, user_id=caller.user.pk)


class GatewayApp:
    """ASGI: `/mcp` to the MCP server, every other request to `app`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._manager: GatewaySessionManager | None = None
        self._starting: asyncio.Lock | None = None
        self._runner: asyncio.Task | None = None
        self._notifications = NotificationLimit()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] in oauth.METADATA_PATHS
            and oauth.is_enabled()
        ):
            await (await _aresource_metadata(scope))(scope, receive, send)
            return
        if scope["type"] != "http" or scope["path"] not in PATHS:
            await self.app(scope, receive, send)
            return
        token = bearer_token(scope.get("headers", []))
        message = None
        if token is not None and scope["method"] == "POST":
            body, receive = await _peek_body(receive)
            message = _parsed(body)
            if is_notification(message):
                try:
                    self._notifications.take(token=token, now=time.monotonic())
                except TooManyNotifications as exc:
                    await jsonrpc_refusal(exc, message)(scope, receive, send)
                    return
        await self._serve(scope, receive, send, token=token, message=message)

    async def _serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        *,
        token: str | None,
        message: Any,
    ) -> None:
        """Authenticate the request and hand it to the session manager."""
        await database_sync_to_async(close_old_connections)()
        try:
            caller = await aauthenticate(token=token) if token else None
        except DomainError as exc:  # TokenRefused, or the provider unavailable
            await _unauthorized(exc)(scope, receive, send)
            return
        if caller is None:
            await _unauthorized(None)(scope, receive, send)
            return
        principal = AccessToken(
            token="", client_id=caller.credential, scopes=[], subject=caller.credential
        )
        scope = {**scope, "user": AuthenticatedUser(principal), CALLER_KEY: caller}
        if scope["method"] == "POST":
            body = await _read_body(receive)
            if body is None:  # the client left before its body had come
                return
            try:
                load_json(body)
            except BadJson as exc:
                await _parse_error(exc)(scope, receive, send)
                return
            receive = _replay(body, receive)
        manager = await self._amanager()
        try:
            await manager.handle_request(scope, receive, send)
        except TooManySessions as exc:  # refused before the SDK answered anything
            await jsonrpc_refusal(exc, message)(scope, receive, send)

    async def _amanager(self) -> GatewaySessionManager:
        """The session manager, running (started by the first MCP request)."""
        if self._manager is not None:
            return self._manager
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._manager is None:
                manager = GatewaySessionManager(
                    app=build_server(), session_idle_timeout=session_idle_timeout()
                )
                started = asyncio.Event()
                self._runner = asyncio.get_running_loop().create_task(
                    _run_forever(manager, started)
                )
                await started.wait()
                self._manager = manager
        return self._manager


async def _peek_body(receive: Receive) -> tuple[bytes | None, Receive]:
    """A request's body (None past the size the SDK accepts: it answers 413), and
    a receive that hands the SDK the same messages again."""
    taken: list[Message] = []
    size = 0
    body = None
    while True:
        message = await receive()
        taken.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > DEFAULT_MAX_REQUEST_BODY_SIZE:
            break
        if not message.get("more_body", False):
            body = b"".join(m.get("body", b"") for m in taken)
            break
    pending = deque(taken)

    async def replay() -> Message:
        return pending.popleft() if pending else await receive()

    return body, replay


def _parsed(body: bytes | None) -> Any:
    """The JSON-RPC message, or None; the SDK answers whatever does not parse."""
    if not body:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


async def _run_forever(manager: GatewaySessionManager, started: asyncio.Event) -> None:
    async with manager.run():
        started.set()
        await asyncio.Event().wait()


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body (Daphne has it in memory already), or None if the
    client disconnected first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body read already, then what the client sends."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> dict[str, Any]:
        return pending.pop() if pending else await receive()

    return replayed


def _parse_error(exc: BadJson) -> JSONResponse:
    """The JSON-RPC parse error the SDK answers for malformed JSON, with why."""
    error = {"code": types.PARSE_ERROR, "message": f"Parse error: {exc}"}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, 400)


def _unauthorized(refusal: DomainError | None) -> JSONResponse:
    """401 (403 for a missing scope, 503 for a provider that did not answer), with
    the challenge RFC 6750 and RFC 9728 describe."""
    if refusal is None:
        detail = (
            "The bearer token is missing: send Authorization: Bearer <token>, an "
            "API token or a personal access token that is not revoked or expired."
        )
        status, params = 401, ['realm="toolcrib"']
    else:
        detail, status = str(refusal), refusal.status_code
        params = ['realm="toolcrib"']
        if isinstance(refusal, TokenRefused):
            described = detail.replace('"', "'").replace("\\", "/")
            params += [f'error="{refusal.code}"', f'error_description="{described}"']
    if oauth.is_enabled():
        params.append(f'resource_metadata="{oauth.resource_metadata_url()}"')
        # The scopes to ask for (MCP's scope selection: the challenge's first).
        if oauth.required_scopes():
            params.append(f'scope="{" ".join(oauth.required_scopes())}"')
    return JSONResponse(
        {"detail": detail},
        status_code=status,
        headers={"WWW-Authenticate": "Bearer " + ", ".join(params)},
    )


async def _aresource_metadata(scope: Scope) -> Response:
    """The gateway's Protected Resource Metadata, readable from any origin."""
    cors = {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "GET, OPTIONS",
        "Access-Control-Allow-Headers": "*",
    }
    if scope["method"] == "OPTIONS":
        return Response(status_code=204, headers=cors)
    metadata = await database_sync_to_async(oauth.protected_resource_metadata)()
    return JSONResponse(
        metadata,
        headers={**cors, "Cache-Control": "public, max-age=3600"},
    )
