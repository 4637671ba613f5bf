"""The http toolset: GET and POST to hosts on an administrator's allowlist.

Policy (Django settings, read on every call):
- TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS: the allowlist (see toolsets.net);
  empty, the default, refuses every host.
- TOOLCRIB_BUILTIN_HTTP_MAX_BYTES: the largest response body read.
- TOOLCRIB_BUILTIN_HTTP_TIMEOUT: seconds for the whole exchange, redirects included.
- TOOLCRIB_BUILTIN_HTTP_MAX_REDIRECTS: redirect hops followed, each one re-checked.

An administrator's API (the GoAgent APITool's baseURL and headers):
- TOOLCRIB_BUILTIN_HTTP_BASE_URL: a relative URL the model gives (`/items`) is
  joined to it, and its host is allowed as if listed;
- TOOLCRIB_BUILTIN_HTTP_HEADERS: fixed headers sent with every request to that host;
- TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER (`X-Api-Key`, or `Authorization: Bearer`
  for a prefix): the header that carries each user's own API key to that host. The
  tool asks her for it once (ADK's request_credential, as any tool's credential:
  sealed, per user and agent, revocable), under a key that names the base URL, so a
  key given for one API never goes to another.
The model can neither set nor see these headers: its own headers of the same names
are dropped, they go to the base URL's host only, and a redirect to another host
drops them.

A grant that allows the tools only on a condition on `url` holds for every URL
they request, each redirect's too (toolsets.destinations): they
request it normalized as the condition judged it, and stop at a hop outside it.
"""

import hashlib
from collections.abc import Mapping
from typing import Any

import httpx
from django.conf import settings
from fastapi.openapi.models import APIKey, APIKeyIn
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from google.adk.auth.auth_tool import AuthConfig
from google.adk.tools import ToolContext

from toolsets.builtin.base import BuiltinTool, BuiltinToolset
from toolsets.destinations import Destinations, OutsideCondition
from toolsets.net import DEFAULT_PORTS, Allowlist, Fetched, Limits, fetch
from toolsets.refusals import Refusal

# Headers the model may not set: the transport decides them.
FORBIDDEN_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te"}
)
HIDDEN_RESPONSE_HEADERS = frozenset({"set-cookie", "set-cookie2"})
MAX_RESPONSE_HEADERS = 50
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml")


def allowlist() -> Allowlist:
    """The allowlist of hosts, from settings, with the base URL's host."""
    entries = list(settings.TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS)
    base = base_url()
    if base is not None:
        entries.append(host_entry(base))
    try:
        return Allowlist.parse(entries)
    except ValueError as exc:
        raise Refusal(
            f"TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS is misconfigured: {exc}"
        ) from exc


def base_url() -> httpx.URL | None:
    """The administrator's base URL, if one is set."""
    text = settings.TOOLCRIB_BUILTIN_HTTP_BASE_URL
    return httpx.URL(text) if text else None


def host_entry(url: httpx.URL) -> str:
    """An allowlist entry for exactly the URL's host and port."""
    port = url.port or DEFAULT_PORTS.get(url.scheme, 443)
    return f"[{url.host}]:{port}" if ":" in url.host else f"{url.host}:{port}"


def target_url(url: Any) -> str:
    """The URL to fetch: an absolute one as given, a path joined to the base URL."""
    if not isinstance(url, str) or not url.strip():
        raise Refusal("url must be an absolute http:// or https:// URL")
    url = url.strip()
    if "://" in url:
        return url
    base = settings.TOOLCRIB_BUILTIN_HTTP_BASE_URL
    if not base:
        raise Refusal("url must be an absolute http:// or https:// URL")
    return f"{base.rstrip('/')}/{url.lstrip('/')}"


def is_base_host(url: str) -> bool:
    """Whether a URL goes to the base URL's scheme, host and port."""
    base = base_url()
    if base is None:
        return False
    try:
        target = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return False
    return (target.scheme, host_entry(target)) == (base.scheme, host_entry(base))


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


# The administrator's headers, and the user's credential.


class CredentialNeeded(Exception):
    """The user has not given her API key yet: the tool asked for it."""

    def as_result(self) -> dict[str, Any]:
        return {"status": "pending", "message": str(self)}


def credential_config() -> AuthConfig | None:
    """What the tool asks each user for: an API key, for the base URL's API."""
    header = settings.TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER
    base = settings.TOOLCRIB_BUILTIN_HTTP_BASE_URL
    if not header or not base:
        return None
    name = header.partition(":")[0].strip()
    digest = hashlib.sha256(f"{base}\n{name}".encode()).hexdigest()[:16]
    return AuthConfig(
        auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": name}),
        raw_auth_credential=AuthCredential(auth_type=AuthCredentialTypes.API_KEY),
        credential_key=f"builtin_http_{digest}",
    )


async def credential_header(tool_context: ToolContext | None) -> dict[str, str]:
    """The header that carries the user's API key; CredentialNeeded if she has none."""
    config = credential_config()
    if config is None:
        return {}
    if tool_context is None:
        raise Refusal("this API needs your API key, which only a session can ask for")
    credential = tool_context.get_auth_response(config) or (
        await tool_context.load_credential(config)
    )
    if credential is None or not credential.api_key:
        tool_context.request_credential(config)
        raise CredentialNeeded(f"Waiting for your API key for {base_url().host}.")
    name, _, prefix = settings.TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER.partition(":")
    return {name.strip(): f"{prefix.strip()} {credential.api_key}".strip()}


def admin_header_names() -> set[str]:
    """The headers only the administrator sets (lower case)."""
    names = {name.lower() for name in settings.TOOLCRIB_BUILTIN_HTTP_HEADERS}
    header = settings.TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER
    if header:
        names.add(header.partition(":")[0].strip().lower())
    return names


async def headers_for(
    url: str, headers: Any, tool_context: ToolContext | None
) -> dict[str, str]:
    """The model's headers, checked, minus the administrator's; and for the base
    URL's host, the administrator's fixed headers and the user's credential."""
    owned = admin_header_names()
    sent = {k: v for k, v in request_headers(headers).items() if k.lower() not in owned}
    if not is_base_host(url):
        return sent
    fixed = dict(settings.TOOLCRIB_BUILTIN_HTTP_HEADERS)
    return {**sent, **fixed, **await credential_header(tool_context)}


async def send(
    method: str,
    url: Any,
    headers: Any,
    tool_context: ToolContext | None,
    **body: Any,
) -> dict:
    """One request of the model's, with the administrator's headers where due,
    each URL it reaches (redirects too) within its grant's condition."""
    destinations = Destinations.of(tool_context, "url")
    try:
        target = destinations.start(target_url(url))
        sent = await headers_for(target, headers, tool_context)
        fetched = await fetch(
            method=method,
            url=target,
            allowlist=allowlist(),
            limits=limits(),
            headers=sent,
            host_headers=admin_header_names(),
            hop=destinations.hop,
            **body,
        )
    except CredentialNeeded as needed:
        return needed.as_result()
    except OutsideCondition as outside:
        raise Refusal(str(outside)) from None
    return answer(fetched)


async def http_get(
    url: str,
    headers: dict[str, str] | None = None,
    tool_context: ToolContext | None = None,
) -> dict:
    """Fetch a URL with HTTP GET.

    Only hosts on the administrator's allowlist can be reached, redirects
    included; responses larger than the size limit are refused.

    Args:
        url: An absolute http:// or https:// URL, or a path of the
            administrator's API (e.g. /items) when one is set.
        headers: Extra request headers, e.g. {"Accept": "application/json"}.

    Returns:
        The HTTP status, the final URL, the response headers and the body text.
    """
    return await send("GET", url, headers, tool_context)


async def http_post(
    url: str,
    body: str | None = None,
    json_body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    tool_context: ToolContext | None = None,
) -> dict:
    """Send an HTTP POST to a URL.

    Only hosts on the administrator's allowlist can be reached, redirects
    included; responses larger than the size limit are refused.

    Args:
        url: An absolute http:// or https:// URL, or a path of the
            administrator's API (e.g. /items) when one is set.
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
    content = body.encode() if body is not None else None
    return await send(
        "POST", url, headers, tool_context, content=content, json=json_body
    )


class HttpToolset(BuiltinToolset):
    """HTTP GET and POST to hosts on the administrator's allowlist."""

    # A new catalog row is granted only: it reaches other hosts (issue 14).
    catalog_defaults = {"default_policy": "granted_only"}

    def __init__(self, **kwargs: Any) -> None:
        tools = [
            BuiltinTool(http_get, risk="read", urls=["url"]),
            BuiltinTool(http_post, risk="write", urls=["url"]),
        ]
        super().__init__(tools, **kwargs)


toolset = HttpToolset()
