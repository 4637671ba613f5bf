"""Outbound HTTP that only reaches what an administrator allowed.

Every request, and every redirect hop, passes through `GuardedTransport`, which
checks the URL against an `Allowlist`, resolves the host, checks every address,
and then connects to an address it checked (the request is pinned to the IP, with
the original Host header and TLS server name), so a DNS answer that changes
between the check and the connect (rebinding) cannot redirect the socket.

The rules:
- only http and https;
- the host must match an entry: a name (`api.example.com`), a wildcard
  (`*.example.com`, subdomains only), an address or a network (`203.0.113.7`,
  `10.1.0.0/16`), each optionally with a port (`127.0.0.1:8080`, `[::1]:8080`);
- an address outside the public internet (loopback, private, link-local and
  cloud metadata, shared, reserved, multicast) is reached only when an address
  or network entry covers it: a name on the list that resolves to a private
  address is refused, unless the Allowlist was built with `private_names=True`
  (an admin-registered OpenAPI server on an internal network);
- environment proxies are ignored, responses are cut off past a size limit, and
  redirects are followed one hop at a time, each hop checked again.
"""

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from toolsets.refusals import Refusal

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_PORTS = {"http": 80, "https": 443}
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Never forwarded to another host by a redirect.
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})


class HostRefused(Refusal, ValueError):
    """The URL's host, or an address it resolves to, is not allowed.

    A ValueError too: ADK's RestApiTool answers a ValueError from its HTTP client
    with an error response instead of failing the turn.
    """


class ResponseTooLarge(Refusal, ValueError):
    """The response body is larger than the limit."""


# The allowlist.


@dataclass(frozen=True)
class Allowlist:
    """Hosts that may be reached, parsed from setting entries."""

    names: frozenset[tuple[str, int | None]] = frozenset()
    suffixes: tuple[tuple[str, int | None], ...] = ()
    networks: tuple[tuple[IPNetwork, int | None], ...] = ()
    private_names: bool = False

    @classmethod
    def parse(
        cls, entries: Iterable[str], *, private_names: bool = False
    ) -> "Allowlist":
        """Parse entries; a malformed one raises ValueError naming it."""
        names: set[tuple[str, int | None]] = set()
        suffixes: list[tuple[str, int | None]] = []
        networks: list[tuple[IPNetwork, int | None]] = []
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            if "/" in entry:
                networks.append((_network(entry, raw), None))
                continue
            host, port = _split_host_port(entry, raw)
            if (address := ip_or_none(host)) is not None:
                networks.append((ipaddress.ip_network(address), port))
            elif host.startswith("*."):
                suffixes.append((_name(host[2:], raw), port))
            else:
                names.add((_name(host, raw), port))
        return cls(frozenset(names), tuple(suffixes), tuple(networks), private_names)

    def allows_name(self, host: str, port: int) -> bool:
        """True when a name or wildcard entry matches the host and port."""
        if (host, None) in self.names or (host, port) in self.names:
            return True
        return any(
            host.endswith("." + suffix) and entry_port in (None, port)
            for suffix, entry_port in self.suffixes
        )

    def allows_address(self, address: IPAddress, port: int) -> bool:
        """True when an address or network entry covers the address and port."""
        return any(
            address.version == network.version
            and address in network
            and entry_port in (None, port)
            for network, entry_port in self.networks
        )


def _network(entry: str, raw: str) -> IPNetwork:
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError as exc:
        raise ValueError(f"allowlist entry {raw!r} is not a network") from exc


def _split_host_port(entry: str, raw: str) -> tuple[str, int | None]:
    if entry.count(":") > 1 and not entry.startswith("["):
        return entry, None  # a bare IPv6 address
    try:
        parts = urlsplit(f"//{entry}")
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise ValueError(f"allowlist entry {raw!r} is not a host") from exc
    if not host or parts.path or parts.query or parts.username:
        raise ValueError(f"allowlist entry {raw!r} is not a host")
    return host, port


def _name(host: str, raw: str) -> str:
    try:
        name = host.rstrip(".").encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"allowlist entry {raw!r} is not a host name") from exc
    if not name or "*" in name:
        raise ValueError(f"allowlist entry {raw!r} is not a host name")
    return name


def ip_or_none(host: str) -> IPAddress | None:
    """The address a host literal names, or None for a name."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def is_public(address: IPAddress) -> bool:
    """True for an address on the public internet."""
    return address.is_global and not address.is_multicast


# Checking a URL.


@dataclass(frozen=True)
class Target:
    """A URL's host that passed the checks, and the addresses to connect to."""

    host: str
    port: int
    addresses: tuple[IPAddress, ...]


async def check_url(url: httpx.URL, allowlist: Allowlist) -> Target:
    """The checked target of a URL, or HostRefused saying why not."""
    if url.scheme not in DEFAULT_PORTS:
        raise HostRefused(f"only http and https URLs are allowed, not {url.scheme!r}")
    host = url.raw_host.decode("ascii").lower().rstrip(".")
    if not host:
        raise HostRefused("the URL has no host")
    port = url.port or DEFAULT_PORTS[url.scheme]
    literal = ip_or_none(host)
    if literal is not None:
        if not allowlist.allows_address(literal, port):
            raise HostRefused(f"{host} is not on the allowlist of hosts")
        return Target(host, port, (literal,))
    if not allowlist.allows_name(host, port):
        raise HostRefused(f"{host} is not on the allowlist of hosts")
    addresses = await resolve(host, port)
    for address in addresses:
        if is_public(address) or allowlist.private_names:
            continue
        if not allowlist.allows_address(address, port):
            raise HostRefused(
                f"{host} resolves to {address}, a non-public address that is not "
                "on the allowlist"
            )
    return Target(host, port, addresses)


async def resolve(host: str, port: int) -> tuple[IPAddress, ...]:
    """Every address the host resolves to, in the resolver's order."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise HostRefused(f"{host} could not be resolved") from exc
    found: dict[IPAddress, None] = {}
    for *_, sockaddr in infos:
        address = ip_or_none(str(sockaddr[0]).split("%", 1)[0])
        if address is not None:
            found[address] = None
    if not found:
        raise HostRefused(f"{host} could not be resolved")
    return tuple(found)


# The transport.


class LimitedStream(httpx.AsyncByteStream):
    """A response body that raises ResponseTooLarge past `limit` bytes."""

    def __init__(self, stream: httpx.AsyncByteStream, limit: int) -> None:
        self._stream = stream
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise ResponseTooLarge(
                    f"the response is larger than {self._limit} bytes"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class GuardedTransport(httpx.AsyncBaseTransport):
    """Checks every request against the allowlist and connects to a checked IP."""

    def __init__(self, allowlist: Allowlist, *, max_bytes: int | None = None) -> None:
        self._allowlist = allowlist
        self._max_bytes = max_bytes
        # No keep-alive: a connection pinned to an address and verified for one
        # name is never reused for another name on the same address.
        self._inner = httpx.AsyncHTTPTransport(
            trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send the request to the first checked address that accepts it."""
        target = await check_url(request.url, self._allowlist)
        error: Exception | None = None
        for address in target.addresses:
            try:
                response = await self._inner.handle_async_request(
                    pinned(request, target, address)
                )
            except httpx.ConnectError as exc:
                error = exc
                continue
            return await self._limited(response)
        raise error or HostRefused(f"{target.host} has no address to connect to")

    async def _limited(self, response: httpx.Response) -> httpx.Response:
        if self._max_bytes is None:
            return response
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            await response.aclose()
            raise ResponseTooLarge(
                f"the response is larger than {self._max_bytes} bytes"
            )
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=LimitedStream(response.stream, self._max_bytes),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def pinned(request: httpx.Request, target: Target, address: IPAddress) -> httpx.Request:
    """The request sent to one address, keeping its Host header and TLS name."""
    return httpx.Request(
        request.method,
        request.url.copy_with(host=str(address)),
        headers=request.headers,  # Host was set from the original URL
        stream=request.stream,
        extensions={**request.extensions, "sni_hostname": target.host},
    )


def guarded_client(
    allowlist: Allowlist, *, max_bytes: int | None, timeout: float
) -> httpx.AsyncClient:
    """An httpx client that reaches only the allowlist, and never via a proxy."""
    return httpx.AsyncClient(
        transport=GuardedTransport(allowlist, max_bytes=max_bytes),
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
    )


# Fetching, with redirects followed by hand.


@dataclass
class Fetched:
    """A final response: where it came from, and its body."""

    url: str
    status: int
    headers: httpx.Headers
    body: bytes
    redirects: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def text(self) -> str:
        charset = httpx.Response(200, headers=self.headers).charset_encoding
        return self.body.decode(charset or "utf-8", errors="replace")


def as_given(url: str) -> str:
    """A redirect's target as it is: no grant's condition to judge it by."""
    return url


@dataclass(frozen=True)
class Limits:
    max_bytes: int
    timeout: float
    max_redirects: int


async def fetch(
    *,
    method: str,
    url: str,
    allowlist: Allowlist,
    limits: Limits,
    headers: Mapping[str, str] | None = None,
    content: bytes | None = None,
    json: Any = None,
    host_headers: Collection[str] = (),
    hop: Callable[[str], str] = as_given,
) -> Fetched:
    """One request, redirects followed and re-checked, within the limits.

    `host_headers` name headers meant for the first host only (an administrator's
    fixed headers, a credential): like Authorization and Cookie, a redirect to
    another host drops them. `hop` gives the URL to request for each redirect's
    target, or raises to stop there (a grant's condition: the caller's
    toolsets.destinations).
    """
    start = _parsed(url)
    client = guarded_client(
        allowlist, max_bytes=limits.max_bytes, timeout=limits.timeout
    )
    try:
        async with asyncio.timeout(limits.timeout), client:
            kept = CREDENTIAL_HEADERS | {name.lower() for name in host_headers}
            return await _follow(
                client, method, start, headers, content, json, limits, kept, hop
            )
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise Refusal(f"no complete answer within {limits.timeout} seconds") from exc
    except httpx.HTTPError as exc:
        raise Refusal(f"the request failed: {type(exc).__name__}: {exc}") from exc


async def _follow(
    client: httpx.AsyncClient,
    method: str,
    url: httpx.URL,
    headers: Mapping[str, str] | None,
    content: bytes | None,
    json: Any,
    limits: Limits,
    host_only: frozenset[str] = CREDENTIAL_HEADERS,
    hop: Callable[[str], str] = as_given,
) -> Fetched:
    headers = dict(headers or {})
    redirects: list[str] = []
    for _ in range(limits.max_redirects + 1):
        response = await client.request(
            method, url, headers=headers, content=content, json=json
        )
        location = response.headers.get("location")
        if response.status_code not in REDIRECT_STATUSES or not location:
            return Fetched(
                str(url),
                response.status_code,
                response.headers,
                response.content,
                redirects,
            )
        target = _parsed(hop(str(url.join(location))))
        if response.status_code == 303 or (
            response.status_code in (301, 302) and method == "POST"
        ):
            method, content, json = "GET", None, None
        if _origin(target) != _origin(url):  # another host, port or scheme
            headers = {k: v for k, v in headers.items() if k.lower() not in host_only}
        redirects.append(str(target))
        url = target
    raise Refusal(f"more than {limits.max_redirects} redirects")


def _parsed(url: str) -> httpx.URL:
    try:
        return httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise HostRefused(f"{url!r} is not a valid URL") from exc


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or DEFAULT_PORTS.get(url.scheme)
