"""A provider sign-in's claims made into a Toolcrib user, her profile and her groups.

The rules (docs/permissions.md, "Single sign-on"):

- The provider's issuer and subject (`sub`) name the user, kept in
  ProviderIdentity; never a name or an email, which any account at the provider
  may claim (OpenID Connect Core §5.7). A subject seen for the first time makes a
  new user, named after TOOLCRIB_OIDC_USERNAME_CLAIM but never taking an existing
  user's name, nor one differing from it only by letter case or Unicode form
  (`alice` taken: `alice-2`).
- An existing user is linked only by herself, signed in, through the provider
  (link_signed_in_user: /oidc/link/), or by staff (link_by_staff). A superuser is
  never linked: the embedded `admin` stays out of the provider's reach.
- At every sign-in her email and name follow the claims, her provider-managed
  groups follow TOOLCRIB_OIDC_GROUPS_CLAIM (toolsets.groups.sync_provider_groups),
  and her staff status follows TOOLCRIB_OIDC_STAFF_GROUP when that is set; so do
  they at every re-check against the provider (recheck.py), which keeps the tokens
  her sign-in brought. A user a re-check switched off (the provider no longer let
  her in) is switched on again by her next sign-in; one staff switched off is not.
"""

import logging
import re
import secrets
import unicodedata
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from project.errors import DomainError, ForbiddenError, NotFoundError
from toolsets import groups
from toolsets.models import ProviderIdentity
from toolsets.sso import tokens as provider_tokens

logger = logging.getLogger(__name__)

USERNAME_MAX = 150
# Room for "-<n>" after a claimed name that is taken.
SUFFIX_ROOM = 8
NUMBERED_TRIES = 100
# What Django's username validator allows; anything else becomes a hyphen.
NOT_IN_USERNAME = re.compile(r"[^\w.@+-]+")
PROFILE_CLAIMS = {
    "email": "email",
    "first_name": "given_name",
    "last_name": "family_name",
}


class SignInRefused(ForbiddenError):
    """The provider vouched for someone Toolcrib will not sign in."""

    code = "sign_in_refused"


class LinkConflict(DomainError):
    """The user is linked to another provider account already: unlink her first."""

    status_code = 409
    code = "linked_already"


def sign_in_with_claims(
    *, claims: Mapping[str, Any], tokens: Mapping[str, Any] | None = None
) -> AbstractBaseUser:
    """The user linked to the claims' subject, or a new user at its first sign-in,
    with her profile, groups and staff status brought up to date.

    `tokens`: the token endpoint's answer, kept to re-check her later."""
    issuer = settings.TOOLCRIB_OIDC_ISSUER
    subject = _text_claim(claims, "sub", limit=255)
    with transaction.atomic():
        identity = _identity_for_update(issuer=issuer, subject=subject)
        if identity is None:
            identity = _create_user_and_link(
                issuer=issuer, subject=subject, claims=claims
            )
        _refuse_unusable(identity)
        _signed_in(identity, claims=claims, tokens=tokens)
    logger.info("provider sign-in user=%s", identity.user_id)
    return identity.user


def link_signed_in_user(
    *,
    user: AbstractBaseUser,
    claims: Mapping[str, Any],
    tokens: Mapping[str, Any] | None = None,
) -> AbstractBaseUser:
    """Link the signed-in user to the account at the provider she just signed in
    with (/oidc/link/): her later provider sign-ins are her."""
    check_linkable(user=user)
    issuer = settings.TOOLCRIB_OIDC_ISSUER
    subject = _text_claim(claims, "sub", limit=255)
    with transaction.atomic():
        identity = _identity_for_update(issuer=issuer, subject=subject)
        if identity is not None and identity.user_id != user.pk:
            raise SignInRefused(
                gettext(
                    "This account at %(provider)s is linked to another Toolcrib account (%(identity_user_get_username)s): ask staff to move it."
                )
                % {
                    "provider": _provider(),
                    "identity_user_get_username": identity.user.get_username(),
                }
            )
        if identity is None:
            identity = ProviderIdentity.objects.create(
                user=user,
                issuer=issuer,
                subject=subject,
                linked_by=ProviderIdentity.LinkedBy.USER,
            )
        _refuse_unusable(identity)
        _signed_in(identity, claims=claims, tokens=tokens)
    logger.warning("provider account linked by its user user=%s", user.pk)
    return identity.user


def check_linkable(*, user: AbstractBaseUser) -> None:
    """Refuse (SignInRefused) a user who may not link herself to the provider."""
    if user.is_superuser:
        raise SignInRefused(
            gettext(
                "The account %(user_get_username)s is a superuser: it signs in with its password and is never linked to %(provider)s."
            )
            % {"user_get_username": user.get_username(), "provider": _provider()}
        )
    if ProviderIdentity.objects.filter(
        issuer=settings.TOOLCRIB_OIDC_ISSUER, user=user
    ).exists():
        raise SignInRefused(
            gettext("Your account is linked to an account at %(provider)s already.")
            % {"provider": _provider()}
        )


def link_by_staff(*, user: AbstractBaseUser, subject: str) -> ProviderIdentity:
    """Link a user to the provider's subject, as staff: the subject's next sign-in
    is her. A subject linked to another user moves to her."""
    issuer = settings.TOOLCRIB_OIDC_ISSUER
    if not issuer:
        raise DomainError(
            gettext("Single sign-on is not set up (TOOLCRIB_OIDC_ISSUER).")
        )
    if user.is_superuser:
        raise ForbiddenError(
            gettext(
                "%(user_get_username)s is a superuser: a superuser is never linked to %(provider)s."
            )
            % {"user_get_username": user.get_username(), "provider": _provider()}
        )
    with transaction.atomic():
        mine = ProviderIdentity.objects.filter(issuer=issuer, user=user).first()
        if mine is not None and mine.subject != subject:
            raise LinkConflict(
                gettext(
                    "%(user_get_username)s is linked to the subject %(mine_subject)r already: unlink her first."
                )
                % {
                    "user_get_username": user.get_username(),
                    "mine_subject": mine.subject,
                }
            )
        identity = _identity_for_update(issuer=issuer, subject=subject)
        if identity is None:
            identity = ProviderIdentity(issuer=issuer, subject=subject)
        elif identity.user_id != user.pk:
            logger.warning(
                "provider subject moved by staff from user=%s to user=%s",
                identity.user_id,
                user.pk,
            )
        identity.user = user
        identity.linked_by = ProviderIdentity.LinkedBy.STAFF
        identity.save()
    return identity


def unlink(*, user: AbstractBaseUser) -> None:
    """Unlink a user from the provider: her subject's next sign-in is a new user."""
    deleted, _ = ProviderIdentity.objects.filter(
        issuer=settings.TOOLCRIB_OIDC_ISSUER, user=user
    ).delete()
    if not deleted:
        raise NotFoundError(
            gettext("%(user_get_username)s is not linked to %(provider)s.")
            % {"user_get_username": user.get_username(), "provider": _provider()}
        )


def identity_of(*, user: AbstractBaseUser) -> ProviderIdentity:
    """The user's link to the configured provider, or NotFoundError."""
    identity = ProviderIdentity.objects.filter(
        issuer=settings.TOOLCRIB_OIDC_ISSUER, user=user
    ).first()
    if identity is None:
        raise NotFoundError(
            gettext("%(user_get_username)s is not linked to %(provider)s.")
            % {"user_get_username": user.get_username(), "provider": _provider()}
        )
    return identity


def group_names(claims: Mapping[str, Any]) -> list[str]:
    """The group names the claim carries (a list of names, or one name), each in its
    plain form (toolsets.groups.plain_group_name), once per group_key; others
    skipped."""
    value = claims.get(settings.TOOLCRIB_OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    names: dict[str, str] = {}
    for raw in value:
        if not isinstance(raw, str) or "\x00" in raw:
            continue
        name = groups.plain_group_name(raw)
        if 0 < len(name) <= groups.NAME_MAX:
            names.setdefault(groups.group_key(name), name)
    return list(names.values())


def free_username(claimed: str) -> str:
    """A username for a new user after the claimed one, taken by nobody yet: the
    claim in Unicode's NFKC form, `-2`, `-3`... after it if a user has that name,
    letter case aside."""
    base = _plain_username(claimed)
    User = get_user_model()
    for number in range(1, NUMBERED_TRIES + 1):
        candidate = base if number == 1 else f"{base}-{number}"
        if not User.objects.filter(username__iexact=candidate).exists():
            return candidate
    return f"{base}-{secrets.token_hex(3)}"


def _identity_for_update(*, issuer: str, subject: str) -> ProviderIdentity | None:
    return (
        ProviderIdentity.objects.select_for_update()
        .select_related("user")
        .filter(issuer=issuer, subject=subject)
        .first()
    )


def _create_user_and_link(
    *, issuer: str, subject: str, claims: Mapping[str, Any]
) -> ProviderIdentity:
    claimed = _text_claim(
        claims, settings.TOOLCRIB_OIDC_USERNAME_CLAIM, limit=USERNAME_MAX
    )
    User = get_user_model()
    for _ in range(3):  # another sign-in may take the same free name meanwhile
        try:
            with transaction.atomic():
                user = User.objects.create_user(free_username(claimed))  # no password
                break
        except IntegrityError:
            continue
    else:
        raise SignInRefused(gettext("No username could be found for you: try again."))
    logger.info("provider sign-in created user=%s", user.pk)
    return ProviderIdentity.objects.create(
        user=user,
        issuer=issuer,
        subject=subject,
        linked_by=ProviderIdentity.LinkedBy.CREATED,
    )


def _refuse_unusable(identity: ProviderIdentity) -> None:
    user = identity.user
    if user.is_superuser:
        raise SignInRefused(
            gettext(
                "The account %(user_get_username)s is a superuser: it signs in with its password."
            )
            % {"user_get_username": user.get_username()}
        )
    if not user.is_active and identity.offboarded_at is not None:
        # A re-check switched her off; the provider lets her in again now.
        user.is_active = True
        user.save(update_fields=["is_active"])
        identity.offboarded_at = None
        logger.warning("provider let a switched-off user in again user=%s", user.pk)
    if not user.is_active:
        raise SignInRefused(
            gettext("The account %(user_get_username)s is switched off.")
            % {"user_get_username": user.get_username()}
        )


def _signed_in(
    identity: ProviderIdentity,
    *,
    claims: Mapping[str, Any],
    tokens: Mapping[str, Any] | None,
) -> None:
    now = timezone.now()
    identity.last_sign_in_at = identity.checked_at = now
    changed = ["last_sign_in_at", "checked_at", "offboarded_at"]
    changed += provider_tokens.keep(identity, tokens or {})
    identity.save(update_fields=changed)
    apply_claims(identity.user, claims=claims)


def apply_claims(user: AbstractBaseUser, *, claims: Mapping[str, Any]) -> None:
    """Her profile, provider-managed groups and staff status, as the claims say."""
    names = group_names(claims)
    changed = _profile_changes(user, claims) + _staff_changes(user, names)
    if changed:
        user.save(update_fields=changed)
    groups.sync_provider_groups(user=user, names=names)


def update_profile(user: AbstractBaseUser, *, claims: Mapping[str, Any]) -> None:
    """Her email and names, as the claims say; her groups and staff status stay."""
    changed = _profile_changes(user, claims)
    if changed:
        user.save(update_fields=changed)


def _profile_changes(user, claims: Mapping[str, Any]) -> list[str]:
    changed = []
    for field, claim in PROFILE_CLAIMS.items():
        value = claims.get(claim)
        limit = user._meta.get_field(field).max_length
        if (
            isinstance(value, str)
            and len(value) <= limit
            and value != getattr(user, field)
        ):
            setattr(user, field, value)
            changed.append(field)
    return changed


def _staff_changes(user, names: list[str]) -> list[str]:
    staff_group = settings.TOOLCRIB_OIDC_STAFF_GROUP
    if not staff_group:
        return []
    is_staff = groups.group_key(staff_group) in {groups.group_key(n) for n in names}
    if user.is_staff == is_staff:
        return []
    user.is_staff = is_staff
    return ["is_staff"]


def _plain_username(claimed: str) -> str:
    text = unicodedata.normalize("NFKC", claimed).strip()
    text = NOT_IN_USERNAME.sub("-", text).strip("-")
    return text[: USERNAME_MAX - SUFFIX_ROOM] or "user"


def _text_claim(claims: Mapping[str, Any], name: str, *, limit: int) -> str:
    value = claims.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise SignInRefused(
            gettext("The provider sent no usable %(name)r claim.") % {"name": name}
        )
    if "\x00" in value:
        raise SignInRefused(
            gettext("The provider's %(name)r claim holds a NUL character.")
            % {"name": name}
        )
    return value


def _provider() -> str:
    return settings.TOOLCRIB_OIDC_PROVIDER_NAME
