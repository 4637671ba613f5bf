"""A new request's notices: one Delivery per person and channel, and per webhook
destination that hears of it, queued once the request is stored.

The recorder announces new requests after storing them
(agents.requests.signals.requests_waiting, connected from AgentsConfig.ready): a few queries whatever
the group's size (one when no SMTP server and no destination is set up), and
nothing is sent here. The sending starts once the deliveries commit, on a worker
or a timer thread (agents.timers), by the Celery task's registered name.
"""

from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents import timers
from agents.models import Delivery, Request, Run, WebhookDestination
from agents.notices.preferences import channels_of
from agents.notices.recipients import recipients
from agents.requests.signals import requests_waiting

# The sender's Celery task (agents/notices/tasks.py), scheduled by name.
SEND_NOTICES = "agents.send_notices"

Channel = Delivery.Channel


def enqueue(requests: Iterable[Request]) -> list[Delivery]:
    """Queue the notices of new, stored `requests`; sending starts on commit."""
    destinations = [d for d in WebhookDestination.objects.filter(enabled=True)]
    rows = [row for request in requests for row in _deliveries(request, destinations)]
    if not rows:
        return []
    with transaction.atomic():
        stored = Delivery.objects.bulk_create(rows)
        transaction.on_commit(lambda: timers.later(0, SEND_NOTICES), robust=True)
    return stored


def on_waiting(sender, requests: list[Request], **kwargs) -> None:
    """The receiver of requests_waiting: queue the new requests' notices; an eval
    run's (evals: never answered, expired as its case ends) tell nobody."""
    run_ids = [request.run_id for request in requests if request.run_id]
    evals = set(
        Run.objects.filter(pk__in=run_ids, eval=True).values_list("pk", flat=True)
        if run_ids
        else []
    )
    enqueue([request for request in requests if request.run_id not in evals])


def connect() -> None:
    """Connect the receiver (from AgentsConfig.ready)."""
    requests_waiting.connect(on_waiting, dispatch_uid="notices-requests-waiting")


def _deliveries(request: Request, destinations: list[WebhookDestination]):
    """The deliveries of one request: mail, her own webhooks, the teams' webhooks."""
    hearing = [d for d in destinations if request.kind in (d.kinds or [])]
    people = recipients(request) if _any_personal(hearing) or _mail_on() else []
    chosen = channels_of(user_ids=[u.pk for u in people], kind=request.kind)
    now = timezone.now()
    rows = []
    for user in people:
        if _mail_on() and user.email and chosen[user.pk].mail:
            rows.append(_row(request, Channel.MAIL, now, user=user, address=user.email))
    for destination in hearing:
        if _hears(destination, request, people, chosen):
            rows.append(
                _row(
                    request,
                    Channel.WEBHOOK,
                    now,
                    user=destination.user,
                    destination=destination,
                    address=destination.name,
                )
            )
    return rows


def _hears(destination, request: Request, people: list, chosen: dict) -> bool:
    """A person's destination follows her; a team's, its group (if it names one)."""
    if destination.user_id is not None:
        return destination.user_id in chosen and chosen[destination.user_id].webhook
    return not destination.group or destination.group == request.answer_group


def _row(request, channel, now, *, user, address, destination=None) -> Delivery:
    return Delivery(
        request=request,
        channel=channel,
        recipient=user,
        destination=destination,
        address=address[:254],
        next_attempt_at=now,
    )


def _any_personal(destinations: list[WebhookDestination]) -> bool:
    return any(d.user_id is not None for d in destinations)


def _mail_on() -> bool:
    """Mail goes only where an SMTP server is configured (EMAIL_HOST)."""
    return bool(settings.EMAIL_HOST)
