"""A provider sign-in's claims made into a Toolcrib user, her profile and her groups.

The rules (docs/permissions.md, "Single sign-on"):

- The provider's subject (`sub`) names the user. Her first sign-in links the
  Toolcrib user of the same username (TOOLCRIB_OIDC_USERNAME_CLAIM) when one exists
  and is not linked yet, or creates one without a usable password. A superuser is
  never linked by name: the embedded `admin` stays out of the provider's reach.
- At every sign-in her email and name follow the claims, her provider-managed
  groups follow TOOLCRIB_OIDC_GROUPS_CLAIM (toolsets.groups.sync_provider_groups),
  and her staff status follows TOOLCRIB_OIDC_STAFF_GROUP when that is set.
"""

import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from project.errors import ForbiddenError
from toolsets import groups
from toolsets.models import ProviderIdentity

logger = logging.getLogger(__name__)

USERNAME_MAX = 150
PROFILE_CLAIMS = {
    "email": "email",
    "first_name": "given_name",
    "last_name": "family_name",
}


class SignInRefused(ForbiddenError):
    """The provider vouched for someone Toolcrib will not sign in."""

    code = "sign_in_refused"


def sign_in_with_claims(*, claims: Mapping[str, Any]) -> AbstractBaseUser:
    """The user the provider's claims name, created or linked at her first sign-in,
    with her profile, groups and staff status brought up to date."""
    issuer = settings.TOOLCRIB_OIDC_ISSUER
    subject = _text_claim(claims, "sub", limit=255)
    with transaction.atomic():
        identity = (
            ProviderIdentity.objects.select_for_update()
            .select_related("user")
            .filter(issuer=issuer, subject=subject)
            .first()
        )
        if identity is None:
            identity = _link(issuer=issuer, subject=subject, claims=claims)
        user = identity.user
        if not user.is_active:
            raise SignInRefused(f"The account {user.get_username()} is switched off.")
        identity.last_sign_in_at = timezone.now()
        identity.save(update_fields=["last_sign_in_at"])
        names = group_names(claims)
        _update_user(user, claims=claims, names=names)
        groups.sync_provider_groups(user=user, names=names)
    logger.info("provider sign-in user=%s", user.pk)
    return user


def group_names(claims: Mapping[str, Any]) -> list[str]:
    """The group names the claim carries: a list of names, or one name; others skipped."""
    value = claims.get(settings.TOOLCRIB_OIDC_GROUPS_CLAIM)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [
        name
        for name in value
        if isinstance(name, str)
        and 0 < len(name) <= groups.NAME_MAX
        and "\x00" not in name
    ]


def _link(*, issuer: str, subject: str, claims: Mapping[str, Any]) -> ProviderIdentity:
    claim = settings.TOOLCRIB_OIDC_USERNAME_CLAIM
    username = _text_claim(claims, claim, limit=USERNAME_MAX)
    User = get_user_model()
    user = User.objects.select_for_update().filter(username=username).first()
    if user is None:
        user = User.objects.create_user(username)  # no usable password
    elif user.is_superuser:
        raise SignInRefused(
            f"The account {username} is a superuser: it signs in with its password."
        )
    elif ProviderIdentity.objects.filter(issuer=issuer, user=user).exists():
        raise SignInRefused(
            f"The account {username} belongs to another account at the provider."
        )
    return ProviderIdentity.objects.create(
        user=user, issuer=issuer, subject=subject, last_sign_in_at=timezone.now()
    )


def _update_user(user, *, claims: Mapping[str, Any], names: list[str]) -> None:
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
    staff_group = settings.TOOLCRIB_OIDC_STAFF_GROUP
    if staff_group and user.is_staff != (staff_group in names):
        user.is_staff = staff_group in names
        changed.append("is_staff")
    if changed:
        user.save(update_fields=changed)


def _text_claim(claims: Mapping[str, Any], name: str, *, limit: int) -> str:
    value = claims.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise SignInRefused(f"The provider sent no usable {name!r} claim.")
    if "\x00" in value:
        raise SignInRefused(f"The provider's {name!r} claim holds a NUL character.")
    return value
