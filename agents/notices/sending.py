"""Send the notices that are due, each attempt logged on its Delivery.

send_due() runs as the Celery task `agents.send_notices` (tasks.py): on a worker
when there is a broker, else on a timer thread of this process, never on a
turn's path. It takes each due delivery by a conditional UPDATE (any number of
senders send it once), sends it, and stores the outcome: sent; or, after a
failure, queued again TOOLCRIB_NOTICE_RETRY_SECONDS later (four times longer at
each attempt), until TOOLCRIB_NOTICE_ATTEMPTS attempts have failed. A delivery
whose request has ended is skipped, not sent. An attempt that never finished
(its process died) is taken again once its lease is over.

A webhook's attempt ends after TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT seconds; a mail's
after EMAIL_TIMEOUT. Errors are logged in words that hold no URL and no secret
(a Slack or Teams webhook's URL is itself a credential).
"""

import hashlib
import hmac
import json
import logging
import smtplib
import time
from datetime import timedelta

import httpx
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import F
from django.utils import timezone, translation

from agents import timers
from agents.models import Delivery, Request
from agents.notices import links, messages
from agents.notices.enqueue import SEND_NOTICES
from agents.preferences import recipient_language
from project.sealing import unseal

logger = logging.getLogger(__name__)

Status = Delivery.Status
# At most this many deliveries per run; what is left waits for the next run.
BATCH = 200
# An attempt's lease beyond its own timeouts: past it, another sender retakes it.
LEASE_MARGIN = 30.0
# A destination's signing secret and URL are sealed under these purposes.
SECRET_PURPOSE = "notices.webhook"
URL_PURPOSE = "notices.webhook_url"
SIGNATURE_HEADER = "X-Toolcrib-Signature"
TIMESTAMP_HEADER = "X-Toolcrib-Timestamp"
ERROR_CHARS = 500


class NoticeFailed(Exception):
    """One attempt failed; the message says why, without a URL or a secret."""


def send_due() -> int:
    """Send every delivery that is due; returns how many were sent."""
    now = timezone.now()
    _fail_abandoned(now)
    due = Delivery.objects.filter(
        status__in=[Status.QUEUED, Status.SENDING], next_attempt_at__lte=now
    ).values_list("pk", flat=True)
    return sum(attempt(delivery_id=pk) for pk in list(due[:BATCH]))


def attempt(*, delivery_id: int) -> bool:
    """One attempt of one due delivery, if this sender takes it; True if sent."""
    if not _claim(delivery_id):
        return False
    delivery = Delivery.objects.select_related(
        "request__session__owner", "request__caller", "recipient", "destination"
    ).get(pk=delivery_id)
    if delivery.request.status != Request.Status.PENDING:
        _store(delivery, Status.SKIPPED, error="The request ended before it went.")
        return False
    try:
        _send(delivery)
    except NoticeFailed as exc:
        _failed(delivery, str(exc))
        return False
    _store(delivery, Status.SENT, sent_at=timezone.now())
    return True


def sign(*, secret: str, timestamp: str, body: bytes) -> str:
    """A generic webhook's signature: HMAC-SHA256 of "<timestamp>." and the body."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def _claim(delivery_id: int) -> bool:
    now = timezone.now()
    lease = now + timedelta(seconds=_attempt_seconds() + LEASE_MARGIN)
    return bool(
        Delivery.objects.filter(
            pk=delivery_id,
            status__in=[Status.QUEUED, Status.SENDING],
            next_attempt_at__lte=now,
            attempts__lt=settings.TOOLCRIB_NOTICE_ATTEMPTS,
        ).update(
            status=Status.SENDING, attempts=F("attempts") + 1, next_attempt_at=lease
        )
    )


def _fail_abandoned(now) -> None:
    """An attempt that never finished, and was the last: the delivery failed."""
    Delivery.objects.filter(
        status=Status.SENDING,
        next_attempt_at__lte=now,
        attempts__gte=settings.TOOLCRIB_NOTICE_ATTEMPTS,
    ).update(
        status=Status.FAILED,
        next_attempt_at=None,
        last_error="The last attempt never finished.",
    )


def _send(delivery: Delivery) -> None:
    found = links.issue(delivery=delivery)
    # In her language (agents.preferences); a team's webhook: the default one.
    with translation.override(recipient_language(user_id=delivery.recipient_id)):
        notice = messages.notice_of(delivery.request, found)
        if delivery.channel == Delivery.Channel.MAIL:
            _mail(notice, delivery.address)
            return
        _post(notice, delivery.destination)


def _mail(notice: messages.Notice, address: str) -> None:
    subject, text, html = messages.mail_of(notice)
    mail = EmailMultiAlternatives(subject, text, to=[address])
    mail.attach_alternative(html, "text/html")
    try:
        mail.send(fail_silently=False)
    except (smtplib.SMTPException, OSError) as exc:
        raise NoticeFailed(f"The mail server refused or failed: {exc}") from None
    except ValueError:  # Django's refusal of an address or header it cannot send
        raise NoticeFailed("The mail address is not one a mail can go to.") from None


def _post(notice: messages.Notice, destination) -> None:
    body = json.dumps(messages.FORMATS[destination.format](notice)).encode()
    headers = {"Content-Type": "application/json", "User-Agent": "Toolcrib"}
    secret = destination.sealed_secret and unseal(
        SECRET_PURPOSE, destination.sealed_secret
    )
    if destination.format == "generic" and secret:
        timestamp = str(int(time.time()))
        headers[TIMESTAMP_HEADER] = timestamp
        headers[SIGNATURE_HEADER] = sign(secret=secret, timestamp=timestamp, body=body)
    url = unseal(URL_PURPOSE, destination.sealed_url)
    if url is None:
        raise NoticeFailed(
            "The address cannot be read (the key changed): set it again."
        )
    timeout = settings.TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT
    try:
        # Only the status is read: a body sent slowly cannot hold the sender.
        with httpx.stream(
            "POST", url, content=body, headers=headers, timeout=timeout
        ) as answer:
            status = answer.status_code
    except httpx.TimeoutException:
        raise NoticeFailed(
            f"The webhook did not answer within {timeout:g} s."
        ) from None
    except httpx.HTTPError as exc:
        raise NoticeFailed(
            f"The webhook could not be reached ({_kind(exc)})."
        ) from None
    if not 200 <= status < 300:
        raise NoticeFailed(f"The webhook answered HTTP {status}.")


def _failed(delivery: Delivery, error: str) -> None:
    logger.warning(
        "notice failed delivery=%s attempt=%s", delivery.pk, delivery.attempts
    )
    if delivery.attempts >= settings.TOOLCRIB_NOTICE_ATTEMPTS:
        _store(delivery, Status.FAILED, error=error)
        return
    wait = settings.TOOLCRIB_NOTICE_RETRY_SECONDS * 4 ** (delivery.attempts - 1)
    _store(
        delivery,
        Status.QUEUED,
        error=error,
        next_attempt_at=timezone.now() + timedelta(seconds=wait),
    )
    transaction.on_commit(lambda: timers.later(wait, SEND_NOTICES), robust=True)


def _store(delivery: Delivery, status: str, *, error: str = "", **fields) -> None:
    fields.setdefault("next_attempt_at", None)
    Delivery.objects.filter(pk=delivery.pk).update(
        status=status, last_error=error[:ERROR_CHARS], **fields
    )


def _attempt_seconds() -> float:
    return max(settings.TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT, settings.EMAIL_TIMEOUT or 0)


def _kind(exc: Exception) -> str:
    """An error's kind, never its text: httpx's may name the URL."""
    return type(exc).__name__
