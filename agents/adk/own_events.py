"""Toolcrib's own events (run_started, run_finished, error, ...; not ADK's), stored
under the session's next `seq` beside ADK's. The revision is left alone, so an ADK
session held by a running turn stays fresh.
"""

import time
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.utils import timezone
from google.adk.errors.session_not_found_error import SessionNotFoundError

from agents.adk import event_rows
from agents.models import Event


async def record_event(
    *,
    session_id: str,
    kind: str,
    author: str,
    invocation_id: str,
    data: dict[str, Any],
    timestamp: float | None = None,
) -> Event:
    """Store one of Toolcrib's own events (not ADK's) under the session's next seq.

    `session_id` is the row's own id (Session.pk), not an ADK id. The revision is
    left alone, so an ADK session held by a running turn stays fresh.
    """
    return await sync_to_async(record_event_here, thread_sensitive=True)(
        session_id=session_id,
        kind=kind,
        author=author,
        invocation_id=invocation_id,
        data=data,
        timestamp=timestamp,
    )


def record_event_here(
    *,
    session_id: str,
    kind: str,
    author: str,
    invocation_id: str,
    data: dict[str, Any],
    timestamp: float | None = None,
) -> Event:
    """See record_event(): in this thread, for a caller already on the ORM's."""
    return _record_event(
        session_id=session_id,
        kind=kind,
        author=author,
        invocation_id=invocation_id,
        data=data,
        timestamp=time.time() if timestamp is None else timestamp,
    )


def _record_event(
    *,
    session_id: str,
    kind: str,
    author: str,
    invocation_id: str,
    data: dict[str, Any],
    timestamp: float,
) -> Event:
    row = Event(
        session_id=session_id,
        event_id=str(uuid.uuid4()),
        invocation_id=invocation_id,
        author=author,
        kind=kind,
        is_adk=False,
        timestamp=timestamp,
        data=data,
    )
    statement = (
        "UPDATE {table} SET last_seq = last_seq + 1, updated_at = %s WHERE id = %s "
        + event_rows.RETURNED,
        [timezone.now(), session_id],
    )
    if event_rows.store(*statement, row, fresh=True) is None:
        raise SessionNotFoundError(f"Session {session_id} not found.")
    return row
