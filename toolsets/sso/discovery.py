"""The provider's endpoints, read from its discovery document (OpenID Connect Discovery).

Fetched at the first provider sign-in and cached for an hour in Django's cache, so a
password sign-in never waits on the provider and every process shares one copy.
"""

import hashlib
from dataclasses import asdict, dataclass

import httpx
from django.conf import settings
from django.core.cache import cache
from django.utils.translation import gettext as _

from project.errors import DomainError

CACHE_SECONDS = 3600
WELL_KNOWN = "/.well-known/openid-configuration"


class ProviderUnavailable(DomainError):
    """The provider did not answer, or answered with no usable discovery document."""

    status_code = 503
    code = "provider_unavailable"


@dataclass(frozen=True)
class Endpoints:
    authorization: str
    token: str
    userinfo: str
    jwks: str


_FIELDS = {
    "authorization": "authorization_endpoint",
    "token": "token_endpoint",
    "userinfo": "userinfo_endpoint",
    "jwks": "jwks_uri",
}


def endpoints() -> Endpoints:
    """The configured issuer's endpoints, from the cache or its discovery document."""
    issuer = settings.TOOLCRIB_OIDC_ISSUER
    key = "sso.discovery." + hashlib.sha256(issuer.encode()).hexdigest()[:32]
    cached = cache.get(key)
    if cached:
        return Endpoints(**cached)
    found = _discover(issuer)
    cache.set(key, asdict(found), CACHE_SECONDS)
    return found


def _discover(issuer: str) -> Endpoints:
    try:
        response = httpx.get(issuer + WELL_KNOWN, timeout=settings.OIDC_TIMEOUT)
        response.raise_for_status()
        document = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ProviderUnavailable(
            _(
                "The sign-in provider at %(issuer)s did not answer (%(type_exc___name)s)."
            )
            % {"issuer": issuer, "type_exc___name": type(exc).__name__}
        ) from exc
    if (
        not isinstance(document, dict)
        or str(document.get("issuer", "")).rstrip("/") != issuer
    ):
        raise ProviderUnavailable(
            _("The discovery document of %(issuer)s names another issuer.")
            % {"issuer": issuer}
        )
    values = {field: document.get(name) for field, name in _FIELDS.items()}
    missing = [_FIELDS[field] for field, value in values.items() if not _is_url(value)]
    if missing:
        raise ProviderUnavailable(
            _("The discovery document of %(issuer)s lacks %(join_missing)s.")
            % {"issuer": issuer, "join_missing": ", ".join(missing)}
        )
    return Endpoints(**values)


def _is_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith(("https://", "http://"))
