"""The provider's tokens kept for a linked account, sealed at rest (project.sealing).

Her sign-in and every re-check (recheck.py) keep what the provider's token endpoint
answered: the refresh token that lets Toolcrib ask about her again, and the access
token (with its expiry) for its userinfo endpoint. A copy of the database opens
nothing without the key; a changed key reads as no token, and she signs in again.
"""

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.utils import timezone

from project import sealing
from toolsets.models import ProviderIdentity

REFRESH_PURPOSE = "sso.refresh_token"
ACCESS_PURPOSE = "sso.access_token"
# An access token this close to its expiry is not used: it could lapse on the way.
EXPIRY_MARGIN = timedelta(seconds=30)


def keep(identity: ProviderIdentity, answer: Mapping[str, Any]) -> list[str]:
    """Put a token endpoint's answer on the identity (unsaved); the fields changed.

    A refresh token is replaced only by a new one: a provider that does not rotate
    it answers without one."""
    changed = []
    refresh = answer.get("refresh_token")
    if isinstance(refresh, str) and refresh:
        identity.refresh_token = sealing.seal(REFRESH_PURPOSE, refresh)
        changed.append("refresh_token")
    access = answer.get("access_token")
    if isinstance(access, str) and access:
        identity.access_token = sealing.seal(ACCESS_PURPOSE, access)
        identity.access_token_expires_at = _expiry(answer.get("expires_in"))
        changed += ["access_token", "access_token_expires_at"]
    return changed


def forget(identity: ProviderIdentity) -> list[str]:
    """Drop the identity's tokens (unsaved); the fields changed."""
    identity.refresh_token = ""
    identity.access_token = ""
    identity.access_token_expires_at = None
    return ["refresh_token", "access_token", "access_token_expires_at"]


def refresh_token_of(identity: ProviderIdentity) -> str | None:
    """Her refresh token in clear, if one is kept and readable."""
    if not identity.refresh_token:
        return None
    return sealing.unseal(REFRESH_PURPOSE, identity.refresh_token)


def access_token_of(identity: ProviderIdentity) -> str | None:
    """Her access token in clear, if one is kept, readable and not about to expire."""
    expires_at = identity.access_token_expires_at
    if not identity.access_token or expires_at is None:
        return None
    if expires_at <= timezone.now() + EXPIRY_MARGIN:
        return None
    return sealing.unseal(ACCESS_PURPOSE, identity.access_token)


def _expiry(expires_in: object):
    if isinstance(expires_in, int | float) and expires_in > 0:
        return timezone.now() + timedelta(seconds=expires_in)
    return None  # unknown: never used alone, only as the refresh's fresh token
