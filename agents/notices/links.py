"""Approve / reject links in a notice: one-time, bound, expiring, refused clearly.

A link is a random token; only its SHA-256 digest is stored (NoticeLink), bound
to one request, one approver and one decision, and expiring with its request
(at most TOOLCRIB_NOTICE_LINK_MAX_AGE after it was made). Opening it (GET)
decides nothing: mail scanners open links. Its page's form POSTs, and decide()
answers through the one answer path (agents.answers.answer.answer_by_id) as
the link's approver, who must still be allowed by the one rule. Once a link of a
person's decides, every link of hers for that request is used.

With TOOLCRIB_NOTICE_LINKS_SIGN_IN (the default) the approver must be signed in
as herself; off, the link alone is her word.
"""

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.answers.answer import answer_by_id
from agents.models import Delivery, NoticeLink, Request
from agents.notices.errors import (
    LinkExpired,
    LinkForSomeoneElse,
    LinkNotFound,
    LinkUsed,
    NoLongerAllowed,
    RequestEnded,
)
from agents.requests import rules

TOKEN_BYTES = 32
# What a token looks like: token_urlsafe's alphabet and length, nothing else.
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
PATH = "/notices/links/"


@dataclass(frozen=True)
class Links:
    """A notice's two links, absolute."""

    approve: str
    reject: str


def issue(*, delivery: Delivery) -> Links | None:
    """New approve / reject links of `delivery`'s request for its recipient; None
    if it is no approval, or tells no one person (a team's destination)."""
    request = delivery.request
    if request.kind != Request.Kind.APPROVAL or delivery.recipient_id is None:
        return None
    expires_at = _expiry(request)
    urls = {}
    for approved in (True, False):
        token = secrets.token_urlsafe(TOKEN_BYTES)
        NoticeLink.objects.create(
            digest=_digest(token),
            request=request,
            user_id=delivery.recipient_id,
            approved=approved,
            expires_at=expires_at,
        )
        urls[approved] = f"{settings.TOOLCRIB_PUBLIC_URL}{PATH}{token}/"
    return Links(approve=urls[True], reject=urls[False])


def check(*, token: str, viewer) -> NoticeLink:
    """The link of `token` if it may decide now, as `viewer` opened it; else the
    refusal that says why. Changes nothing."""
    link = _find(NoticeLink.objects, token)
    _refuse_unless_usable(link, viewer)
    return link


def decide(*, token: str, viewer, comment: str = "") -> NoticeLink:
    """Decide the link's request as its approver, once; the link and its twins
    are used. A refusal changes nothing."""
    with transaction.atomic():
        link = _find(NoticeLink.objects.select_for_update(of=("self",)), token)
        _refuse_unless_usable(link, viewer)
        answer_by_id(
            user=link.user,
            request_id=link.request_id,
            answer={"approved": link.approved, "comment": comment},
        )
        NoticeLink.objects.filter(
            request_id=link.request_id, user_id=link.user_id, used_at__isnull=True
        ).update(used_at=timezone.now())
    return link


def requires_sign_in(viewer) -> bool:
    """True if `viewer` must sign in before a link's page shows."""
    return settings.TOOLCRIB_NOTICE_LINKS_SIGN_IN and not viewer.is_authenticated


def _find(rows, token: str) -> NoticeLink:
    if not TOKEN_SHAPE.fullmatch(token or ""):
        raise LinkNotFound()
    link = (
        rows.select_related("request__session__owner", "request__caller", "user")
        .filter(digest=_digest(token))
        .first()
    )
    if link is None:
        raise LinkNotFound()
    return link


def _refuse_unless_usable(link: NoticeLink, viewer) -> None:
    """The refusals, in the order a person reads them best."""
    if link.used_at is not None:
        raise LinkUsed()
    if link.request.status != Request.Status.PENDING:
        raise RequestEnded(link.request.status)
    if link.expires_at <= timezone.now():
        raise LinkExpired()
    if settings.TOOLCRIB_NOTICE_LINKS_SIGN_IN and viewer.pk != link.user_id:
        raise LinkForSomeoneElse()
    user = link.user
    if not user.is_active or not rules.may_answer(user=user, request=link.request):
        raise NoLongerAllowed()


def _expiry(request: Request):
    longest = timezone.now() + timedelta(seconds=settings.TOOLCRIB_NOTICE_LINK_MAX_AGE)
    if request.expires_at is None:
        return longest
    return min(request.expires_at, longest)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
