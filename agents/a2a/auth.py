"""Who calls the A2A edge: a bearer token made a principal, a Toolcrib user.

The token is read by TOOLCRIB_A2A_AUTHENTICATOR (the gateway's rule: an API
token, or an access token of the OpenID Connect provider), so the runtime never
imports governance. A task then runs as a turn of that user: her grants,
conditions, approvals and budget apply, and the audit names her.

A credential made for some toolsets only (a personal access token, an access
token with `toolset:` scopes) is refused: a turn reaches every tool its user may
use, which is more than such a credential was given.
"""

from collections.abc import Iterable

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils.module_loading import import_string

from project.errors import DomainError

BEARER = b"bearer "
REFUSED = (
    "The bearer token was refused: send Authorization: Bearer <token>, a Toolcrib "
    "API token or an access token of the sign-in provider."
)
NARROW = (
    "This token reaches some toolsets only: an A2A task runs as a turn that may use "
    "all your tools. Use an API token, or an access token without toolset scopes."
)


class PrincipalRefused(DomainError):
    """No token, or one that does not open the A2A edge (401)."""

    status_code = 401
    code = "not_authenticated"


def bearer_token(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The token of an `Authorization: Bearer <t>` header, if there is one."""
    for name, value in headers:
        if name.lower() == b"authorization" and value[:7].lower() == BEARER:
            token = value[7:].strip()
            return token.decode("latin-1") if token else None
    return None


def authenticate(*, token: str | None) -> AbstractBaseUser:
    """The user a bearer token speaks for, or PrincipalRefused."""
    if not token:
        raise PrincipalRefused(REFUSED)
    try:
        caller = import_string(settings.TOOLCRIB_A2A_AUTHENTICATOR)(token=token)
    except DomainError as exc:  # refused, or the provider unavailable
        raise PrincipalRefused(str(exc) or REFUSED) from None
    if getattr(caller, "toolsets", None) is not None:
        raise PrincipalRefused(NARROW)
    return caller.user


async def aauthenticate(*, token: str | None) -> AbstractBaseUser:
    """See authenticate()."""
    return await database_sync_to_async(authenticate)(token=token)
