"""Re-checking a linked user against the provider, so that a person removed or
demoted there loses access and staff rights here within a bounded time.

Every credential of a signed-in user (web session, API token, socket, gateway
token, the provider's own access token at /mcp) passes agents.account_checks,
which calls check_account. Once her last check is TOOLCRIB_SSO_RECHECK_SECONDS
old, the request asks the provider about her before it goes on, with the refresh
token her sign-in brought (grant_type=refresh_token, then userinfo with the fresh
access token; with no refresh token, userinfo with her access token while it is
valid). What the provider answers:

- her claims: her profile follows them, and her provider-managed groups and staff
  status too when they carry the group claim (a provider that puts groups only in
  the sign-in's ID token leaves them as they are);
- `invalid_grant`: it no longer knows her, or no longer lets her in. She is
  off-boarded: switched off, her password made unusable (which ends every web
  session of hers), her API and gateway tokens revoked, her provider-managed
  groups and staff status removed. Her next sign-in, if the provider lets her in
  again, switches her on (accounts.py);
- nothing to ask with (no refresh token, no valid access token: a sign-in before
  this check existed, or a provider that issues no refresh token), or userinfo
  refusing her access token: she signs in again (SignInEnded); nothing is revoked;
- no answer (network error, a 5xx, Toolcrib's client refused): nothing changes and
  her access goes on with what was last known; it is logged, counted
  (toolcrib_sso_rechecks_total{outcome="unreachable"}) and asked again after
  RETRY_SECONDS. Meanwhile this process asks the provider about nobody: during an
  outage each user's request would otherwise wait out a timeout of its own.

A superuser is never checked: she signs in with her password, never the provider's.

One request checks her at a time (a compare-and-set on `checked_at`); others go on
meanwhile, so the bound is TOOLCRIB_SSO_RECHECK_SECONDS plus one check's time.
"""

import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from agents.accounts import revoke_tokens
from project import metrics
from project.errors import SignInEnded
from toolsets import groups
from toolsets import personal_tokens as gateway_tokens
from toolsets.models import ProviderIdentity
from toolsets.sso import accounts, discovery
from toolsets.sso import tokens as provider_tokens
from toolsets.sso.backend import IDTokenRefused, ProviderBackend

logger = logging.getLogger(__name__)

# After the provider did not answer, asked again this many seconds later at most.
RETRY_SECONDS = 60
USER_FIELDS = ["is_active", "is_staff", "email", "first_name", "last_name"]

# User id -> when this process last found her checked recently, or unlinked: her
# next requests within TOOLCRIB_SSO_RECHECK_SECONDS skip the query.
_recent: dict[int, float] = {}
# Until when (time.time()) this process leaves the provider alone: it did not answer.
_silent_until = 0.0


class ProviderForgot(Exception):
    """The provider refused her refresh token (invalid_grant)."""


class NothingToAsk(Exception):
    """No usable token to ask the provider about her: she signs in again."""


class ProviderSilent(Exception):
    """The provider did not answer as expected."""


@dataclass(frozen=True)
class Answer:
    claims: dict[str, Any]
    tokens: dict[str, Any]


def check_account(*, user: AbstractBaseUser) -> None:
    """TOOLCRIB_ACCOUNT_CHECKS' check of a linked user: the provider is asked about
    her once her last check is TOOLCRIB_SSO_RECHECK_SECONDS old.

    Raises:
        SignInEnded: the provider no longer lets her in, or she must sign in again.
    """
    if not settings.TOOLCRIB_OIDC_ISSUER or not user.is_authenticated:
        return
    every = settings.TOOLCRIB_SSO_RECHECK_SECONDS
    now = time.time()
    if user.is_superuser or now - _recent.get(user.pk, float("-inf")) < every:
        return
    if now < _silent_until:
        return  # the provider did not answer a moment ago: the last known state holds
    identity = ProviderIdentity.objects.filter(
        issuer=settings.TOOLCRIB_OIDC_ISSUER, user_id=user.pk
    ).first()
    if identity is None:
        _recent[user.pk] = time.time()
        return
    if not is_due(identity):
        _recent[user.pk] = identity.checked_at.timestamp()
        return
    recheck(identity=identity)
    user.refresh_from_db(fields=USER_FIELDS)  # this request sees what it found


def is_due(identity: ProviderIdentity) -> bool:
    """Is her last check TOOLCRIB_SSO_RECHECK_SECONDS old (or has she none)?"""
    every = timedelta(seconds=settings.TOOLCRIB_SSO_RECHECK_SECONDS)
    return identity.checked_at is None or identity.checked_at <= timezone.now() - every


def recheck(*, identity: ProviderIdentity) -> None:
    """Ask the provider about her now and act on its answer (see the module).

    Raises:
        SignInEnded: she was off-boarded, or must sign in again.
    """
    started = identity.checked_at
    now = timezone.now()
    claimed = ProviderIdentity.objects.filter(
        pk=identity.pk, checked_at=started
    ).update(checked_at=now)
    if not claimed:
        return  # another request checks her right now: the last known state holds
    try:
        answer = _ask_provider(identity)
    except ProviderForgot as exc:
        offboard(identity=identity, reason=str(exc))
        _count("offboarded")
        raise SignInEnded(
            _(
                "%(settings_TOOLCRIB_OIDC_PROVIDER_NAME)s no longer lets this account in: it is switched off."
            )
            % {
                "settings_TOOLCRIB_OIDC_PROVIDER_NAME": settings.TOOLCRIB_OIDC_PROVIDER_NAME
            }
        ) from None
    except NothingToAsk as exc:
        ProviderIdentity.objects.filter(pk=identity.pk).update(checked_at=started)
        logger.info(
            "provider re-check: sign in again user=%s (%s)", identity.user_id, exc
        )
        _count("sign_in_again")
        raise SignInEnded(
            _(
                "Your sign-in with %(settings_TOOLCRIB_OIDC_PROVIDER_NAME)s has ended: sign in again."
            )
            % {
                "settings_TOOLCRIB_OIDC_PROVIDER_NAME": settings.TOOLCRIB_OIDC_PROVIDER_NAME
            }
        ) from None
    except ProviderSilent as exc:
        wait = min(RETRY_SECONDS, settings.TOOLCRIB_SSO_RECHECK_SECONDS)
        retry = now - timedelta(seconds=settings.TOOLCRIB_SSO_RECHECK_SECONDS - wait)
        ProviderIdentity.objects.filter(pk=identity.pk).update(checked_at=retry)
        _leave_provider_alone(seconds=wait)
        logger.warning(
            "provider re-check: no answer, last known state kept user=%s: %s",
            identity.user_id,
            exc,
        )
        _count("unreachable")
        return
    _apply(identity, answer)
    _count("current")


def offboard(*, identity: ProviderIdentity, reason: str) -> None:
    """Switch off a user the provider no longer lets in: every session of hers ends,
    her tokens are revoked, her provider-managed groups and staff status removed."""
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=identity.user_id)
        user.is_active = False
        user.is_staff = False
        # A new password hash: every session's auth hash stops matching.
        user.set_unusable_password()
        user.save(update_fields=["is_active", "is_staff", "password"])
        groups.sync_provider_groups(user=user, names=[])
        api_tokens = revoke_tokens(user=user)
        gateway = gateway_tokens.revoke_tokens(user=user)
        identity.offboarded_at = timezone.now()
        changed = ["offboarded_at", *provider_tokens.forget(identity)]
        identity.save(update_fields=changed)
    _recent.pop(user.pk, None)
    logger.warning(
        "provider no longer lets user=%s in (%s): switched off, %s API and %s "
        "gateway tokens revoked",
        user.pk,
        reason,
        api_tokens,
        gateway,
    )


def forget_recent_checks() -> None:
    """Forget which users this process found checked recently, and that the
    provider did not answer (for tests)."""
    global _silent_until
    _recent.clear()
    _silent_until = 0.0


def _leave_provider_alone(*, seconds: float) -> None:
    global _silent_until
    _silent_until = time.time() + seconds


def _ask_provider(identity: ProviderIdentity) -> Answer:
    try:
        backend = ProviderBackend.for_provider()
    except discovery.ProviderUnavailable as exc:
        raise ProviderSilent(str(exc)) from None
    refresh = provider_tokens.refresh_token_of(identity)
    if refresh:
        return _refreshed(backend, identity, refresh)
    access = provider_tokens.access_token_of(identity)
    if not access:
        raise NothingToAsk("no refresh token, no valid access token")
    try:
        claims = backend.get_userinfo(access, None, {"sub": identity.subject})
    except requests.HTTPError as exc:
        if exc.response is not None and exc.response.status_code == 401:
            raise NothingToAsk("userinfo refused her access token") from None
        raise ProviderSilent(f"userinfo: {exc}") from None
    except (requests.RequestException, SuspiciousOperation, ValueError) as exc:
        raise ProviderSilent(f"userinfo: {exc}") from None
    return Answer(claims=claims, tokens={})


def _refreshed(backend: ProviderBackend, identity: ProviderIdentity, refresh: str):
    try:
        answer = backend.get_token(
            {
                "client_id": settings.OIDC_RP_CLIENT_ID,
                "client_secret": settings.OIDC_RP_CLIENT_SECRET,
                "grant_type": "refresh_token",
                "refresh_token": refresh,
            }
        )
    except requests.HTTPError as exc:
        if _error_code(exc.response) == "invalid_grant":
            raise ProviderForgot(_error_text(exc.response)) from None
        raise ProviderSilent(f"refresh: {exc}") from None
    except (requests.RequestException, ValueError) as exc:
        raise ProviderSilent(f"refresh: {exc}") from None
    access = answer.get("access_token") if isinstance(answer, dict) else None
    if not isinstance(access, str) or not access:
        raise ProviderSilent("refresh: the answer holds no access token")
    id_token = answer.get("id_token")
    try:
        payload = (
            backend.verify_refreshed_id_token(id_token, subject=identity.subject)
            if isinstance(id_token, str)
            else {"sub": identity.subject}
        )
        claims = backend.get_userinfo(access, id_token, payload)
    except (
        IDTokenRefused,
        requests.RequestException,
        SuspiciousOperation,
        ValueError,
    ) as exc:
        raise ProviderSilent(f"after the refresh: {exc}") from None
    return Answer(claims=claims, tokens=answer)


def _apply(identity: ProviderIdentity, answer: Answer) -> None:
    with transaction.atomic():
        identity = ProviderIdentity.objects.select_related("user").get(pk=identity.pk)
        changed = provider_tokens.keep(identity, answer.tokens)
        if changed:
            identity.save(update_fields=changed)
        if settings.TOOLCRIB_OIDC_GROUPS_CLAIM in answer.claims:
            accounts.apply_claims(identity.user, claims=answer.claims)
        else:
            accounts.update_profile(identity.user, claims=answer.claims)


def _error_code(response) -> str | None:
    try:
        body = response.json()
    except (AttributeError, ValueError):
        return None
    return body.get("error") if isinstance(body, dict) else None


def _error_text(response) -> str:
    try:
        body = response.json()
    except (AttributeError, ValueError):
        return "invalid_grant"
    description = body.get("error_description") if isinstance(body, dict) else None
    return f"invalid_grant: {description}" if description else "invalid_grant"


def _count(outcome: str) -> None:
    metrics.count_sso_recheck(outcome=outcome)
