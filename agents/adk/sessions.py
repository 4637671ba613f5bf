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

Its parts, a module each (none of them imports this one):

- event_writes.py: append_event's write (seq, revision, state delta);
- event_reads.py: get_session's read of the events (every one, the newest, or a
  history window);
- session_rows.py: a session's row, found by ADK's scoping;
- session_state.py: state by scope, and the credential entries kept in memory;
- own_events.py: Toolcrib's own events (record_event), beside ADK's.
"""

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from asgiref.sync import sync_to_async
from django.db import IntegrityError, transaction
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event as AdkEvent
from google.adk.platform import time as platform_time
from google.adk.sessions import BaseSessionService, State
from google.adk.sessions import Session as AdkSession
from google.adk.sessions._session_util import extract_json_safe_state_delta
from google.adk.sessions.base_session_service import (
    GetSessionConfig,
    ListSessionsResponse,
)

from agents.adk.event_reads import read_events
from agents.adk.event_writes import write_event
from agents.adk.session_rows import SESSION_ROW, session_rows_by_id
from agents.adk.session_state import (
    app_state,
    keep_credentials_in_memory,
    save_scoped_state,
    scoped_state,
    user_state,
    without_credentials,
)
from agents.models import Session, UserState, new_session_id
from agents.observability.spans import storing


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
        return await sync_to_async(user_state, thread_sensitive=True)(
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
        keep_credentials_in_memory(session, event)
        sender_id = self._sender_id if event.author == "user" else None
        node_path = event.node_info.path if event.node_info else None
        with storing(event.id, node_path=node_path, output=event.output):
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
        """write_event(), then `on_stored` for an event it stored: one thread hop."""
        written = write_event(session=session, event=event, sender_id=sender_id)
        if written is not None and self._on_stored is not None:
            self._on_stored(event)
        return written


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
            save_scoped_state(app_name=row.app_name, user_id=row.user_id, deltas=deltas)
    except IntegrityError as error:
        mine = session_rows_by_id(
            app_name=row.app_name, user_id=row.user_id, session_id=row.adk_id
        )
        if mine.exists():
            raise AlreadyExistsError(
                f"Session with id {row.adk_id} already exists."
            ) from error
        return False
    return True


def _get_session(
    *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig
) -> AdkSession | None:
    session_id = session_id.strip() if session_id else session_id
    row = SESSION_ROW.first(adk_id=session_id, app_name=app_name, user_id=user_id)
    if row is None:
        return None
    return _to_adk(row, events=read_events(row=row, config=config))


def _list_sessions(*, app_name: str, user_id: str | None) -> ListSessionsResponse:
    rows = Session.objects.filter(app_name=app_name)
    user_rows = UserState.objects.filter(app_name=app_name)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
        user_rows = user_rows.filter(user_id=user_id)
    app = app_state(app_name=app_name)
    users: dict[str, dict[str, Any]] = defaultdict(dict)
    for owner, key, value in user_rows.values_list("user_id", "key", "value"):
        users[owner][key] = value
    rows = rows.order_by("last_update_time", "user_id", "adk_id")
    sessions = [
        _to_adk(row, events=[], app=app, user=users[row.user_id]) for row in rows
    ]
    return ListSessionsResponse(sessions=sessions)


def _delete_session(*, app_name: str, user_id: str, session_id: str) -> None:
    session_rows_by_id(
        app_name=app_name, user_id=user_id, session_id=session_id
    ).delete()


def _to_adk(
    row: Session,
    *,
    events: list[AdkEvent],
    app: Mapping[str, Any] | None = None,
    user: Mapping[str, Any] | None = None,
) -> AdkSession:
    if app is None or user is None:
        read_app, read_user = scoped_state(app_name=row.app_name, user_id=row.user_id)
        app = read_app if app is None else app
        user = read_user if user is None else user
    state = without_credentials(row.state)
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
