"""The event log: record one of Toolcrib's own events and publish it, and read what a
client missed.

record_and_publish() is the one way Toolcrib's own events (run_started, error,
run_finished, tools_changed, session_closed, artifact) are stored under the next seq and announced;
events_after() is the one read of what a client missed, for the REST list and a
socket's backlog alike; events_before() the one read of a page further back, for a
page that opens at the latest events and pages back as its reader scrolls up.

The database is the log; the channel layer is only a doorbell. Publish after the
event is committed, with its seq, so a client that misses a frame replays it.
"""

from typing import Any

from asgiref.sync import async_to_sync

from agents.adk.own_events import record_event, record_event_here
from agents.doorbell.streams import apublish_frame
from agents.events.wire import frame_from_row, frame_text
from agents.models import Event, Session

# The most stored events read at once: the REST list's largest page, and one batch
# of a socket's backlog.
EVENTS_BATCH = 5000


async def arecord_and_publish(
    *,
    session: Session,
    kind: str,
    data: dict[str, Any],
    invocation_id: str = "",
    author: str = "system",
) -> Event:
    """Store one of Toolcrib's own events under the session's next seq, then publish it.

    Called outside a transaction, the row is committed (record_event's own) before
    the doorbell rings, so a client told of it can read it back by seq.
    """
    row = await record_event(
        session_id=session.id,
        kind=kind,
        author=author,
        invocation_id=invocation_id,
        data=data,
    )
    await apublish_row(session, row)
    return row


def record(
    *,
    session: Session,
    kind: str,
    data: dict[str, Any],
    invocation_id: str = "",
    author: str = "system",
) -> Event:
    """The store half of arecord_and_publish(), in this thread: for a caller on the
    ORM's thread that stores more in the same hop. Publish the row with
    apublish_row() once it is committed."""
    return record_event_here(
        session_id=session.id,
        kind=kind,
        author=author,
        invocation_id=invocation_id,
        data=data,
    )


async def apublish_row(session: Session, row: Event) -> None:
    """Ring the doorbell for a stored, committed event of the session."""
    frame = frame_from_row(row)
    await apublish_frame(
        session, frame_text(frame), seq=frame.seq, kind=frame.event.kind
    )


def record_and_publish(
    *,
    session: Session,
    kind: str,
    data: dict[str, Any],
    invocation_id: str = "",
    author: str = "system",
) -> Event:
    """See arecord_and_publish()."""
    return async_to_sync(arecord_and_publish)(
        session=session,
        kind=kind,
        data=data,
        invocation_id=invocation_id,
        author=author,
    )


def events_after(
    *, session_id: str, after: int, limit: int = EVENTS_BATCH
) -> list[Event]:
    """The session's stored events with a seq above `after`, in seq order, at most
    `limit`: what a client that has seen up to `after` has missed."""
    rows = Event.objects.filter(session_id=session_id, seq__gt=after).order_by("seq")
    # The sender comes in the same query: frames show who sent a user message.
    return list(rows.select_related("sender")[:limit])


def events_before(
    *, session_id: str, before: int | None, after: int = 0, limit: int = EVENTS_BATCH
) -> list[Event]:
    """The newest `limit` stored events with a seq below `before` (None: the newest
    of all) and above `after`, in seq order: the page before what a client shows."""
    rows = Event.objects.filter(session_id=session_id, seq__gt=after)
    rows = rows.select_related("sender")  # as events_after()
    if before is not None:
        rows = rows.filter(seq__lt=before)
    return list(reversed(rows.order_by("-seq")[:limit]))
