"""What agents.requests tells the packages and apps above it: new requests wait
for a person, and a request was decided.

`requests_waiting` is sent once per batch of new, stored requests that wait for a
person (the recorder's, record.py; not one a standing approval approves at once),
outside any transaction: agents.notices queues their mail and webhooks from it
(enqueue.py), so the recorder, which a turn imports, imports no notice.

`request_decided` is sent once per request, inside the transaction that ends it,
with the request as ended (`status`, `answered_by`, `answered_at`):

- answered, approved or rejected by a person, or expired by the sweep or a late
  answer (closing.py stores each);
- expired with its session, deleted before anybody answered. A session goes by
  the API, ADK's delete_session, the admin, or with its owner; one pre_delete
  receiver sees every way, where a call in each would miss the cascades.

toolsets records an approval's decision in its audit from it (the runtime never
imports governance: DESIGN.md rule 1).
"""

from django.db.models.signals import pre_delete
from django.dispatch import Signal
from django.utils import timezone

from agents.models import Request, Session
from agents.requests import rings

# Sent with sender=Request and `request`: the Request, its decision stored on it.
request_decided = Signal()
# Sent with sender=Request and `requests`: the list of new requests, stored.
requests_waiting = Signal()


def send_waiting(requests: list[Request]) -> None:
    """Tell the receivers that `requests`, new and stored, wait for a person."""
    requests_waiting.send(sender=Request, requests=requests)


def send_decided(request: Request) -> None:
    """Tell the receivers that `request` has ended, as its fields say."""
    request_decided.send(sender=Request, request=request)


def _expire_with_session(sender, instance: Session, **kwargs) -> None:
    """The session's pending requests expire with it: nobody is left to tell."""
    now = timezone.now()
    pending = Request.objects.filter(session=instance, status=Request.Status.PENDING)
    for request in pending:
        request.status, request.answered_at = Request.Status.EXPIRED, now
        send_decided(request)
        rings.ring_on_commit(request, rings.EXPIRED)  # Its inboxes drop it.


def connect() -> None:
    """Connect the receivers (from AgentsConfig.ready)."""
    pre_delete.connect(
        _expire_with_session, sender=Session, dispatch_uid="requests-session-deleted"
    )
