"""Invitations: a link that makes one account, once, before it expires.

Staff choose what the account gets (staff or not, its groups); the invitee chooses
her username and password on the page the link opens (page.py). The link's token
is shown once, to the staff member who made it, and mailed when an SMTP server is
configured and an address given; only its SHA-256 digest is stored. A forged,
used, withdrawn or expired link is refused with a page and changes nothing.
"""

import hashlib
import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, Group
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from agents import changes
from project.errors import DomainError, NotFoundError
from toolsets.models import Invite
from toolsets.people import users

logger = logging.getLogger(__name__)

TOKEN_BYTES = 32
# What a token looks like: anything else is refused before any query.
TOKEN_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)
TOKEN_MAX = 64
DAYS_DEFAULT = 7
DAYS_MAX = 30


class InviteRefused(DomainError):
    """This link makes no account: unknown, used, withdrawn or expired."""

    status_code = 410
    code = "invite_refused"


@dataclass(frozen=True)
class Issued:
    """A new invitation and its token, in clear: the only time anyone sees it."""

    invite: Invite
    token: str


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_invite(
    *,
    by: AbstractBaseUser,
    email: str = "",
    is_staff: bool = False,
    groups: Iterable[Group] = (),
    days: int = DAYS_DEFAULT,
) -> Issued:
    """A new invitation, valid for `days` days."""
    users.check_passwords_on()
    users.check_email_free(email)
    _check_no_pending(email)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    with transaction.atomic():
        invite = Invite.objects.create(
            digest=digest_of(token),
            email=email,
            is_staff=is_staff,
            created_by=by,
            expires_at=timezone.now() + timedelta(days=days),
        )
        groups = list(groups)
        invite.groups.set(groups)
        if groups:  # many-to-many: no save the audit sees
            names = sorted(group.name for group in groups)
            changes.record(by, invite, "groups", {"groups": [None, names]})
    return Issued(invite=invite, token=token)


def _check_no_pending(email: str) -> None:
    if email and pending_rows().filter(email__iexact=email).exists():
        raise users.UserRefused(
            gettext(
                "An invitation to this email is waiting already: withdraw it to send "
                "a new one."
            ),
            field="email",
        )


def pending_rows():
    """The invitations neither used nor expired, as a query."""
    return Invite.objects.filter(used_at__isnull=True, expires_at__gt=timezone.now())


def pending() -> list[Invite]:
    """Invitations neither used nor expired, newest first."""
    rows = pending_rows()
    return list(rows.select_related("created_by").prefetch_related("groups"))


def withdraw(*, invite_id: int) -> None:
    """Withdraw an unused invitation: its link opens nothing from now on."""
    deleted, _ = Invite.objects.filter(pk=invite_id, used_at__isnull=True).delete()
    if not deleted:
        raise NotFoundError(gettext("No such unused invitation."))


def check(*, token: str) -> Invite:
    """The invitation a link opens, or InviteRefused."""
    invite = _find(token, lock=False)
    _refuse_spent(invite)
    return invite


def accept(*, token: str, username: str, password: str) -> AbstractBaseUser:
    """Make the invited account (username and password validated at the edge); the
    link is spent. Two tabs racing: the second is refused, nothing made twice."""
    with transaction.atomic():
        invite = _find(token, lock=True)
        _refuse_spent(invite)
        groups = list(invite.groups.all())
        user = users.create_user(
            username=username,
            password=password,
            email=invite.email,
            is_staff=invite.is_staff,
            groups=groups,
        )
        # Nobody was signed in: the audit names her, made by the invitation.
        joined = {
            "username": [None, user.username],
            "email": [None, user.email or None],
            "is_staff": [None, user.is_staff],
            "groups": [None, sorted(group.name for group in groups)],
            "invite": [None, invite.pk],
        }
        changes.record(user, user, "create", joined)
        with changes.acting_as(user):
            invite.used_at = timezone.now()
            invite.used_by = user
            invite.save(update_fields=["used_at", "used_by"])
    return user


def mail_invite(*, invite: Invite, link: str) -> bool:
    """Mail the link to the invitation's address; False if no mail goes (no SMTP
    server configured, no address, or the server refused: the link is shown to
    staff all the same)."""
    if not (settings.EMAIL_HOST and invite.email):
        return False
    inviter = invite.created_by.get_username() if invite.created_by else "Staff"
    text = (
        f"{inviter} invites you to Toolcrib.\n\n"
        f"Choose your username and password here:\n{link}\n\n"
        f"The link works once, until {invite.expires_at:%Y-%m-%d %H:%M} UTC."
    )
    try:
        send_mail("Your Toolcrib invitation", text, None, [invite.email])
    except OSError:
        logger.warning("invite mail failed invite=%s", invite.pk, exc_info=True)
        return False
    return True


def _find(token: str, *, lock: bool) -> Invite:
    if not token or len(token) > TOKEN_MAX or not set(token) <= TOKEN_CHARS:
        raise InviteRefused(gettext("This invitation link is not one Toolcrib made."))
    rows = Invite.objects.select_for_update() if lock else Invite.objects
    invite = rows.filter(digest=digest_of(token)).first()
    if invite is None:
        raise InviteRefused(
            gettext(
                "This invitation link is not one Toolcrib made, or it was withdrawn."
            )
        )
    return invite


def _refuse_spent(invite: Invite) -> None:
    if invite.used_at is not None:
        raise InviteRefused(
            gettext("This invitation was used already: sign in instead.")
        )
    if invite.expires_at <= timezone.now():
        raise InviteRefused(
            gettext("This invitation has expired: ask staff for a new one.")
        )
