"""What an administrator registers to import tools: an MCP server, an OpenAPI spec,
or a remote A2A agent.

A registration is a small validated pydantic model, so it can be stored as JSON and
rebuilt anywhere; the toolset built from one remembers it (`registration_of()`).
"""

from typing import Any, Self

import httpx
from google.adk.tools.base_toolset import BaseToolset
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,62}$"
REGISTRATION_ATTRIBUTE = "toolcrib_import"


class ImportFailed(Exception):
    """A registration is invalid, or its server or spec cannot be read."""


class McpOAuth(BaseModel):
    """OAuth 2 client credentials for a streamable HTTP MCP server (MCP's
    authorization: the server names its authorization server, whose `issuer` must
    be this one; the token is fetched, and fetched again, as the server asks)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    client_id: str = Field(min_length=1, max_length=500)
    client_secret: str = Field(min_length=1, max_length=2000, repr=False)
    issuer: str = Field(min_length=1, max_length=2000)
    scope: str = Field(default="", max_length=2000)

    @model_validator(mode="after")
    def _http_issuer(self) -> Self:
        if _scheme(self.issuer) not in ("http", "https"):
            raise ValueError("the OAuth issuer must be an http:// or https:// URL")
        return self


def _check_http_url(cls, value: str) -> str:
    """A `url` field's rule, on the field: http:// or https:// (or none given)."""
    if value and _scheme(value) not in ("http", "https"):
        raise ValueError(
            "a URL starting with http:// or https:// (e.g. http://localhost:8000/mcp)"
        )
    return value


class McpServer(BaseModel):
    """An MCP server: a stdio `command` (program and arguments) or a `url` (with
    `headers`, or `oauth` client credentials)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    command: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    oauth: McpOAuth | None = Field(default=None, repr=False)
    timeout: float | None = Field(default=None, gt=0)
    tool_filter: tuple[str, ...] | None = None
    prefix: str | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if bool(self.command) == bool(self.url):
            raise ValueError("give either command (stdio) or url (streamable HTTP)")
        if self.oauth is not None and not self.url:
            raise ValueError("oauth is for a server at a url (streamable HTTP)")
        return self

    _http_url = field_validator("url")(_check_http_url)

    @property
    def source(self) -> str:
        return "mcp"

    @property
    def origin(self) -> str:
        """Where the tools come from, without anything that may hold a secret
        (env, headers, arguments, a URL's user or query)."""
        if self.url:
            return _public_url(self.url)
        return self.command[0] + (" ..." if len(self.command) > 1 else "")


class OpenApiSpec(BaseModel):
    """An OpenAPI 3 spec: inline `spec` text (JSON or YAML), a `path` or a `url`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    spec: str = Field(default="", repr=False)
    path: str = ""
    url: str = ""
    allow_private_network: bool = False
    tool_filter: tuple[str, ...] | None = None
    prefix: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if sum(bool(v) for v in (self.spec, self.path, self.url)) != 1:
            raise ValueError("give exactly one of spec, path or url")
        return self

    _http_url = field_validator("url")(_check_http_url)

    @property
    def source(self) -> str:
        return "openapi"

    @property
    def origin(self) -> str:
        return _public_url(self.url) if self.url else self.path or "inline spec"


class A2AAgent(BaseModel):
    """A remote A2A agent, by the URL of its agent card, with the credential its
    endpoint takes: `token`, sent as `Authorization: Bearer <token>`, or as the
    value of `token_header` (an API-key header) when that is given."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    url: str = Field(min_length=1, max_length=2000)
    token: str = Field(default="", max_length=4000, repr=False)
    token_header: str = Field(default="", max_length=100, pattern=r"^([A-Za-z0-9-]+)?$")
    timeout: float | None = Field(default=None, gt=0, le=3600)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if _scheme(url) not in ("http", "https"):
            raise ValueError("url must be http:// or https://")
        return url

    @model_validator(mode="after")
    def _token_for_header(self) -> Self:
        if self.token_header and not self.token:
            raise ValueError("token_header names the header of a token: give token")
        return self

    @property
    def source(self) -> str:
        return "a2a"

    @property
    def origin(self) -> str:
        return _public_url(self.url)

    def headers(self) -> dict[str, str]:
        """The credential's header, sent to the agent's own host only."""
        if not self.token:
            return {}
        if self.token_header and self.token_header.lower() != "authorization":
            return {self.token_header: self.token}
        return {"Authorization": f"Bearer {self.token}"}


Registration = McpServer | OpenApiSpec | A2AAgent


def public_fields(registration: Registration) -> dict[str, Any]:
    """What a registration says, minus anything that may hold a secret.

    Env and header values, an OAuth client's secret, an inline spec and a
    command's arguments are never shown; the names of env variables and headers are, so an admin can tell what
    was set. URLs are shown without user or query (see `origin`).
    """
    data = registration.model_dump(
        mode="json",
        exclude={"env", "headers", "spec", "command", "url", "oauth", "token"},
    )
    if isinstance(registration, McpServer):
        data["env_names"] = sorted(registration.env)
        data["header_names"] = sorted(registration.headers)
        oauth = registration.oauth
        data["oauth"] = (
            {"client_id": oauth.client_id, "issuer": oauth.issuer, "scope": oauth.scope}
            if oauth
            else None
        )
    elif isinstance(registration, A2AAgent):
        data.pop("token", None)
        data["credential"] = (
            (registration.token_header or "Authorization")
            if registration.token
            else None
        )
    else:
        data["inline_spec"] = bool(registration.spec)
    return data


def failure_of(exc: BaseException) -> str:
    """The innermost message of an exception (group): what went wrong, briefly.

    MCP transports fail inside task groups; the group's own message says nothing.
    """
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:2000]


def _scheme(url: str) -> str:
    try:
        return httpx.URL(url).scheme
    except httpx.InvalidURL as exc:
        raise ValueError(f"{url!r} is not a URL") from exc


def _public_url(url: str) -> str:
    return str(httpx.URL(url).copy_with(username=None, password=None, query=None))


def validated(model: type[BaseModel], fields: dict[str, Any]) -> Any:
    try:
        return model(**{k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise ImportFailed(str(exc)) from exc


def registration_of(toolset: BaseToolset) -> Registration | None:
    """The registration an imported toolset was built from; None for others."""
    return getattr(toolset, REGISTRATION_ATTRIBUTE, None)


def prefix_of(registration: Registration) -> str | None:
    if registration.prefix is None:
        return registration.name
    return registration.prefix or None


def remember(toolset: BaseToolset, registration: Registration) -> BaseToolset:
    setattr(toolset, REGISTRATION_ATTRIBUTE, registration)
    return toolset
