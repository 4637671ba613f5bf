"""Which channels tell a user of a new request of each kind.

Without a row of hers for a kind, the defaults hold: an approval is mailed (and
sent to her own webhook destinations), since someone waits on her decision; a
credential or a call is not, since its requester is usually in the session that
asks, and a call's result is usually posted by code.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db import transaction

from agents.models import NoticePreference, Request

KINDS = tuple(Request.Kind)


@dataclass(frozen=True)
class Channels:
    """Whether mail and her webhooks tell her of one kind of request."""

    mail: bool
    webhook: bool


DEFAULTS = {
    Request.Kind.APPROVAL: Channels(mail=True, webhook=True),
    Request.Kind.CREDENTIAL: Channels(mail=False, webhook=False),
    Request.Kind.CALL: Channels(mail=False, webhook=False),
}


def channels_of(*, user_ids: Iterable[int], kind: str) -> dict[int, Channels]:
    """Each user's channels for `kind`, hers or the defaults (one query)."""
    ids = list(user_ids)
    chosen = {
        row.user_id: Channels(mail=row.mail, webhook=row.webhook)
        for row in NoticePreference.objects.filter(user_id__in=ids, kind=kind)
    }
    return {pk: chosen.get(pk, DEFAULTS[kind]) for pk in ids}


def preferences_of(*, user) -> dict[str, Channels]:
    """The user's channels for every kind."""
    rows = NoticePreference.objects.filter(user=user)
    chosen = {row.kind: Channels(mail=row.mail, webhook=row.webhook) for row in rows}
    return {kind: chosen.get(kind, DEFAULTS[kind]) for kind in KINDS}


def set_preferences(*, user, channels: Mapping[str, Channels]) -> dict[str, Channels]:
    """Store the user's channels for the kinds given; returns every kind's."""
    with transaction.atomic():
        for kind, chosen in channels.items():
            NoticePreference.objects.update_or_create(
                user=user,
                kind=kind,
                defaults={"mail": chosen.mail, "webhook": chosen.webhook},
            )
    return preferences_of(user=user)
