"""The http toolset: GET and POST to hosts on an administrator's allowlist.

Policy (Django settings, read on every call):
- TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS: the allowlist (see toolsets.builtin.net);
  empty, the default, refuses every host.
- TOOLCRIB_BUILTIN_HTTP_MAX_BYTES: the largest response body read.
- TOOLCRIB_BUILTIN_HTTP_TIMEOUT: seconds for the whole exchange, redirects included.
- TOOLCRIB_BUILTIN_HTTP_MAX_REDIRECTS: redirect hops followed, each one re-checked.
"""

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from toolsets.builtin.base import BuiltinTool, BuiltinToolset, Refusal
from toolsets.builtin.net import Allowlist, Fetched, Limits, fetch

# Headers the model may not set: the transport decides them.
FORBIDDEN_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te"}
)
HIDDEN_RESPONSE_HEADERS = frozenset({"set-cookie", "set-cookie2"})
MAX_RESPONSE_HEADERS = 50
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml")


def allowlist() -> Allowlist:
    """The allowlist of hosts, from settings."""
    try:
        return Allowlist.parse(settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS)
    except ValueError as exc:
        raise Refusal(
            f"TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS is misconfigured: {exc}"
        ) from exc


def limits() -> Limits:
    """The size, time and redirect limits, from settings."""
    return Limits(
        max_bytes=int(settings.TOOLCRIB_BUILTIN_HTTP_MAX_BYTES),
        timeout=float(settings.TOOLCRIB_BUILTIN_HTTP_TIMEOUT),
        max_redirects=int(settings.TOOLCRIB_BUILTIN_HTTP_MAX_REDIRECTS),
    )


def request_headers(headers: Any) -> dict[str, str]:
    """The model's headers, checked, minus the ones the transport owns."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise Refusal("headers must be an object of header names to values")
    clean: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str | int | float):
            raise Refusal("header names and values must be strings")
        text = str(value)
        if any(c in name + text for c in "\r\n\0"):
            raise Refusal(f"header {name!r} contains a line break")
        if name.lower() not in FORBIDDEN_HEADERS:
            clean[name] = text
    return clean


def answer(fetched: Fetched) -> dict[str, Any]:
    """What the model reads about a response."""
    headers = {
        name: value
        for name, value in list(fetched.headers.items())[:MAX_RESPONSE_HEADERS]
        if name.lower() not in HIDDEN_RESPONSE_HEADERS
    }
    result: dict[str, Any] = {
        "status": "success",
        "http_status": fetched.status,
        "url": fetched.url,
        "headers": headers,
    }
    if fetched.redirects:
        result["redirects"] = fetched.redirects
    if is_text(fetched):
        result["body"] = fetched.text()
    else:
        result["body"] = None
        result["note"] = (
            f"{len(fetched.body)} bytes of {fetched.content_type or 'binary'} "
            "content, not shown"
        )
    return result


def is_text(fetched: Fetched) -> bool:
    """Declared as text, or undeclared and valid UTF-8."""
    if fetched.content_type:
        return fetched.content_type.startswith(TEXT_TYPES)
    try:
        fetched.body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _url(url: Any) -> str:
    if not isinstance(url, str) or not url.strip():
        raise Refusal("url must be an absolute http:// or https:// URL")
    return url.strip()


async def http_get(url: str, headers: dict[str, str] | None = None) -> dict:
    """Fetch a URL with HTTP GET.

    Only hosts on the administrator's allowlist can be reached, redirects
    included; responses larger than the size limit are refused.

    Args:
        url: An absolute http:// or https:// URL.
        headers: Extra request headers, e.g. {"Accept": "application/json"}.

    Returns:
        The HTTP status, the final URL, the response headers and the body text.
    """
    fetched = await fetch(
        method="GET",
        url=_url(url),
        allowlist=allowlist(),
        limits=limits(),
        headers=request_headers(headers),
    )
    return answer(fetched)


async def http_post(
    url: str,
    body: str | None = None,
    json_body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> dict:
    """Send an HTTP POST to a URL.

    Only hosts on the administrator's allowlist can be reached, redirects
    included; responses larger than the size limit are refused.

    Args:
        url: An absolute http:// or https:// URL.
        body: A text body to send, e.g. form data; set Content-Type in headers.
        json_body: A JSON object to send instead of body.
        headers: Extra request headers.

    Returns:
        The HTTP status, the final URL, the response headers and the body text.
    """
    if body is not None and json_body is not None:
        raise Refusal("send either body or json_body, not both")
    if body is not None and not isinstance(body, str):
        raise Refusal("body must be text; use json_body for an object")
    fetched = await fetch(
        method="POST",
        url=_url(url),
        allowlist=allowlist(),
        limits=limits(),
        headers=request_headers(headers),
        content=body.encode() if body is not None else None,
        json=json_body,
    )
    return answer(fetched)


class HttpToolset(BuiltinToolset):
    """HTTP GET and POST to hosts on the administrator's allowlist."""

    # A new catalog row is granted only: it reaches other hosts (issue 14).
    catalog_defaults = {"default_policy": "granted_only"}

    def __init__(self, **kwargs: Any) -> None:
        tools = [
            BuiltinTool(http_get, risk="read"),
            BuiltinTool(http_post, risk="write"),
        ]
        super().__init__(tools, **kwargs)


toolset = HttpToolset()
