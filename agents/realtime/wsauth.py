"""Websocket authentication: a token (header or ?token=) or the browser's session cookie.

Token clients need no Origin; cookie clients must come from the app's own origin or a
trusted one, so no other site, nor another program on another port of the same host,
can open a socket with a visitor's cookie (cross-site websocket hijacking).
"""

from urllib.parse import parse_qs, urlsplit

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

from agents import account_checks, tokens

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
    """Whether the handshake's Origin is the app's own or one of CSRF_TRUSTED_ORIGINS.

    The check Django's CsrfViewMiddleware makes of a form's Origin: scheme, host and
    port all count, since another port or scheme is another program.
    """
    origin = _header(scope, b"origin")
    if origin is None:
        return False
    return origin == own_origin(scope) or _trusted(origin)


def own_origin(scope) -> str | None:
    """`scheme://host[:port]` of the handshake, if its Host is in ALLOWED_HOSTS."""
    host = _header(scope, b"host")
    if host is None:
        return None
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    return f"{'https' if _is_secure(scope) else 'http'}://{host}"


def _is_secure(scope) -> bool:
    # As HttpRequest.is_secure(): a TLS proxy says so in SECURE_PROXY_SSL_HEADER.
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        name, secure = proxy
        header = name.removeprefix("HTTP_").lower().replace("_", "-").encode()
        value = _header(scope, header)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure
    return scope.get("scheme") == "wss"


def _trusted(origin: str) -> bool:
    trusted = settings.CSRF_TRUSTED_ORIGINS
    if origin in (entry for entry in trusted if "*" not in entry):
        return True
    try:
        given = urlsplit(origin)
    except ValueError:
        return False
    return any(
        pattern.scheme == given.scheme
        and is_same_domain(given.netloc, pattern.netloc.lstrip("*"))
        for pattern in (urlsplit(entry) for entry in trusted if "*" in entry)
    )


def _header(scope, name: bytes) -> str | None:
    value = next((v for n, v in scope.get("headers", []) if n == name), None)
    return None if value is None else value.decode("latin1")


@database_sync_to_async
def user_for_token(key: str):
    """The token's user, checked as on HTTP (agents/tokens.py), or AnonymousUser."""
    return tokens.user_for_token(token=key) or AnonymousUser()


@database_sync_to_async
def checked_user(user):
    """The session's user if she passes her account checks, else AnonymousUser."""
    if user is None or not user.is_authenticated:
        return user
    return user if account_checks.passes(user=user) else AnonymousUser()


class TokenAuthMiddleware:
    """Sets scope["user"] from a token when one is given (else checks the session's
    user, as on HTTP), and scope["auth_method"]."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        key = token_from_scope(scope)
        if key is None:
            scope = dict(scope, auth_method="cookie")
            if "user" in scope:
                scope["user"] = await checked_user(scope["user"])
        else:
            scope = dict(scope, auth_method="token", user=await user_for_token(key))
        return await self.inner(scope, receive, send)


def WebsocketAuthStack(inner):  # noqa: N802 - named like Channels' AuthMiddlewareStack
    return AuthMiddlewareStack(TokenAuthMiddleware(inner))
