"""Who is calling the gateway: a bearer token made a Caller.

Three kinds of token open the gateway, all sent as `Authorization: Bearer <t>`:
a user's API token (`POST /api/auth/token/`, agents/tokens.py), which reaches every
tool the user may use; a personal access token (toolsets/personal_tokens.py), which
reaches only the toolsets it was made for; and, when the gateway is an OAuth protected resource,
an access token of the OpenID Connect provider (oauth.py), which reaches the tools
of the user it speaks for within the toolsets its `toolset:<name>` scopes name (all
of them when it has no such scope). Anything else is refused before the MCP server
sees the request (TokenRefused: 401), as is a token whose user fails her account
checks (agents.account_checks: the sign-in provider no longer lets her in).
"""

from collections.abc import Iterable
from dataclasses import dataclass

from channels.db import database_sync_to_async
from django.contrib.auth.models import AbstractBaseUser

from agents.accounts import account_checks, user_for_token
from project.errors import SignInEnded
from toolsets import personal_tokens
from toolsets.gateway import oauth
from toolsets.gateway.oauth import TokenRefused

BEARER = b"bearer "


@dataclass(frozen=True)
class Caller:
    """A user, through one credential: `toolsets` is None for an API token, or an
    access token without toolset scopes (all the user's tools), or the toolsets a
    personal access token was made for, or an access token's scopes name."""

    user: AbstractBaseUser
    credential: str  # who the MCP session belongs to: one credential of one user
    toolsets: frozenset[str] | None = None

    def may_reach(self, toolset: str) -> bool:
        """Does this credential reach the toolset at all (before any grant)?

        The one rule for every kind of credential: tools/list offers, and
        tools/call finds, only tools of the toolsets it reaches (catalog.py)."""
        return self.toolsets is None or toolset in self.toolsets


def bearer_token(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The token of an `Authorization: Bearer <t>` header, if there is one."""
    for name, value in headers:
        if name.lower() == b"authorization" and value[:7].lower() == BEARER:
            token = value[7:].strip()
            return token.decode("latin-1") if token else None
    return None


REFUSED = (
    "The bearer token was refused: send Authorization: Bearer <token>, an API "
    "token or a personal access token that is not revoked or expired."
)


def authenticate(*, token: str) -> Caller:
    """The Caller a token opens, or TokenRefused (unknown, revoked, expired,
    inactive, refused by an account check, or an access token that does not
    verify)."""
    caller = _caller(token)
    try:
        account_checks.check_account(user=caller.user)
    except SignInEnded as exc:
        raise TokenRefused(str(exc)) from None
    return caller


def _caller(token: str) -> Caller:
    if personal_tokens.is_personal(token):
        found = personal_tokens.lookup(token=token)
        if found is None:
            raise TokenRefused(REFUSED)
        return Caller(
            user=found.user,
            credential=f"pat:{found.pk}",
            toolsets=frozenset(found.toolsets),
        )
    if oauth.is_access_token(token):
        grant = oauth.verify_access_token(token=token)
        # One MCP session per user and client: a refreshed token keeps it.
        credential = f"oauth:{grant.identity_id}:{grant.client_id}"
        return Caller(user=grant.user, credential=credential, toolsets=grant.toolsets)
    # An API token: agents.tokens runs the account checks.
    user = user_for_token(token=token)
    if user is None:
        raise TokenRefused(REFUSED)
    return Caller(user=user, credential=f"token:{token[:15]}")


async def aauthenticate(*, token: str) -> Caller:
    """See authenticate()."""
    return await database_sync_to_async(authenticate)(token=token)
