"""The A2A edge at `/a2a/<agent>/`, in front of Django's ASGI app (docs/a2a.md).

- `GET /a2a/<agent>/.well-known/agent-card.json` (or A2A 0.2's `agent.json`): the
  agent card, public, for an agent staff switched A2A on for (`AgentSpec.a2a`); any
  other name is 404.
- `POST /a2a/<agent>/`: JSON-RPC 2.0 (message/send, message/stream as
  server-sent events, tasks/get, tasks/cancel, tasks/resubscribe), answered by
  a2a-sdk's JSON-RPC application with handler.TaskHandler for the caller.
- The bearer token is checked here, before the SDK reads the request: none, or
  one refused, is 401 with a JSON-RPC error and a `WWW-Authenticate` challenge;
  an agent not served over A2A is 404 with a JSON-RPC error, the same for an
  agent that does not exist.
- The body is read by the rule of every client's JSON first
  (agents.inputs.load_json, check_json): malformed JSON, JSON nested past
  TOOLCRIB_MAX_JSON_DEPTH, NaN or a number past a float's range is -32700, never
  a value the SDK could not write back (a 500); a NUL or a lone surrogate in any
  text is -32602 (-32600 outside `params`), before it can reach a query; a body
  past DATA_UPLOAD_MAX_MEMORY_SIZE is 413 with -32600, refused as soon as that
  much has come (a chunked body is not read to its end).
- The envelope is JSON-RPC 2.0's, strictly: an object with `"jsonrpc": "2.0"`
  (a2a-sdk would take it missing), and an `id` that is a string, an integer or
  null, else -32600.
- The card's `url` is where the request came: the Host it was sent to.
"""

from typing import Any

from a2a.server.apps import A2AStarletteApplication
from a2a.types import AgentCard
from a2a.utils.constants import (
    AGENT_CARD_WELL_KNOWN_PATH,
    PREV_AGENT_CARD_WELL_KNOWN_PATH,
)
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import close_old_connections
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from agents.a2a.auth import PrincipalRefused, aauthenticate, bearer_token
from agents.a2a.cards import agent_card
from agents.a2a.handler import TaskHandler
from agents.inputs import BadJson, BadText, check_json, load_json
from agents.models import AgentSpec
from agents.sessions import usable_agents

PREFIX = "/a2a/"
# .well-known/agent-card.json, and A2A 0.2's name for it.
CARDS = (
    AGENT_CARD_WELL_KNOWN_PATH.lstrip("/"),
    PREV_AGENT_CARD_WELL_KNOWN_PATH.lstrip("/"),
)
TOO_LARGE = "The request is larger than DATA_UPLOAD_MAX_MEMORY_SIZE bytes."
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
NOT_JSON_RPC = (
    'Not a JSON-RPC 2.0 request: send an object with "jsonrpc": "2.0", a "method", '
    'its "params" and an "id" (a string or an integer).'
)
NOT_SERVED = "No agent of that name is served over A2A."


class A2AApp:
    """ASGI: `/a2a/...` to the A2A edge, every other request to `app`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(PREFIX):
            await self.app(scope, receive, send)
            return
        name, _, rest = scope["path"][len(PREFIX) :].partition("/")
        await database_sync_to_async(close_old_connections)()
        if rest in CARDS and scope["method"] == "GET":
            response = await _card_response(scope, name)
        elif rest == "" and scope["method"] == "POST":
            response = await self._rpc(scope, receive, name)
        else:
            response = JSONResponse({"detail": "Not found."}, status_code=404)
        if response is not None:
            await response(scope, receive, send)

    async def _rpc(self, scope: Scope, receive: Receive, name: str) -> Response | None:
        """Authenticate, read the body, then hand the request to the SDK's app."""
        try:
            user = await aauthenticate(token=bearer_token(scope.get("headers", [])))
        except PrincipalRefused as exc:
            return _error(None, INVALID_REQUEST, str(exc), 401, challenge=True)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # None: no limit (Django's rule)
        try:
            body = await _read_body(receive, limit=limit)
        except _TooLarge:
            return _error(None, INVALID_REQUEST, TOO_LARGE, 413)
        if body is None:  # the client left before its body had come
            return None
        try:
            message = load_json(body)
        except BadJson as exc:
            return _error(None, PARSE_ERROR, f"Parse error: {exc}", 200)
        request_id = _request_id(message)
        try:
            check_json(message)
        except BadJson as exc:
            return _error(request_id, PARSE_ERROR, f"Parse error: {exc}", 200)
        except BadText as exc:
            return _error(request_id, _text_error_code(exc), str(exc), 200)
        if not _is_envelope(message):
            return _error(request_id, INVALID_REQUEST, NOT_JSON_RPC, 200)
        spec = await database_sync_to_async(_served)(name, user=user)
        if spec is None:
            return _error(request_id, INVALID_REQUEST, NOT_SERVED, 404)
        card = await database_sync_to_async(agent_card)(
            spec=spec, url=_url(scope, name)
        )
        app = A2AStarletteApplication(
            agent_card=card,
            http_handler=TaskHandler(spec=spec, user=user),
            max_content_length=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        )
        return _Replayed(app, body)


class _Replayed:
    """The SDK's JSON-RPC endpoint, given the body read already."""

    def __init__(self, app: A2AStarletteApplication, body: bytes) -> None:
        self.app = app
        self.body = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sent = False

        async def replayed() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": self.body, "more_body": False}
            return await receive()

        response = await self.app._handle_requests(Request(scope, replayed))
        await response(scope, replayed, send)


async def _card_response(scope: Scope, name: str) -> Response:
    spec = await database_sync_to_async(_served)(name)
    if spec is None:
        return JSONResponse({"detail": NOT_SERVED}, status_code=404)
    card: AgentCard = await database_sync_to_async(agent_card)(
        spec=spec, url=_url(scope, name)
    )
    return JSONResponse(
        card.model_dump(mode="json", by_alias=True, exclude_none=True),
        headers={"Access-Control-Allow-Origin": "*"},
    )


def _served(name: str, *, user=None) -> AgentSpec | None:
    """The agent, if it is usable and staff serve it over A2A (to `user`: if she
    may use it, as on a page: an agent of groups she is not in is not hers)."""
    agents = AgentSpec.objects.all() if user is None else usable_agents(user=user)
    return agents.filter(
        name=name, a2a=True, is_active=True, missing=False, draft_of__isnull=True
    ).first()


def _url(scope: Scope, name: str) -> str:
    request = Request(scope)
    return str(request.base_url).rstrip("/") + f"{PREFIX}{name}/"


class _TooLarge(Exception):
    """More of a body came than DATA_UPLOAD_MAX_MEMORY_SIZE."""


async def _read_body(receive: Receive, *, limit: int | None) -> bytes | None:
    """The whole body, or None if the client left first; _TooLarge as soon as more
    than `limit` bytes have come, whatever Content-Length said."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if limit is not None and size > limit:
            raise _TooLarge()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _request_id(message: Any) -> str | int | None:
    """The request's id, if it is one JSON-RPC allows (a string or an integer)."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


def _is_envelope(message: Any) -> bool:
    """A JSON-RPC 2.0 request object: the version said, a usable id or none."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    return (
        "id" not in message or message["id"] is None or _request_id(message) is not None
    )


def _text_error_code(exc: BadText) -> int:
    """A bad text in `params` is a bad parameter; anywhere else, a bad request."""
    return INVALID_PARAMS if exc.path[:1] == ("params",) else INVALID_REQUEST


def _error(
    request_id: str | int | None,
    code: int,
    message: str,
    status: int,
    *,
    challenge: bool = False,
) -> JSONResponse:
    """A JSON-RPC error response, with the status an HTTP client reads too."""
    headers = {"WWW-Authenticate": 'Bearer realm="toolcrib"'} if challenge else None
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": code, "message": message},
        },
        status_code=status,
        headers=headers,
    )
