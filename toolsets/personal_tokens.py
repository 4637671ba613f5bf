"""Personal access tokens to the gateway: issued once in clear, stored as digests.

A token is `tcpat_` and 64 random hex characters (knox's generator); the database
keeps its SHA-512 digest (knox's hash, as for API tokens) and its first characters,
so a copy of the database opens nothing. A token reaches its user's tools within
the toolsets it was made for, until it expires or its user revokes it.
"""

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from knox.crypto import create_token_string, hash_token
from pydantic import Field

from agents.client_input import ClientInput, StoredText
from project.errors import DomainError, NotFoundError
from toolsets.models import GatewayToken, Toolset

PREFIX = "tcpat_"
TOKEN_FORMAT = re.compile(rf"{PREFIX}[0-9a-f]{{64}}")
SHOWN_CHARS = 12
# A user keeps at most this many tokens: enough for every client of a developer.
MAX_TOKENS_PER_USER = 50
DEFAULT_DAYS = 90
MAX_DAYS = 366
# last_used_at is written at most this often: every MCP request, a notification
# included, looks its token up, and a write each time queued them all up.
LAST_USED_EVERY = timedelta(minutes=1)


class TokenInput(ClientInput):
    """A new token: what it is for, its toolsets, and how many days it lives."""

    name: Annotated[StoredText, Field(min_length=1, max_length=100)]
    toolsets: list[Annotated[StoredText, Field(min_length=1, max_length=100)]] = Field(
        min_length=1, max_length=200
    )
    expires_in_days: int = Field(DEFAULT_DAYS, ge=1, le=MAX_DAYS)


class UnknownToolsets(DomainError):
    """A token was asked for toolsets the catalog does not have."""

    code = "unknown_toolsets"
    field = "toolsets"


class TooManyTokens(DomainError):
    """The user already holds MAX_TOKENS_PER_USER tokens."""

    status_code = 409
    code = "too_many_tokens"


@dataclass(frozen=True)
class Issued:
    """A token just made: its row, and the token in clear (shown this once)."""

    row: GatewayToken
    token: str


def is_personal(token: str) -> bool:
    """Does the token look like a personal access token (not an API token)?"""
    return token.startswith(PREFIX)


def issue_token(
    *,
    user: AbstractBaseUser,
    name: str,
    toolsets: Collection[str],
    expires_in: timedelta | None = None,
) -> Issued:
    """A new token for `user`, limited to the named toolsets, for `expires_in`
    (DEFAULT_DAYS if not given)."""
    rows = list(Toolset.objects.filter(name__in=set(toolsets)))
    unknown = set(toolsets) - {row.name for row in rows}
    if unknown:
        raise UnknownToolsets(
            gettext("No such toolsets: %(join_sorted_unknown)s.")
            % {"join_sorted_unknown": ", ".join(sorted(unknown))}
        )
    token = PREFIX + create_token_string()
    expires_at = timezone.now() + (expires_in or timedelta(days=DEFAULT_DAYS))
    with transaction.atomic():
        if GatewayToken.objects.filter(user=user).count() >= MAX_TOKENS_PER_USER:
            raise TooManyTokens(
                gettext(
                    "You hold %(MAX_TOKENS_PER_USER)s tokens already: revoke one first."
                )
                % {"MAX_TOKENS_PER_USER": MAX_TOKENS_PER_USER}
            )
        row = GatewayToken.objects.create(
            user=user,
            name=name,
            digest=hash_token(token),
            prefix=token[:SHOWN_CHARS],
            expires_at=expires_at,
        )
        row.toolsets.set(rows)
    return Issued(row=row, token=token)


def tokens_of(*, user: AbstractBaseUser) -> list[GatewayToken]:
    """The user's tokens, newest first, with their toolsets."""
    return list(GatewayToken.objects.filter(user=user).prefetch_related("toolsets"))


def revoke_token(*, user: AbstractBaseUser, token_id: int) -> None:
    """Revoke one of the user's tokens: it opens nothing from now on."""
    deleted, _ = GatewayToken.objects.filter(user=user, pk=token_id).delete()
    if not deleted:
        raise NotFoundError(gettext("No such token."))


def revoke_tokens(*, user: AbstractBaseUser) -> int:
    """Revoke every token of a user (she left); how many there were."""
    deleted, _ = GatewayToken.objects.filter(user=user).delete()
    return deleted


@dataclass(frozen=True)
class Found:
    """What a valid token opens."""

    pk: int
    user: AbstractBaseUser
    toolsets: frozenset[str]


def lookup(*, token: str) -> Found | None:
    """The active user and toolsets a live token opens, or None."""
    if not TOKEN_FORMAT.fullmatch(token):
        return None
    row = (
        GatewayToken.objects.select_related("user")
        .filter(digest=hash_token(token))
        .first()
    )
    now = timezone.now()
    if row is None or not row.user.is_active:
        return None
    if row.expires_at is not None and row.expires_at <= now:
        return None
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_EVERY:
        GatewayToken.objects.filter(pk=row.pk).update(last_used_at=now)
    names = frozenset(row.toolsets.values_list("name", flat=True))
    return Found(pk=row.pk, user=row.user, toolsets=names)
