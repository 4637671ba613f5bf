"""DjangoSessionService: ADK sessions, events and scoped state in Toolcrib's models.

State is split by prefix the way InMemorySessionService splits it: `app:` keys are
AppState rows and `user:` keys UserState rows (one row per key, stored without the
prefix), plain keys live in Session.state, and `temp:` keys are never stored.

Every stored event takes the next `seq` of its session. ADK writes also bump
`revision`, which ADK sessions carry as `_storage_update_marker` so that a writer
holding an outdated copy gets StaleSessionError instead of overwriting newer state.
Toolcrib's own records (record_event) share the seq counter but not the revision.

A session id is unique per (app, user), as in ADK: another user (or another app)
may have a session under the same id. ADK's id is the row's `adk_id`; the row's
primary key, which the API, URLs and foreign keys use, is the same string when it
is free and a fresh uuid otherwise. Whatever goes from an ADK session back to its
row goes through session_rows(), scoped by (app, user) as ADK scopes it.

Two deliberate differences from ADK's services, both so that no secret is stored:
an event carrying a credential request or answer is stored with its secret fields
redacted (agents.adk.auth), and a state entry holding a credential (where ADK's
REST tools cache the one they used, agents.redaction.is_credential_state) is kept
like a `temp:` key: on the in-memory session for the rest of the invocation, never
in a stored row or in the event. A session read back later never has either; the
user's credential is loaded again from its sealed Credential row
(agents.adk.tool_auth). State stored before this rule is left out when read and
dropped at the session's next write of session state.
"""

import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from asgiref.sync import sync_to_async
from django.db import IntegrityError, connection, models, transaction
from django.db.models import Max, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event as AdkEvent
from google.adk.platform import time as platform_time
from google.adk.sessions import BaseSessionService, State
from google.adk.sessions import Session as AdkSession
from google.adk.sessions._session_util import extract_json_safe_state_delta
from google.adk.sessions.base_session_service import (
    GetSessionConfig,
    ListSessionsResponse,
)

from agents.adk import event_rows
from agents.adk.auth import redacted_event
from agents.adk.event_kinds import event_kind
from agents.adk.history import HistoryWindow
from agents.adk.parsed_events import PARSED
from agents.models import AppState, Event, Session, UserState, new_session_id
from agents.observability.spans import storing
from agents.redaction import is_credential_state, redact_state
from project.patches.prepared import Param, Prepared

STALE_MESSAGE = (
    # ADK's own wording (DatabaseSessionService), which callers may match on.
    "The session has been modified in storage since it was read; "
    "read it again with get_session before appending."
)


class DjangoSessionService(BaseSessionService):
    """ADK's session service on the Django ORM; one instance per turn.

    `sender_id`: the user whose message the turn carries; the events it stores by
    `user` (the message) record them as their sender. None: no person sent it.
    `on_stored`: called with each event this instance stores, on the ORM's thread
    right after the event's write, in the same thread hop: what the caller stores
    because of an event costs no hop of its own (a turn's Run notes its
    invocation id there, agents.turns.drive).
    """

    def __init__(
        self,
        *,
        sender_id: int | None = None,
        on_stored: Callable[[AdkEvent], None] | None = None,
    ) -> None:
        self._seqs: dict[str, int] = {}
        self._sender_id = sender_id
        self._on_stored = on_stored
        # A session read ahead (read_ahead), by its keys and config: the next
        # get_session() of exactly those takes it instead of reading again.
        self._ahead: tuple[tuple[str, str, str, GetSessionConfig], Any] | None = None

    def seq_of(self, event_id: str) -> int | None:
        """The seq this instance stored an event under, or None if it did not."""
        return self._seqs.get(event_id)

    def read_ahead(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig
    ) -> None:
        """Read a session now, in this thread, for the next get_session() with the
        same keys and config: a turn reads it in the thread hop that loads its agent,
        before ADK's Runner asks. A later get_session() reads again."""
        found = _get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=config
        )
        self._ahead = ((app_name, user_id, session_id, config), found)

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> AdkSession:
        """Create a session; `app:` and `user:` keys of `state` go to shared state."""
        return await sync_to_async(_create_session, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, state=state, session_id=session_id
        )

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> AdkSession | None:
        """The session with its ADK events and merged state, or None if not found."""
        config = config or GetSessionConfig()
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == (app_name, user_id, session_id, config):
            return ahead[1]
        return await sync_to_async(_get_session, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, session_id=session_id, config=config
        )

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """Sessions of an app (of one user if given), oldest update first, no events."""
        return await sync_to_async(_list_sessions, thread_sensitive=True)(
            app_name=app_name, user_id=user_id
        )

    async def delete_session(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> None:
        """Delete a session and its events; app and user state stay."""
        await sync_to_async(_delete_session, thread_sensitive=True)(
            app_name=app_name, user_id=user_id, session_id=session_id
        )

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """A user's `user:` state of an app, keys without the prefix."""
        return await sync_to_async(_user_state, thread_sensitive=True)(
            app_name=app_name, user_id=user_id
        )

    async def append_event(self, session: AdkSession, event: AdkEvent) -> AdkEvent:
        """Store a non-partial event and its state delta, then apply it to `session`.

        Raises:
            SessionNotFoundError: The session is not stored.
            StaleSessionError: `session` was read before another write to it.
        """
        if event.partial:
            return event
        # Temp keys live on in the in-memory session for the rest of the invocation.
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        _keep_credentials_in_memory(session, event)
        sender_id = self._sender_id if event.author == "user" else None
        with storing(event.id):
            written = await sync_to_async(self._write, thread_sensitive=True)(
                session=session, event=event, sender_id=sender_id
            )
        if written is None:
            return event  # Stored by an earlier try: nothing to apply twice.
        seq, revision = written
        self._seqs[event.id] = seq
        session.last_update_time = event.timestamp
        session._storage_update_marker = str(revision)
        return self._commit_event_to_session(session, event)

    def _write(
        self, *, session: AdkSession, event: AdkEvent, sender_id: int | None
    ) -> tuple[int, int] | None:
        """_write_event(), then `on_stored` for an event it stored: one thread hop."""
        written = _write_event(session=session, event=event, sender_id=sender_id)
        if written is not None and self._on_stored is not None:
            self._on_stored(event)
        return written


def _keep_credentials_in_memory(session: AdkSession, event: AdkEvent) -> None:
    """Apply the delta's credential entries to `session` only, like `temp:` keys."""
    delta = event.actions.state_delta
    held = {k: v for k, v in delta.items() if is_credential_state(k, v)}
    if not held:
        return
    session.state.update(held)
    event.actions.state_delta = {k: v for k, v in delta.items() if k not in held}


def _without_credentials(state: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if not is_credential_state(k, v)}


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


def session_state(*, session: Session) -> dict[str, dict[str, Any]]:
    """A session's stored state by scope, keys without prefixes, as it may be shown."""
    return {
        "session": redact_state(session.state),
        "user": redact_state(
            _user_state(app_name=session.app_name, user_id=session.user_id)
        ),
        "app": redact_state(_app_state(app_name=session.app_name)),
    }


def _create_session(
    *,
    app_name: str,
    user_id: str,
    state: Mapping[str, Any] | None,
    session_id: str | None,
) -> AdkSession:
    adk_id = (session_id or "").strip() or new_session_id()
    deltas = extract_json_safe_state_delta(dict(state or {}))
    row = Session(
        adk_id=adk_id,
        app_name=app_name,
        user_id=user_id,
        state=deltas["session"],
        last_update_time=platform_time.get_time(),
    )
    # The ADK id is the primary key too, unless another session (another user's,
    # or another app's) holds it already: then a fresh uuid is.
    for pk in (adk_id, new_session_id()):
        row.pk = pk
        if _inserted(row, deltas=deltas):
            return _to_adk(row, events=[])
    raise AlreadyExistsError(f"Session with id {adk_id} could not be stored.")


def _inserted(row: Session, *, deltas: Mapping[str, Mapping[str, Any]]) -> bool:
    """Insert `row` and its shared state; False if its primary key is taken.

    Raises:
        AlreadyExistsError: The user has a session of this id in this app.
    """
    try:
        with transaction.atomic():
            row.save(force_insert=True)
            _save_scoped_state(
                app_name=row.app_name, user_id=row.user_id, deltas=deltas
            )
    except IntegrityError as error:
        mine = _sessions(
            app_name=row.app_name, user_id=row.user_id, session_id=row.adk_id
        )
        if mine.exists():
            raise AlreadyExistsError(
                f"Session with id {row.adk_id} already exists."
            ) from error
        return False
    return True


def _session_row() -> Prepared:
    """A session's row by ADK's keys (as _sessions() finds it), compiled once."""
    field = Session._meta.get_field
    return Prepared(
        Session.objects.filter(
            adk_id=Param("adk_id", field("adk_id")),
            app_name=Param("app_name", field("app_name")),
            user_id=Param("user_id", field("user_id")),
        ).order_by("pk")[:1]
    )


SESSION_ROW = _session_row()


def _get_session(
    *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig
) -> AdkSession | None:
    session_id = session_id.strip() if session_id else session_id
    row = SESSION_ROW.first(adk_id=session_id, app_name=app_name, user_id=user_id)
    if row is None:
        return None
    return _to_adk(row, events=_read_events(row=row, config=config))


def _list_sessions(*, app_name: str, user_id: str | None) -> ListSessionsResponse:
    rows = Session.objects.filter(app_name=app_name)
    user_rows = UserState.objects.filter(app_name=app_name)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
        user_rows = user_rows.filter(user_id=user_id)
    app = _app_state(app_name=app_name)
    users: dict[str, dict[str, Any]] = defaultdict(dict)
    for owner, key, value in user_rows.values_list("user_id", "key", "value"):
        users[owner][key] = value
    rows = rows.order_by("last_update_time", "user_id", "adk_id")
    sessions = [
        _to_adk(row, events=[], app=app, user=users[row.user_id]) for row in rows
    ]
    return ListSessionsResponse(sessions=sessions)


def _delete_session(*, app_name: str, user_id: str, session_id: str) -> None:
    _sessions(app_name=app_name, user_id=user_id, session_id=session_id).delete()


def session_rows(session: AdkSession) -> QuerySet[Session]:
    """The stored row of an ADK session (one at most), found by ADK's own scoping:
    its id within its (app, user), never the id alone."""
    return _sessions(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id
    )


def _sessions(*, app_name: str, user_id: str, session_id: str) -> QuerySet[Session]:
    # Scoped by app and user: another user's session id is as good as unknown.
    session_id = session_id.strip() if session_id else session_id
    return Session.objects.filter(adk_id=session_id, app_name=app_name, user_id=user_id)


def _read_events(*, row: Session, config: GetSessionConfig) -> list[AdkEvent]:
    if config.num_recent_events == 0:
        return []
    # Events past the row's last_seq were committed after the row was read; leaving
    # them out keeps the events consistent with the revision handed out as marker.
    rows = Event.objects.filter(session=row, is_adk=True, seq__lte=row.last_seq)
    if config.after_timestamp is not None:
        rows = _after_last_older(rows, after_timestamp=config.after_timestamp)
    if config.num_recent_events is None:
        keys = list(rows.order_by("seq").values_list(*_WINDOWED))
    elif isinstance(config, HistoryWindow):
        newest = None
        if config.after_timestamp is None and config.num_recent_events:
            newest = _newest(row, limit=config.num_recent_events)
        keys = _window(rows, config, newest=newest)
    else:
        newest = rows.order_by("-seq")[: config.num_recent_events]
        keys = list(newest.values_list(*_WINDOWED))[::-1]
    return _parsed(rows=rows, keys=keys)


def _parsed(*, rows: QuerySet[Event], keys: list[tuple]) -> list[AdkEvent]:
    """The events of `keys` (_WINDOWED tuples, in order), parsed once per process:
    the data of those not kept parsed (agents.adk.parsed_events) in one more query."""
    found = PARSED.get_many((key[-2], key[-1]) for key in keys)
    missing = [key[0] for key in keys if key[-2] not in found]
    if missing:
        # One range (a window is contiguous but for the invocations it resumes).
        span = rows.filter(seq__gte=missing[0], seq__lte=missing[-1]).order_by()
        for pk, data in span.values_list("pk", "data"):
            if pk not in found:
                found[pk] = event = AdkEvent.model_validate(data)
                PARSED.put(pk, event)
    return [found[key[-2]] for key in keys]


def _window(
    rows: QuerySet[Event], window: HistoryWindow, *, newest: list[tuple] | None
) -> list[tuple]:
    """The newest events, in whole turns, and those of the invocations the turn
    resumes (agents.adk.history), as _WINDOWED tuples: one query with the window
    as its LIMIT, and one more when the newest turn is longer than the window or a
    turn resumes an invocation. `newest`: the first query's rows, if read already
    (_newest), newest first."""
    limit = window.num_recent_events or 0
    if newest is None:
        newest = list(rows.order_by("-seq").values_list(*_WINDOWED)[:limit])
    newest = newest[::-1]
    if not newest:
        return []
    opening = next((i for i, row in enumerate(newest) if _opens(*row[1:3])), None)
    if len(newest) < limit:
        kept = newest  # From the session's first event: every event there is.
    elif opening is not None:
        kept = newest[opening:]
    else:
        kept = _turn_before(rows, seq=newest[0][0]) + newest
    if window.resumes:
        older = rows.filter(seq__lt=kept[0][0], invocation_id__in=window.resumes)
        kept = list(older.order_by("seq").values_list(*_WINDOWED)) + kept
    return kept


# What a read selects of each event: the window's fields, and the row and event
# ids the parsed events are kept by; the data only for events not kept parsed.
_WINDOWED = ("seq", "author", "kind", "pk", "event_id")


def _newest(row: Session, *, limit: int) -> list[tuple]:
    """The session's newest `limit` ADK events up to its last_seq, newest first, as
    _WINDOWED tuples: a window's first query, compiled once a process per limit."""
    return _newest_query(limit).fetch(session=row.pk, last_seq=row.last_seq)


@lru_cache(maxsize=64)
def _newest_query(limit: int) -> Prepared:
    field = Event._meta.get_field
    rows = Event.objects.filter(
        session=Param("session", field("session")),
        is_adk=True,
        seq__lte=Param("last_seq", field("seq")),
    )
    return Prepared(rows.order_by("-seq").values_list(*_WINDOWED)[:limit])


def _opens(author: str, kind: str) -> bool:
    """Whether a stored ADK event opens a turn: the user's, answering no call."""
    return author == "user" and kind != "function_response"


def _turn_before(rows: QuerySet[Event], *, seq: int) -> list[tuple]:
    """The events before `seq` from the start of its turn, in one query."""
    opening = (
        rows.filter(seq__lt=seq, author="user")
        .exclude(kind="function_response")
        .order_by("-seq")
        .values("seq")[:1]
    )
    earlier = rows.filter(seq__lt=seq, seq__gte=Coalesce(Subquery(opening), 0))
    return list(earlier.order_by("seq").values_list(*_WINDOWED))


def _after_last_older(
    rows: QuerySet[Event], *, after_timestamp: float
) -> QuerySet[Event]:
    # InMemory keeps what follows the newest event older than the cutoff, rather
    # than every event at or after it; the two differ when timestamps go backwards.
    older = rows.filter(timestamp__lt=after_timestamp)
    cutoff = older.aggregate(last=Max("seq"))["last"]
    return rows if cutoff is None else rows.filter(seq__gt=cutoff)


def _to_adk(
    row: Session,
    *,
    events: list[AdkEvent],
    app: Mapping[str, Any] | None = None,
    user: Mapping[str, Any] | None = None,
) -> AdkSession:
    if app is None or user is None:
        read_app, read_user = _scoped_state(app_name=row.app_name, user_id=row.user_id)
        app = read_app if app is None else app
        user = read_user if user is None else user
    state = _without_credentials(row.state)
    state.update({State.APP_PREFIX + key: value for key, value in app.items()})
    state.update({State.USER_PREFIX + key: value for key, value in user.items()})
    session = AdkSession(
        id=row.adk_id,
        app_name=row.app_name,
        user_id=row.user_id,
        state=state,
        events=events,
        last_update_time=row.last_update_time,
    )
    session._storage_update_marker = str(row.revision)
    return session


def _app_state(*, app_name: str) -> dict[str, Any]:
    return dict(AppState.objects.filter(app_name=app_name).values_list("key", "value"))


def _user_state(*, app_name: str, user_id: str) -> dict[str, Any]:
    rows = UserState.objects.filter(app_name=app_name, user_id=user_id)
    return dict(rows.values_list("key", "value"))


def _scoped_state(
    *, app_name: str, user_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The app's state and the user's, read in one query (UNION ALL, each row
    tagged with its scope), written here: the ORM's compiler cost more than the
    query itself, once a turn."""
    with connection.cursor() as cursor:
        cursor.execute(
            _scoped_state_sql(connection.vendor), [app_name, app_name, user_id]
        )
        rows = cursor.fetchall()
    decode = AppState._meta.get_field("value").from_db_value
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    for which, key, value in rows:
        (app if which == "app" else user)[key] = decode(value, None, connection)
    return app, user


@lru_cache(maxsize=4)
def _scoped_state_sql(vendor: str) -> str:
    quote = connection.ops.quote_name
    app, user = quote(AppState._meta.db_table), quote(UserState._meta.db_table)
    key, value = quote("key"), quote("value")
    return (
        f"SELECT 'app', {key}, {value} FROM {app} WHERE {quote('app_name')} = %s"
        f" UNION ALL SELECT 'user', {key}, {value} FROM {user}"
        f" WHERE {quote('app_name')} = %s AND {quote('user_id')} = %s"
    )


def _write_event(
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
    """_write_event() for an event with a state delta, in one transaction with
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
        _save_scoped_state(
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
    row.state = _without_credentials({**row.state, **delta})
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


def _save_scoped_state(
    *, app_name: str, user_id: str, deltas: Mapping[str, Mapping[str, Any]]
) -> None:
    """Upsert the `app` and `user` deltas, one row per key."""
    app_rows = [
        AppState(app_name=app_name, key=key, value=value)
        for key, value in sorted(deltas["app"].items())
    ]
    user_rows = [
        UserState(app_name=app_name, user_id=user_id, key=key, value=value)
        for key, value in sorted(deltas["user"].items())
    ]
    # One row per key: writers of different keys never overwrite each other. Sorted
    # keys make concurrent writers lock rows in one order (no PostgreSQL deadlock).
    _upsert(AppState, app_rows, unique_fields=["app_name", "key"])
    _upsert(UserState, user_rows, unique_fields=["app_name", "user_id", "key"])


def _upsert(
    model: type[models.Model], rows: Sequence[models.Model], *, unique_fields: list[str]
) -> None:
    if not rows:
        return
    model.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=unique_fields,
        update_fields=["value", "updated_at"],
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
