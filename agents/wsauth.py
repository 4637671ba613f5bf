"""Websocket authentication: a token (header or ?token=) or the browser's session cookie.

Token clients need no Origin; cookie clients must come from an allowed host, so no
other site can open a socket with a visitor's cookie (cross-site websocket hijacking).
"""

from urllib.parse import parse_qs, urlparse

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import validate_host

from agents import tokens

TOKEN_PREFIX = "token "


def token_from_scope(scope) -> str | None:
    """The token of an `Authorization: Token <t>` header or a `?token=` parameter."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            text = value.decode("latin1")
            if text.lower().startswith(TOKEN_PREFIX):
                return text[len(TOKEN_PREFIX) :].strip()
    query = parse_qs(scope.get("query_string", b"").decode())
    values = query.get("token")
    return values[0] if values else None


def origin_allowed(scope) -> bool:
    """Whether the handshake's Origin names one of ALLOWED_HOSTS."""
    origin = next((v for n, v in scope.get("headers", []) if n == b"origin"), None)
    if origin is None:
        return False
    host = urlparse(origin.decode("latin1")).hostname
    return bool(host) and validate_host(host, settings.ALLOWED_HOSTS)


@database_sync_to_async
def user_for_token(key: str):
    """The token's user, checked as on HTTP (agents/tokens.py), or AnonymousUser."""
    return tokens.user_for_token(token=key) or AnonymousUser()


class TokenAuthMiddleware:
    """Sets scope["user"] from a token when one is given, and scope["auth_method"]."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        key = token_from_scope(scope)
        if key is None:
            scope = dict(scope, auth_method="cookie")
        else:
            scope = dict(scope, auth_method="token", user=await user_for_token(key))
        return await self.inner(scope, receive, send)


def WebsocketAuthStack(inner):  # noqa: N802 - named like Channels' AuthMiddlewareStack
    return AuthMiddlewareStack(TokenAuthMiddleware(inner))
