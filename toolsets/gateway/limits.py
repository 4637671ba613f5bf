"""What one token may hold open and send at the gateway (docs/gateway.md#limits).

- Sessions: at most TOOLCRIB_GATEWAY_MAX_SESSIONS_PER_TOKEN open at once per
  credential (a token, or an OAuth client of one user), in this server process.
  The next `initialize` is refused; a session frees its slot when its client
  closes it (DELETE) or when it has been idle for
  TOOLCRIB_GATEWAY_SESSION_IDLE_SECONDS (no request in flight and no GET stream
  open), which the SDK's session manager enforces.
- Notifications (a JSON-RPC message with a method and no id): at most
  TOOLCRIB_GATEWAY_NOTIFICATIONS_PER_MINUTE per token, in this server process,
  a burst of that many and then one every 60/N seconds (a token bucket). The
  count is kept before the token is checked, so a flood costs no database query
  and waits behind none.

Past either limit the request is answered 429 with a JSON-RPC error body
(`INVALID_REQUEST`, the message saying which limit; `Retry-After` for
notifications): a notification has no id and so no JSON-RPC response, and this
is the one answer Streamable HTTP leaves for refusing it.

The session count is a bypass of the `mcp` SDK's internals, written for mcp 2.3.0:
`_admit_session`, which the SDK calls under its session lock for a request that
opens a session, and `_session_owners`, the credential each open session belongs
to (kept until the session ends). Both limits' live tests
(tests/security/test_gateway_limits.py) fail if either changes; a limit of 0
turns it off.
"""

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import INVALID_REQUEST
from starlette.responses import JSONResponse

from project.errors import DomainError

# Buckets kept at most; past it, the full ones (unused for a minute) are dropped.
MAX_BUCKETS = 10_000


class TooManySessions(DomainError):
    """The credential already holds its limit of open MCP sessions."""

    status_code = 429
    code = "too_many_sessions"


class TooManyNotifications(DomainError):
    """The token sent its limit of notifications for now."""

    status_code = 429
    code = "too_many_notifications"

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class GatewaySessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, refusing a credential's session past its limit."""

    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        limit = int(settings.TOOLCRIB_GATEWAY_MAX_SESSIONS_PER_TOKEN)
        if limit > 0 and requestor is not None:
            held = sum(owner == requestor for owner in self._session_owners.values())
            if held >= limit:
                raise TooManySessions(
                    f"Too many MCP sessions open for this token: {limit} at most. "
                    "Close one (quit a client, or DELETE its session), or wait "
                    f"{idle_seconds_text()} for an idle one to expire."
                )
        return super()._admit_session(requestor)


def session_idle_timeout() -> float | None:
    """Seconds before an idle session ends, for the session manager; None: never."""
    idle = float(settings.TOOLCRIB_GATEWAY_SESSION_IDLE_SECONDS)
    return idle if idle > 0 else None


def idle_seconds_text() -> str:
    idle = session_idle_timeout()
    return "for ever" if idle is None else f"{idle:g} seconds"


@dataclass
class _Bucket:
    tokens: float
    at: float


class NotificationLimit:
    """A token bucket per token, on the server's event loop (no lock needed)."""

    def __init__(self) -> None:
        self._buckets: dict[bytes, _Bucket] = {}

    def take(self, *, token: str, now: float) -> None:
        """Count one notification of `token`, or raise TooManyNotifications."""
        per_minute = int(settings.TOOLCRIB_GATEWAY_NOTIFICATIONS_PER_MINUTE)
        if per_minute <= 0:
            return
        rate = per_minute / 60
        key = hashlib.sha256(token.encode()).digest()  # no token kept in clear
        bucket = self._buckets.get(key) or self._new(key, per_minute, now)
        bucket.tokens = min(per_minute, bucket.tokens + (now - bucket.at) * rate)
        bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return
        wait = math.ceil((1 - bucket.tokens) / rate)
        unit = "second" if wait == 1 else "seconds"
        raise TooManyNotifications(
            f"Too many notifications for this token: {per_minute} a minute at "
            f"most. Try again in {wait} {unit}.",
            retry_after=wait,
        )

    def _new(self, key: bytes, per_minute: int, now: float) -> _Bucket:
        if len(self._buckets) >= MAX_BUCKETS:
            full = [k for k, b in self._buckets.items() if now - b.at >= 60]
            for old in full:
                del self._buckets[old]
            if len(self._buckets) >= MAX_BUCKETS:
                self._buckets.clear()
        bucket = self._buckets[key] = _Bucket(float(per_minute), now)
        return bucket


def is_notification(message: Any) -> bool:
    """A JSON-RPC notification: a method and no id."""
    return isinstance(message, dict) and "method" in message and "id" not in message


def jsonrpc_refusal(refusal: DomainError, message: Any) -> JSONResponse:
    """The refusal as a JSON-RPC error, with the request's id when it had one."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        request_id = None
    headers = {}
    if isinstance(refusal, TooManyNotifications):
        headers["Retry-After"] = str(refusal.retry_after)
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": INVALID_REQUEST, "message": str(refusal)},
        },
        status_code=refusal.status_code,
        headers=headers,
    )
