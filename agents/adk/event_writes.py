"""One of ADK's events appended: stored under its session's next `seq` with its
state delta, all or nothing.

ADK writes also bump the session's `revision`, which ADK sessions carry as
`_storage_update_marker` so that a writer holding an outdated copy gets
StaleSessionError instead of overwriting newer state. An event carrying a
credential request or answer is stored with its secret fields redacted
(agents.adk.auth).
"""

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from google.adk.errors import StaleSessionError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event as AdkEvent
from google.adk.sessions import Session as AdkSession
from google.adk.sessions._session_util import extract_json_safe_state_delta

from agents.adk import event_rows
from agents.adk.auth import redacted_event
from agents.adk.event_kinds import event_kind
from agents.adk.parsed_events import PARSED
from agents.adk.session_rows import session_rows
from agents.adk.session_state import save_scoped_state, without_credentials
from agents.models import Event

STALE_MESSAGE = (
    # ADK's own wording (DatabaseSessionService), which callers may match on.
    "The session has been modified in storage since it was read; "
    "read it again with get_session before appending."
)


def write_event(
    *, session: AdkSession, event: AdkEvent, sender_id: int | None = None
) -> tuple[int, int] | None:
    """Store `event` and its state delta; (seq, revision), or None if stored before.

    The common event (no state in its delta) is one UPDATE that checks the marker
    and takes the next seq and revision, and the INSERT: in one statement on
    PostgreSQL, two in a transaction elsewhere (agents.adk.event_rows). An event
    that changes session state reads the row under its lock first, to merge the
    delta; `app:` and `user:` deltas are upserted in the same transaction.
    """
    deltas = extract_json_safe_state_delta(event.actions.state_delta)
    row = _event_row(event=event, sender_id=sender_id)
    try:
        if any(deltas.values()):
            revision = _write_in_transaction(session, event, deltas, row)
        else:
            revision = event_rows.store(*_advance_statement(session, event), row)
    except IntegrityError:
        # The event id is stored already (a retried append, ADK's append is
        # idempotent per event id): nothing was changed.
        if _stored(session, event):
            return None
        raise
    if revision is None:
        return _not_advanced(session, event)
    _keep_parsed(row.pk, row.data)
    return row.seq, revision


def _write_in_transaction(
    session: AdkSession,
    event: AdkEvent,
    deltas: Mapping[str, Mapping[str, Any]],
    row: Event,
) -> tuple[int, int, int] | None:
    """write_event() for an event with a state delta, in one transaction with
    its state: the session's new revision (the row's pk and seq set), or None
    (stale, or no such session) with nothing stored."""
    with transaction.atomic():
        if deltas["session"]:
            advanced = _advance_with_state(session, event, deltas["session"])
        else:
            advanced = event_rows.advance(*_advance_statement(session, event))
        if advanced is None:
            return None
        row.session_id, row.seq, revision = advanced
        save_scoped_state(
            app_name=session.app_name, user_id=session.user_id, deltas=deltas
        )
        event_rows.insert(row)
    return revision


def _advance_statement(session: AdkSession, event: AdkEvent) -> tuple[str, list[Any]]:
    """The UPDATE that takes the session's next seq and revision if `session` is
    fresh (event_rows.RETURNED: its row id, seq and revision; no row if stale)."""
    marker = session._storage_update_marker
    fresh = "" if marker is None else " AND revision = %s"
    params = [event.timestamp, timezone.now(), session.app_name, session.user_id]
    params += [session.id] + ([] if marker is None else [int(marker)])
    return (
        "UPDATE {table} SET last_seq = last_seq + 1, revision = revision + 1,"
        " last_update_time = %s, updated_at = %s"
        " WHERE app_name = %s AND user_id = %s AND adk_id = %s"
        + fresh
        + " "
        + event_rows.RETURNED,
        params,
    )


def _advance_with_state(
    session: AdkSession, event: AdkEvent, delta: Mapping[str, Any]
) -> tuple[str, int, int] | None:
    """The advance of _advance_statement() for an event that changes session
    state: merged under the lock."""
    row = session_rows(session).select_for_update().first()
    marker = session._storage_update_marker
    if row is None or (marker is not None and marker != str(row.revision)):
        return None
    row.state = without_credentials({**row.state, **delta})
    row.last_seq += 1
    row.revision += 1
    row.last_update_time = event.timestamp
    row.save(
        update_fields=[
            "state",
            "last_seq",
            "revision",
            "last_update_time",
            "updated_at",
        ]
    )
    return row.pk, row.last_seq, row.revision


def _not_advanced(session: AdkSession, event: AdkEvent) -> None:
    """Why nothing was stored: the event was (None), or raise what ADK raises."""
    if _stored(session, event):
        return None  # A retried append: ADK's append is idempotent per event id.
    if not session_rows(session).exists():
        raise SessionNotFoundError(f"Session {session.id} not found.")
    raise StaleSessionError(STALE_MESSAGE)


def _stored(session: AdkSession, event: AdkEvent) -> bool:
    rows = Event.objects.filter(session__in=session_rows(session), event_id=event.id)
    return rows.exists()


def _event_row(*, event: AdkEvent, sender_id: int | None) -> Event:
    """The unsaved row of one of ADK's events; its session and seq are set when
    they are taken."""
    # A credential answered for this invocation stays in memory only.
    data = redacted_event(event).model_dump(mode="json", exclude_none=True)
    return Event(
        event_id=event.id,
        invocation_id=event.invocation_id,
        author=event.author,
        kind=event_kind(event),
        is_adk=True,
        timestamp=event.timestamp,
        data=data,
        sender_id=sender_id,
    )


def _keep_parsed(pk: int, data: dict[str, Any]) -> None:
    # Kept as a read would parse it once committed: the stored data, not the object
    # the turn holds (unredacted, and ADK's to change). Kept on commit only.
    transaction.on_commit(lambda: PARSED.put(pk, AdkEvent.model_validate(data)))
