"""Users as staff change them: created with a password, switched off and on, made
staff or not, their names and email; what single sign-on owns stays the provider's.

The rules, each a refusal with the field at fault:
- nobody switches herself off or takes her own staff rights (she would lose the
  page she acts from), and nobody leaves the team without an active staff member;
- only a superuser changes a superuser's standing;
- for a user linked to the sign-in provider, her names and email follow its claims
  at each sign-in (toolsets.sso.accounts) and her staff status follows
  TOOLCRIB_OIDC_STAFF_GROUP when that is set: those fields are the provider's, and
  she has no password here to set.

A user switched off stops at once on every credential: her web sessions (Django's
backends refuse an inactive user), her API tokens and open sockets
(agents.accounts.end_access) and her gateway tokens (revoked). Switched on again,
she signs in anew and makes new tokens.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils.translation import gettext as _

from agents.accounts import end_access
from project.errors import DomainError, ForbiddenError
from toolsets import groups as group_rules
from toolsets import personal_tokens
from toolsets.models import ProviderIdentity

# The fields a staff change may set (PATCH /api/users/{username}/).
CHANGEABLE = ("is_active", "is_staff", "email", "first_name", "last_name")
PROFILE_FIELDS = ("email", "first_name", "last_name")


class UserRefused(DomainError):
    """A change to a user that the rules above refuse, naming its field."""

    code = "user_refused"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class PasswordsOff(ForbiddenError):
    """Passwords are switched off: people join through the sign-in provider."""

    code = "password_sign_in_off"

    def __init__(self) -> None:
        super().__init__(
            _(
                "Passwords are switched off (TOOLCRIB_PASSWORD_LOGIN): people join by signing in with %(settings_TOOLCRIB_OIDC_PROVIDER_NAME)s."
            )
            % {
                "settings_TOOLCRIB_OIDC_PROVIDER_NAME": settings.TOOLCRIB_OIDC_PROVIDER_NAME
            }
        )


def check_passwords_on() -> None:
    """Refuse a password account where passwords are switched off."""
    if not settings.TOOLCRIB_PASSWORD_LOGIN:
        raise PasswordsOff()


def is_linked(user: AbstractBaseUser) -> bool:
    """Does she sign in through the OpenID Connect provider?"""
    return ProviderIdentity.objects.filter(user=user).exists()


def provider_fields(*, user: AbstractBaseUser, linked: bool | None = None) -> list[str]:
    """The fields of hers the sign-in provider owns (none if she is not linked)."""
    if not (is_linked(user) if linked is None else linked):
        return []
    owned = [*PROFILE_FIELDS, "password"]
    if settings.TOOLCRIB_OIDC_STAFF_GROUP:
        owned.append("is_staff")
    return owned


@transaction.atomic
def create_user(
    *,
    username: str,
    password: str,
    email: str = "",
    first_name: str = "",
    last_name: str = "",
    is_staff: bool = False,
    groups: Iterable[Group] = (),
) -> AbstractBaseUser:
    """A new active user with a password (already validated at the edge)."""
    check_passwords_on()
    users = get_user_model().objects
    if users.filter(username__iexact=username).exists():
        raise UserRefused(
            _("A user with that username already exists."), field="username"
        )
    check_email_free(email)
    user = users.create_user(
        username=username,
        password=password,
        email=email,
        first_name=first_name,
        last_name=last_name,
        is_staff=is_staff,
    )
    for group in groups:
        group_rules.add_member(group=group, user=user)
    return user


def check_email_free(email: str, *, user: AbstractBaseUser | None = None) -> None:
    """UserRefused (on `email`) when another user has `email`, in any case: one
    address, one person, so an invitation or a sign-in finds her."""
    if not email:
        return
    others = get_user_model().objects.filter(email__iexact=email)
    if user is not None:
        others = others.exclude(pk=user.pk)
    holder = others.values_list("username", flat=True).first()
    if holder is not None:
        raise UserRefused(
            _("%(holder)s has this email already.") % {"holder": holder}, field="email"
        )


def change_user(
    *, actor: AbstractBaseUser, user: AbstractBaseUser, changes: Mapping[str, Any]
) -> AbstractBaseUser:
    """Apply a staff change to a user under the rules above; ends her access at
    once when it switches her off."""
    wanted = {field: value for field, value in changes.items() if field in CHANGEABLE}
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=user.pk)
        changed = [f for f, value in wanted.items() if getattr(user, f) != value]
        _check(actor=actor, user=user, wanted={f: wanted[f] for f in changed})
        if "email" in changed:
            check_email_free(wanted["email"], user=user)
        if not changed:
            return user
        for field in changed:
            setattr(user, field, wanted[field])
        user.save(update_fields=changed)
        switched_off = "is_active" in changed and not user.is_active
        if switched_off:
            personal_tokens.revoke_tokens(user=user)
    if switched_off:
        end_access(user=user)  # committed: a reconnect is refused too
    return user


def _check(*, actor, user, wanted: Mapping[str, Any]) -> None:
    for field in provider_fields(user=user):
        if field in wanted:
            raise UserRefused(
                _(
                    "%(settings_TOOLCRIB_OIDC_PROVIDER_NAME)s sets this for her at each sign-in: change it there."
                )
                % {
                    "settings_TOOLCRIB_OIDC_PROVIDER_NAME": settings.TOOLCRIB_OIDC_PROVIDER_NAME
                },
                field=field,
            )
    standing = [f for f in ("is_active", "is_staff") if f in wanted]
    for field in standing:
        if user.is_superuser and not actor.is_superuser:
            raise UserRefused(_("Only a superuser changes a superuser."), field=field)
        if wanted[field] is False and user.pk == actor.pk:
            what = "switch yourself off" if field == "is_active" else "unmake yourself"
            raise UserRefused(
                _("You cannot %(what)s: ask another staff member.") % {"what": what},
                field=field,
            )
    removed = [f for f in standing if wanted[f] is False]
    if removed and _last_staff(user):
        raise UserRefused(
            _("She is the last active staff member: make someone else staff first."),
            field=removed[0],
        )


def _last_staff(user: AbstractBaseUser) -> bool:
    if not (user.is_staff and user.is_active):
        return False
    # Locked: two staff switching each other off at once leave one of them.
    others = (
        get_user_model()
        .objects.select_for_update()
        .filter(is_staff=True, is_active=True)
        .exclude(pk=user.pk)
    )
    return not list(others.values_list("pk", flat=True))
