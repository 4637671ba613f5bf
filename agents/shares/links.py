"""Shared links: made by a session's owner, listed, revoked, and opened.

A link is `/shared/<token>/`: 32 random bytes, URL-safe (43 characters). Only the
token's SHA-256 digest is stored (like the API tokens, agents.tokens), so the link
is shown once, when it is made; its owner makes another if she lost it. A link shows
the session as it was when shared: its events up to `upto_seq`, never a later one.

Who may do what: only a session's owner shares it; she and staff list its links,
their openings and revoke them (a revocation by staff is in the change audit). A
link opens to anyone signed in; to anyone at all only if it was made "anyone with
the link" and staff allow such links now (ShareSettings, checked at each opening:
switching it off closes every such link at once). Each opening that reads the
conversation is a ShareView row: who, when, from which address.
"""

import hashlib
import re
import secrets
from datetime import timedelta

from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from agents import changes
from agents.events.log import EVENTS_BATCH, events_after, events_before
from agents.models import Event, Session, Share, ShareSettings, ShareView
from agents.shares.errors import (
    AnyoneNotAllowed,
    ShareGone,
    ShareNotFound,
    SignInRequired,
)
from project.errors import ForbiddenError, NotFoundError

TOKEN_BYTES = 32
# What token_urlsafe(TOKEN_BYTES) writes: anything else is no link, before a query.
TOKEN_FORMAT = re.compile(r"[A-Za-z0-9_-]{43}")
EXPIRY_MAX_DAYS = 365


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def share_settings() -> ShareSettings:
    """The team's sharing settings (unsaved defaults until staff change them)."""
    return ShareSettings.objects.order_by("pk").first() or ShareSettings()


def set_share_settings(*, anyone_with_link: bool) -> ShareSettings:
    """Staff: allow links anyone may open, or not (saved, so the change audit sees
    it when a person acts)."""
    row = share_settings()
    row.anyone_with_link = anyone_with_link
    row.save()
    return row


def create_share(
    *,
    session: Session,
    user,
    expires_in_days: int | None = None,
    anyone: bool = False,
) -> tuple[Share, str]:
    """A new link to `session` as it is now, and its token in clear (the only time).

    Raises:
        ForbiddenError: `user` is not the session's owner (staff included).
        AnyoneNotAllowed: `anyone` asked for while staff do not allow it.
    """
    if session.owner_id != user.pk:
        raise ForbiddenError(_("Only the session's owner may share it."))
    if anyone and not share_settings().anyone_with_link:
        raise AnyoneNotAllowed()
    upto = Event.objects.filter(session=session).aggregate(last=Max("seq"))["last"]
    token = secrets.token_urlsafe(TOKEN_BYTES)
    expires_at = (
        timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
    )
    share = Share.objects.create(
        session=session,
        created_by=user,
        digest=digest_of(token),
        upto_seq=upto or 0,
        anyone=anyone,
        expires_at=expires_at,
    )
    return share, token


def shares_of(*, session: Session) -> QuerySet[Share]:
    """The session's links, newest first, each with its views counted."""
    views = Q(views__kind=ShareView.VIEW)
    return session.shares.annotate(
        view_count=Count("views", filter=views),
        last_viewed_at=Max("views__at", filter=views),
    )


def share_of(*, session: Session, share_id: int) -> Share:
    """One link of the session (shares_of's), or NotFoundError."""
    share = shares_of(session=session).filter(pk=share_id).first()
    if share is None:
        raise NotFoundError(_("No such link of this session."))
    return share


def revoke_share(*, session: Session, share_id: int, user) -> Share:
    """End a link of the session: its owner or staff (whoever reached the session).
    Revoking twice changes nothing."""
    share = share_of(session=session, share_id=share_id)
    if share.revoked_at is None:
        share.revoked_at = timezone.now()
        share.revoked_by = user
        share.save(update_fields=["revoked_at", "revoked_by"])
        if user.pk != session.owner_id:
            changes.record(user, share, "revoke", {"session": session.pk})
    return share


def views_of(*, share: Share) -> QuerySet[ShareView]:
    """Who opened a link and when, newest first."""
    return share.views.select_related("viewer")


def status_of(share: Share) -> str:
    """The link's status: "active", "revoked" or "expired"."""
    if share.revoked_at is not None:
        return "revoked"
    if share.expires_at is not None and share.expires_at <= timezone.now():
        return "expired"
    return "active"


def open_share(*, token: str, user) -> Share:
    """The share `token` opens to `user` (maybe anonymous), checked, not audited.

    Raises:
        ShareNotFound: No link has this token.
        ShareGone: The link was revoked or has expired.
        SignInRequired: `user` is not signed in and the link is not open to anyone.
    """
    if not TOKEN_FORMAT.fullmatch(token):
        raise ShareNotFound()
    rows = Share.objects.select_related("session__agent", "session__owner")
    share = rows.filter(digest=digest_of(token)).first()
    if share is None:
        raise ShareNotFound()
    status = status_of(share)
    if status == "revoked":
        raise ShareGone(_("This link was revoked: the session is no longer shared."))
    if status == "expired":
        raise ShareGone(_("This link has expired: the session is no longer shared."))
    if not user.is_authenticated and not (
        share.anyone and share_settings().anyone_with_link
    ):
        raise SignInRequired()
    return share


def check_share(*, token: str, user) -> None:
    """open_share() for the shared page (project.urls hands it to the frontend)."""
    open_share(token=token, user=user)


def record_view(
    *, share: Share, user, ip: str | None, kind: str = ShareView.VIEW
) -> ShareView:
    """Audit one opening of a link (or a session continued from it)."""
    signed_in = user is not None and user.is_authenticated
    return ShareView.objects.create(
        share=share,
        viewer=user if signed_in else None,
        viewer_name=user.get_username() if signed_in else "",
        ip=ip or None,
        kind=kind,
    )


def shared_events(
    *, share: Share, after: int, before: int | None, paged_back: bool, limit: int
) -> list[Event]:
    """The shared events (seq up to the share's), as the session's own list reads
    them: after a seq, or (paged_back) the page before `before` (None: the newest)."""
    limit = min(limit, EVENTS_BATCH)
    upto = share.upto_seq
    if paged_back:
        bound = upto + 1 if before is None else min(before, upto + 1)
        return events_before(
            session_id=share.session_id, before=bound, after=after, limit=limit
        )
    if after >= upto:
        return []
    rows = events_after(session_id=share.session_id, after=after, limit=limit)
    return [row for row in rows if row.seq <= upto]
