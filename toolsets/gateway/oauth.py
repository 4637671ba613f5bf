"""The gateway as an OAuth 2.1 protected resource, as the MCP authorization spec asks.

- Its Protected Resource Metadata (RFC 9728) is served at
  `/.well-known/oauth-protected-resource` and its path-suffixed form
  `/.well-known/oauth-protected-resource/mcp`: the resource is
  TOOLCRIB_GATEWAY_URL, the authorization server the OpenID Connect provider
  Toolcrib signs people in with (TOOLCRIB_OIDC_ISSUER). A 401 from `/mcp` points
  there (`WWW-Authenticate: Bearer resource_metadata="..."`).
- An access token is a JWT (RFC 9068) that provider signed, checked here: its
  signature against the provider's published keys (PyJWT's JWKS client, keys
  cached), its type (`at+jwt`, so an ID token is never taken for one), issuer,
  expiry, audience (the gateway's URL: RFC 8707 resource indicators) and the scopes
  TOOLCRIB_GATEWAY_OAUTH_SCOPES requires.
- Its `toolset:<name>` scopes limit it to those toolsets, as a personal access
  token's toolsets limit it (auth.Caller.may_reach decides for both); a token
  with none reaches every tool of its user's, as her API token does. The
  metadata lists one such scope for each toolset of the catalog.
- Its subject is a Toolcrib user through the link a provider sign-in made
  (ProviderIdentity, toolsets.sso.accounts): a subject that never signed in to
  Toolcrib, or whose account is switched off, is refused.
"""

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import jwt
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from project.errors import DomainError
from toolsets.models import ProviderIdentity, Toolset
from toolsets.sso import discovery

logger = logging.getLogger(__name__)

METADATA_PATH = "/.well-known/oauth-protected-resource"
METADATA_PATHS = frozenset({METADATA_PATH, METADATA_PATH + "/mcp"})
# Asymmetric signatures only: a provider's tokens are checked with its public keys.
ALGORITHMS = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
    "ES256", "ES384", "ES512", "EdDSA",
]  # fmt: skip
ACCESS_TOKEN_TYPES = frozenset({"at+jwt", "application/at+jwt"})
CLOCK_LEEWAY_SECONDS = 10
JWKS_CACHE_SECONDS = 300
# A scope naming a toolset: `toolset:math` limits a token to the toolset math.
TOOLSET_SCOPE = "toolset:"
# What a scope may be spelt with (RFC 6749 §3.3): a toolset whose name has other
# characters (a space) cannot be named by a scope.
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")

_jwks_clients: dict[str, jwt.PyJWKClient] = {}


class TokenRefused(DomainError):
    """A bearer token the gateway will not take; the message says why."""

    status_code = 401
    code = "invalid_token"


class InsufficientScope(TokenRefused):
    """A valid access token that lacks a scope the gateway requires."""

    status_code = 403
    code = "insufficient_scope"


@dataclass(frozen=True)
class AccessGrant:
    """Who an access token speaks for, and through which client."""

    user: AbstractBaseUser
    identity_id: int
    client_id: str
    scopes: frozenset[str] = frozenset()

    @property
    def toolsets(self) -> frozenset[str] | None:
        """The toolsets its scopes limit it to; None: every toolset."""
        return toolsets_in(self.scopes)


def is_enabled() -> bool:
    """Is the gateway an OAuth protected resource (TOOLCRIB_GATEWAY_URL set)?"""
    return bool(settings.TOOLCRIB_GATEWAY_URL and settings.TOOLCRIB_OIDC_ISSUER)


def is_access_token(token: str) -> bool:
    """Does the token look like a JWT (API and personal access tokens never do)?"""
    return is_enabled() and token.count(".") == 2


def resource_metadata_url() -> str:
    """Where the gateway's metadata is (RFC 9728 §3.1: the resource's path appended)."""
    parts = urlsplit(settings.TOOLCRIB_GATEWAY_URL)
    return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path}"


def required_scopes() -> list[str]:
    """The scopes every access token must carry (TOOLCRIB_GATEWAY_OAUTH_SCOPES)."""
    return list(settings.TOOLCRIB_GATEWAY_OAUTH_SCOPES)


def toolset_scope(name: str) -> str:
    """The scope that names a toolset."""
    return TOOLSET_SCOPE + name


def toolsets_in(scopes: Iterable[str]) -> frozenset[str] | None:
    """The toolsets `toolset:<name>` scopes name, or None when none is there.

    A name the catalog does not have (or an empty one) still limits: it reaches
    nothing, so a token with only such scopes reaches no tool, never every tool.
    """
    named = [
        scope.removeprefix(TOOLSET_SCOPE)
        for scope in scopes
        if scope.startswith(TOOLSET_SCOPE)
    ]
    return frozenset(named) if named else None


def supported_scopes() -> list[str]:
    """The required scopes, then one `toolset:<name>` for each toolset of the
    catalog (enabled, not missing) whose name a scope can spell."""
    names = Toolset.objects.filter(enabled=True, missing=False).order_by("name")
    toolsets = [
        toolset_scope(name)
        for name in names.values_list("name", flat=True)
        if SCOPE_TOKEN.fullmatch(name)
    ]
    required = required_scopes()
    return required + [scope for scope in toolsets if scope not in required]


def protected_resource_metadata() -> dict[str, Any]:
    """The gateway's Protected Resource Metadata (RFC 9728 §2)."""
    metadata: dict[str, Any] = {
        "resource": settings.TOOLCRIB_GATEWAY_URL,
        "authorization_servers": [settings.TOOLCRIB_OIDC_ISSUER],
        "bearer_methods_supported": ["header"],
        "resource_name": "Toolcrib tool gateway",
    }
    scopes = supported_scopes()
    if scopes:
        metadata["scopes_supported"] = scopes
    return metadata


def verify_access_token(*, token: str) -> AccessGrant:
    """The user an access token of the provider speaks for, or TokenRefused."""
    claims = _decode(token)
    scopes = granted_scopes(claims)
    _check_scopes(scopes)
    subject = claims["sub"]
    identity = (
        ProviderIdentity.objects.select_related("user")
        .filter(issuer=settings.TOOLCRIB_OIDC_ISSUER, subject=subject)
        .first()
    )
    if identity is None:
        raise _refused(
            "No Toolcrib account is linked to this provider account yet: sign in "
            f"to Toolcrib once with {settings.TOOLCRIB_OIDC_PROVIDER_NAME}, then "
            "connect again."
        )
    if not identity.user.is_active:
        raise _refused(f"The account {identity.user.get_username()} is switched off.")
    client_id = claims.get("client_id")
    return AccessGrant(
        user=identity.user,
        identity_id=identity.pk,
        client_id=client_id if isinstance(client_id, str) else "",
        scopes=scopes,
    )


def _decode(token: str) -> dict[str, Any]:
    issuer = settings.TOOLCRIB_OIDC_ISSUER
    resource = settings.TOOLCRIB_GATEWAY_URL
    try:
        header = jwt.get_unverified_header(token)
        if str(header.get("typ", "")).lower() not in ACCESS_TOKEN_TYPES:
            raise _refused("The token is not an access token (its type is not at+jwt).")
        key = _jwks_client().get_signing_key_from_jwt(token)
        return jwt.decode(
            token,
            key,
            algorithms=ALGORITHMS,
            audience=[resource, resource + "/"],
            issuer=[issuer, issuer + "/"],
            leeway=CLOCK_LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
        )
    except jwt.PyJWKClientConnectionError as exc:
        raise discovery.ProviderUnavailable(
            f"The keys of {issuer} could not be fetched to check the access token."
        ) from exc
    except jwt.ExpiredSignatureError:
        raise _refused(
            f"The access token has expired: get a new one from {issuer}."
        ) from None
    except jwt.InvalidAudienceError:
        raise _refused(
            f"The access token is for another resource: ask {issuer} for one "
            f"with resource={resource}."
        ) from None
    except jwt.InvalidIssuerError:
        raise _refused(f"The access token was not issued by {issuer}.") from None
    except (jwt.InvalidSignatureError, jwt.PyJWKClientError):
        raise _refused(
            f"The access token's signature is not one of {issuer}'s keys."
        ) from None
    except jwt.InvalidTokenError as exc:
        raise _refused(f"The access token is not valid: {exc}.") from None


def granted_scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes an access token carries: its `scope` (RFC 9068: space-separated),
    and its `scp` where a provider spells them so (Entra: a string; Okta: a list),
    so that a toolset scope a provider puts there still limits the token."""
    granted: set[str] = set()
    for claim in ("scope", "scp"):
        value = claims.get(claim)
        if isinstance(value, str):
            granted.update(value.split())
        elif isinstance(value, list):
            granted.update(item for item in value if isinstance(item, str))
    return frozenset(granted)


def _check_scopes(granted: frozenset[str]) -> None:
    missing = [name for name in required_scopes() if name not in granted]
    if missing:
        logger.warning("gateway access token refused reason=insufficient_scope")
        raise InsufficientScope(
            f"The access token lacks the scope {' '.join(missing)} the gateway requires."
        )


def _jwks_client() -> jwt.PyJWKClient:
    """One client per key set URL: its keys are cached, and refetched for a new kid."""
    uri = discovery.endpoints().jwks
    client = _jwks_clients.get(uri)
    if client is None:
        client = jwt.PyJWKClient(
            uri,
            cache_keys=True,
            lifespan=JWKS_CACHE_SECONDS,
            timeout=settings.OIDC_TIMEOUT,
        )
        _jwks_clients[uri] = client
    return client


def _refused(message: str) -> TokenRefused:
    logger.warning("gateway access token refused: %s", message)
    return TokenRefused(message)
