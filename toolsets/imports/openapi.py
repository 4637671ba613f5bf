"""OpenAPI specs, imported through ADK's OpenAPIToolset.

Calls to the API go only to the spec's first server (the one ADK uses), through
toolsets.net's guarded transport: pinned to checked addresses, size- and
time-limited, and refused on a private network unless the registration says
`allow_private_network`. A spec at a URL is fetched the same way, from that URL's
host only (the admin named it).

An operation behind a security scheme asks the user for her credential through
ADK's auth flow; each import keys it apart (key_credentials()), and the runtime
keeps it sealed per user and out of session state (agents.adk.tool_auth).
"""

import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import yaml
from asgiref.sync import async_to_sync
from django.conf import settings
from google.adk.tools.openapi_tool import OpenAPIToolset, RestApiTool

from toolsets.imports.registrations import (
    ImportFailed,
    OpenApiSpec,
    prefix_of,
    remember,
    validated,
)
from toolsets.net import (
    Allowlist,
    Limits,
    fetch,
    guarded_client,
    ip_or_none,
    is_public,
)
from toolsets.refusals import Refusal


async def aimport_openapi_spec(
    *,
    name: str,
    spec: str | None = None,
    path: str | None = None,
    url: str | None = None,
    allow_private_network: bool = False,
    tool_filter: list[str] | None = None,
    prefix: str | None = None,
) -> OpenAPIToolset:
    """The ADK toolset of an OpenAPI spec: one tool per operation.

    Args:
        spec: The spec itself, JSON or YAML text.
        path: A spec file on this server.
        url: Where to fetch the spec; a relative (or missing) `servers` URL in
            it is resolved against this URL.
        allow_private_network: Let the API's server be on a private network or
            this host (an internal API); refused otherwise.
        tool_filter: Only these operations, by tool name (snake_case
            operationId).
        prefix: Put before each tool's name; default the import's name, "" for
            none.
    """
    registration = validated(OpenApiSpec, locals())  # the arguments, as given
    return await aopenapi_toolset(registration)


def import_openapi_spec(**fields: Any) -> OpenAPIToolset:
    """See aimport_openapi_spec()."""
    return async_to_sync(aimport_openapi_spec)(**fields)


async def aopenapi_toolset(registration: OpenApiSpec) -> OpenAPIToolset:
    """A new OpenAPIToolset for a registered spec, read from its source now."""
    return openapi_toolset(await aload_spec(registration), registration)


def openapi_toolset(
    document: dict[str, Any], registration: OpenApiSpec
) -> OpenAPIToolset:
    """A new OpenAPIToolset for a spec already read (see aload_spec()).

    A stored import is built this way in every process, from the spec as its
    last refresh read it, so no turn waits on the spec's server.
    """
    allowlist = api_allowlist(document, registration)
    toolset = OpenAPIToolset(
        spec_dict=document,
        tool_filter=list(registration.tool_filter)
        if registration.tool_filter
        else None,
        tool_name_prefix=prefix_of(registration),
        httpx_client_factory=lambda: guarded_client(
            allowlist,
            max_bytes=int(settings.TOOLCRIB_IMPORT_MAX_RESPONSE_BYTES),
            timeout=float(settings.TOOLCRIB_IMPORT_TIMEOUT),
        ),
        # The guarded client above does the checking (and pins the address);
        # ADK's own check would refuse an allowed internal API outright.
        allow_private_network_access=True,
    )
    key_credentials(toolset, registration.name)
    return remember(toolset, registration)


def key_credentials(toolset: OpenAPIToolset, name: str) -> None:
    """Give each operation that needs a credential a key of this import's own.

    ADK's default key is the security scheme's digest alone, so a token a user
    gave one API would be loaded for any other import with the same kind of
    scheme and sent to its server. The key names the import, and its digest the
    API's server and the scheme: a changed server asks again.
    """
    for tool in toolset._tools:  # ADK lists them only async
        if tool.auth_scheme is not None:
            tool.configure_credential_key(credential_key_of(tool, name))


def credential_key_of(tool: RestApiTool, name: str) -> str:
    """`<import>_<scheme type>_<digest of server and scheme>`."""
    scheme = tool.auth_scheme
    described = {
        "server": tool.endpoint.base_url,
        "scheme": scheme.model_dump(mode="json", by_alias=True, exclude_none=True),
    }
    canonical = json.dumps(described, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    kind = getattr(scheme.type_, "value", scheme.type_)
    return f"{name}_{kind}_{digest}"


async def aload_spec(registration: OpenApiSpec) -> dict[str, Any]:
    """The spec as a dict, with an absolute first server URL."""
    limit = int(settings.TOOLCRIB_IMPORT_MAX_SPEC_BYTES)
    if registration.url:
        text = await _fetch_spec(registration.url, limit)
    elif registration.path:
        text = _read_spec_file(Path(registration.path), limit)
    else:
        text = registration.spec
    document = parse_spec(text)
    base = registration.url or ""
    servers = document.get("servers") or [{"url": "/"}]
    first = str(servers[0].get("url", "/")) if isinstance(servers[0], dict) else "/"
    absolute = urljoin(base, first) if base else first
    if httpx.URL(absolute).scheme not in ("http", "https"):
        raise ImportFailed(f"the spec's server URL {first!r} is not an absolute URL")
    document["servers"] = [{**servers[0], "url": absolute}] if base else servers
    return document


async def _fetch_spec(url: str, limit: int) -> str:
    host = httpx.URL(url).netloc.decode("ascii")
    timeout = float(settings.TOOLCRIB_IMPORT_TIMEOUT)
    try:
        fetched = await fetch(
            method="GET",
            url=url,
            allowlist=Allowlist.parse([host], private_names=True),
            limits=Limits(max_bytes=limit, timeout=timeout, max_redirects=0),
        )
    except (Refusal, ValueError) as exc:
        raise ImportFailed(f"the spec at {url} could not be fetched: {exc}") from exc
    if fetched.status != 200:
        raise ImportFailed(f"the spec at {url} answered HTTP {fetched.status}")
    return fetched.text()


def _read_spec_file(path: Path, limit: int) -> str:
    try:
        if path.stat().st_size > limit:
            raise ImportFailed(f"{path} is larger than {limit} bytes")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFailed(f"{path} could not be read: {exc}") from exc


def parse_spec(text: str) -> dict[str, Any]:
    """An OpenAPI 3 document from JSON or YAML text."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ImportFailed("the spec is neither JSON nor YAML") from exc
    if not isinstance(document, dict) or not isinstance(document.get("paths"), dict):
        raise ImportFailed("the spec is not an OpenAPI document (no paths)")
    if not str(document.get("openapi", "")).startswith("3."):
        raise ImportFailed("only OpenAPI 3 specs are supported")
    return document


def api_allowlist(document: dict[str, Any], registration: OpenApiSpec) -> Allowlist:
    """Only the spec's first server; private addresses only if allowed."""
    url = httpx.URL(document["servers"][0]["url"])
    host = url.raw_host.decode("ascii")
    literal = ip_or_none(host)
    private_ok = registration.allow_private_network
    if literal is not None and not is_public(literal) and not private_ok:
        raise ImportFailed(
            f"the API's server {host} is on a private network; "
            "register the spec with allow_private_network to allow it"
        )
    entry = url.netloc.decode("ascii")
    return Allowlist.parse([entry], private_names=private_ok)
