"""API tokens: issued once in clear, stored only as digests (django-rest-knox).

A token is 64 random hex characters. The database keeps its SHA-512 digest and its
first 15 characters (the lookup key), so a copy of the database opens no account.
HTTP requests (`Authorization: Token <t>`) and sockets (`?token=` or the same header)
check a token the same way, through knox, then its user's account checks
(agents.account_checks: the sign-in provider may have let her go).
"""

import re
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from knox import auth as knox_auth
from knox.models import AuthToken
from rest_framework import exceptions

from agents import account_checks
from project.errors import SignInEnded

# Every token ever issued: knox's hex tokens, and DRF's 40-hex keys that migration
# 0005 carried over. Anything else opens nothing and never reaches a query (a NUL
# in a lookup is a 500 on PostgreSQL).
TOKEN_FORMAT = re.compile(r"[0-9a-f]{1,128}")


def issue_token(*, user: AbstractBaseUser) -> str:
    """A new token for user, in clear: the only time anyone sees it.

    A user keeps at most TOOLCRIB_API_TOKENS_PER_USER tokens: the oldest end first.
    """
    _end_oldest_tokens(user=user, keep=settings.TOOLCRIB_API_TOKENS_PER_USER - 1)
    _, token = AuthToken.objects.create(user=user, expiry=_token_ttl())
    return token


def user_for_token(*, token: str) -> AbstractBaseUser | None:
    """The active user a token belongs to, or None if it opens nothing."""
    try:
        user, _ = TokenAuthentication().authenticate_credentials(token.encode())
    except (exceptions.AuthenticationFailed, UnicodeError):
        return None
    return user


def revoke_tokens(*, user: AbstractBaseUser) -> int:
    """End every API token of a user; how many there were."""
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return deleted


def _token_ttl() -> timedelta | None:
    hours = settings.TOOLCRIB_API_TOKEN_TTL_HOURS
    return timedelta(hours=hours) if hours > 0 else None


def _end_oldest_tokens(*, user: AbstractBaseUser, keep: int) -> None:
    newest = AuthToken.objects.filter(user=user).order_by("-created")
    stale = list(newest.values_list("digest", flat=True)[max(keep, 0) :])
    if stale:
        AuthToken.objects.filter(digest__in=stale).delete()


class TokenAuthentication(knox_auth.TokenAuthentication):
    """knox's token check, refusing (401) what is not a token before any query."""

    def authenticate_credentials(self, token: bytes):
        if not TOKEN_FORMAT.fullmatch(token.decode("latin-1")):
            raise exceptions.AuthenticationFailed("Invalid token.")
        user, auth_token = super().authenticate_credentials(token)
        try:
            account_checks.check_account(user=user)
        except SignInEnded as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from None
        return user, auth_token


class TokenScheme(KnoxTokenScheme):
    """The OpenAPI security scheme of TokenAuthentication: `Authorization: Token <t>`."""

    target_class = "agents.tokens.TokenAuthentication"
    name = "tokenAuth"
