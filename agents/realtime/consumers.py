"""Websocket consumers: one session's stream, one agent's sessions, the staff
firehose, and a user's inbox.

The database is the log, the channel layer the doorbell: a consumer sends the
backlog after `?after=<seq>` first, then live frames, deduplicated by seq; a gap
(frames dropped by a full channel) is filled from the database after a `lagged` frame.
A session's sockets take their live frames from the process's relay of that session
(streams.subscribe): one layer message per event, and no per-socket dispatch.
"""

import asyncio
import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import translation
from django.utils.translation import gettext as _
from pydantic import BaseModel, ValidationError

from agents.answers.answer import answer_by_id, answer_request
from agents.doorbell import streams
from agents.events.log import EVENTS_BATCH, events_after
from agents.events.wire import frame_from_row, frame_json
from agents.inputs import BadJson, BadText
from agents.models import Session
from agents.params import BadParameter, is_name, parse_whole_number
from agents.preferences import socket_language
from agents.realtime.frames import (
    AccessChangedFrame,
    AckFrame,
    AckRun,
    ClientFrame,
    ErrorDetail,
    ErrorFrame,
    InboxFrame,
    LaggedFrame,
    PongFrame,
    parse_client_frame,
    ref_of,
)
from agents.realtime.wsauth import origin_allowed
from agents.requests import inbox, kinds
from agents.sessions import access_session, agents_open_to
from agents.turns import cancel, start
from project import metrics
from project.errors import DomainError, NotFoundError

logger = logging.getLogger(__name__)

CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
# As a lost Redis connection closes every other socket (project/layers.py).
CLOSE_RELAY_LOST = 1011

_events_after = database_sync_to_async(events_after)
# Layer messages whose handlers touch no database, by handler.
DOORBELLS = {
    streams.EVENT_MESSAGE: "event_new",
    streams.INBOX_MESSAGE: "inbox_changed",
}
LAGGED_MESSAGE = "stream.lagged"


class StreamConsumer(AsyncWebsocketConsumer):
    """Shared by every stream: authenticate, refuse with a documented code, parse frames."""

    user: Any
    # Its name in toolcrib_open_sockets{kind}; counted from accept to disconnect.
    socket_kind = "stream"
    counted = False
    # Its frames' language, once connected (agents.preferences.socket_language).
    language: str | None = None

    async def connect(self) -> None:
        streams.bind_home_loop(asyncio.get_running_loop())
        self.user = self.scope.get("user")
        if self.user is None or not self.user.is_authenticated:
            await self._refuse(CLOSE_UNAUTHENTICATED)
            return
        if self.scope.get("auth_method") == "cookie" and not origin_allowed(self.scope):
            await self._refuse(CLOSE_FORBIDDEN)
            return
        # Every frame it sends speaks her language (agents.preferences).
        self.language = await database_sync_to_async(socket_language)(scope=self.scope)
        # Before anything is sent: her account switched off closes this socket.
        await self.join(streams.account_group(self.user.pk))
        with translation.override(self.language):
            await self.authorized_connect()

    async def authorized_connect(self) -> None:
        raise NotImplementedError

    async def accept(self, subprotocol: str | None = None, headers=None) -> None:
        """Channels' accept, the socket counted open (a refused one is not)."""
        await super().accept(subprotocol, headers)
        if not self.counted:
            self.counted = True
            metrics.socket_opened(kind=self.socket_kind)

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        if self.counted:
            self.counted = False
            metrics.socket_closed(kind=self.socket_kind)
        await super().websocket_disconnect(message)

    async def _refuse(self, code: int) -> None:
        # Accept first: a close code can only be sent on an open socket. Not
        # counted open: it closes at once.
        await super().accept()
        await self.close(code=code)

    async def _refuse_parameter(self, exc: BadParameter) -> None:
        """Say which handshake parameter is wrong, then close with 4400."""
        await super().accept()
        await self.send_error(exc.code, f"{exc.field}: {exc}")
        await self.close(code=CLOSE_BAD_REQUEST)

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch, without its database hop.

        Channels closes stale database connections (a thread hop) before every
        message. Here every database call is a database_sync_to_async, which does
        that itself, in the thread the call runs on; a doorbell's handler touches
        no database at all, and a socket gets one per event."""
        name = DOORBELLS.get(message["type"]) or get_handler_name(message)
        handler = getattr(self, name, None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        if self.language is None:
            await handler(message)
            return
        with translation.override(self.language):
            await handler(message)

    async def join(self, *groups: str) -> None:
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
            # Channels leaves the groups listed here on disconnect.
            self.groups.append(group)

    async def account_closed(self, message: dict[str, Any]) -> None:
        """Her account was switched off (agents.accounts.end_access): not one
        more frame; a reconnect is refused (4401) by her account checks."""
        await self.close(code=CLOSE_UNAUTHENTICATED)

    async def send_json(self, content: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(content))

    async def send_frame(self, frame: BaseModel) -> None:
        await self.send(text_data=frame.model_dump_json())

    async def send_error(
        self, code: str, message: str, *, ref: str | None = None
    ) -> None:
        error = ErrorDetail(code=code, message=message)
        await self.send_frame(ErrorFrame(error=error, ref=ref))

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None
    ) -> None:
        """Validate every incoming frame; bad input gets an error frame, never a dead socket."""
        raw = (
            text_data
            if text_data is not None
            else (bytes_data or b"").decode("utf-8", "replace")
        )
        limit = settings.TOOLCRIB_WS_MAX_FRAME_BYTES
        if len(raw.encode("utf-8", "surrogatepass")) > limit:
            # An error, not a close: Daphne refuses to send 1009 for an app, and
            # one frame too many bytes is no reason to drop the client's stream.
            message = _("A frame may be at most %(limit)s bytes.") % {"limit": limit}
            await self.send_error("too_big", message, ref=ref_of(raw))
            return
        try:
            frame = parse_client_frame(raw)
        except BadJson as exc:
            await self.send_error("bad_json", str(exc), ref=ref_of(raw))
            return
        except BadText as exc:
            await self.send_error("bad_frame", str(exc), ref=ref_of(raw))
            return
        except ValidationError as exc:
            await self.send_error("bad_frame", _describe(exc), ref=ref_of(raw))
            return
        await self.handle_frame(frame)

    async def handle_frame(self, frame: ClientFrame) -> None:
        if frame.type == "ping":
            await self.send_frame(PongFrame())
            return
        await self.send_error(
            "unsupported",
            _("Frames of type %(type)r are not accepted here.") % {"type": frame.type},
        )

    async def _act(self, service, *, ref: str | None = None, **kwargs: Any) -> None:
        """Start a turn through a service; ack with its Run, or refuse with why
        (either naming the frame's `ref`)."""
        try:
            run = await database_sync_to_async(service)(**kwargs)
        except DomainError as exc:
            await self.send_error(exc.code, str(exc), ref=ref)
            return
        if isinstance(run, list):  # several runs: a queue cancelled
            cancelled = [AckRun(id=str(one.id), status=one.status) for one in run]
            await self.send_frame(AckFrame(run=None, cancelled=cancelled, ref=ref))
            return
        ack = AckRun(id=str(run.id), status=run.status) if run is not None else None
        await self.send_frame(AckFrame(run=ack, ref=ref))


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "frame"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)


class SessionStreamConsumer(StreamConsumer):
    """`/ws/sessions/{id}/?after=<seq>`: one session's events, and a way to drive it.

    Live frames come from the session's relay (streams.subscribe) through
    deliver(), on the relay's task. While this socket catches up from the
    database (at connect, after a gap) they wait in `pending`, and are sent after
    the backlog, each seq once and in order; while a frame's action runs they wait
    for its ack."""

    socket_kind = "session"
    session: Session
    last_seq: int
    catching_up: bool = True
    subscribed: bool = False

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._unsubscribe()

    async def authorized_connect(self) -> None:
        session_id = self.scope["url_route"]["kwargs"]["session_id"]
        session = await _access_session(self.user, session_id)
        if session is None:
            await self._refuse(CLOSE_NOT_FOUND)
            return
        self.session = session
        try:
            self.last_seq = _after_param(self.scope)
        except BadParameter as exc:
            await self._refuse_parameter(exc)
            return
        await self.join(streams.user_group(self.user.pk), streams.everyone_group())
        self.pending: list[dict[str, Any]] = []
        # Subscribed before the backlog is read: an event committed after the read
        # is rung here, and one committed before it is in the backlog.
        await streams.subscribe(session.id, self)
        self.subscribed = True
        await self.accept()
        await self.catch_up()

    async def replay(self) -> None:
        """Send every stored event after last_seq, in order."""
        while True:
            rows = await _events_after(
                session_id=self.session.id, after=self.last_seq, limit=EVENTS_BATCH
            )
            for row in rows:
                await self.send_json(frame_json(frame_from_row(row)))
                self.last_seq = row.seq
            if len(rows) < EVENTS_BATCH:
                return

    async def catch_up(self) -> None:
        """Send the backlog, then the live frames that came meanwhile."""
        await self.replay()
        await self.send_pending()

    async def send_pending(self) -> None:
        """Send the live frames held meanwhile and stop holding them; a gap among
        them (a doorbell dropped) is said with `lagged` and read back too."""
        while self.pending:
            held, self.pending = self.pending, []
            for message in held:
                if not await self._forward(message):
                    await self.send_frame(LaggedFrame(after=self.last_seq))
                    await self.replay()
        self.catching_up = False

    async def deliver(self, message: dict[str, Any]) -> None:
        """Forward one live event message (streams.Subscriber), or hold it while the
        socket catches up; a gap hands the catching up to this socket's own task."""
        if self.catching_up:
            self.pending.append(message)
            return
        if await self._forward(message):
            return
        self.catching_up = True
        await self.channel_layer.send(self.channel_name, {"type": LAGGED_MESSAGE})

    async def _forward(self, message: dict[str, Any]) -> bool:
        """Send the frame if it is the next seq (or partial); False at a gap."""
        seq = streams.frame_seq(message)
        if seq is not None:
            if seq <= self.last_seq:
                return True
            if seq > self.last_seq + 1:
                return False
            self.last_seq = seq
        # Straight to the server: a socket gets one of these per event.
        text = streams.frame_text(message)  # partial text: a display hint, not stored
        await self.base_send({"type": "websocket.send", "text": text})
        return True

    async def _act(self, service, *, ref: str | None = None, **kwargs: Any) -> None:
        """As StreamConsumer's, with the frame's answer before anything it caused:
        the turn it starts may publish its first events before the service returns
        (in this process, or on a worker), and they wait until the ack is sent."""
        holding = not self.catching_up
        self.catching_up = True
        try:
            await super()._act(service, ref=ref, **kwargs)
        finally:
            if holding:
                await self.send_pending()

    async def stream_lagged(self, message: dict[str, Any]) -> None:
        await self.send_frame(LaggedFrame(after=self.last_seq))
        await self.catch_up()

    async def relay_lost(self) -> None:
        """The relay heard nothing more (Redis lost): the client reconnects and
        replays what it missed."""
        self.subscribed = False
        await self.close(code=CLOSE_RELAY_LOST)

    async def _unsubscribe(self) -> None:
        if self.subscribed:
            self.subscribed = False
            await streams.unsubscribe(self.session.id, self)

    async def account_closed(self, message: dict[str, Any]) -> None:
        await self._unsubscribe()  # not one more frame
        await super().account_closed(message)

    async def access_changed(self, message: dict[str, Any]) -> None:
        if await _access_session(self.user, self.session.id) is None:
            await self._unsubscribe()  # not one more frame
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.send_frame(AccessChangedFrame())

    async def handle_frame(self, frame: ClientFrame) -> None:
        if frame.type == "message":
            # A closed session is refused by start_turn's UPDATE that locks it.
            await self._act(
                start.start_turn,
                ref=frame.ref,
                session=self.session,
                user=self.user,
                text=frame.text,
                tool_choice=frame.tool_choice,
            )
            return
        if frame.type == "function_response":
            await self._act(
                answer_request,
                user=self.user,
                kind=kinds.CALL,
                session_id=self.session.id,
                call_id=frame.call_id,
                answer=frame.response,
            )
            return
        if frame.type == "decide":
            await self._act(
                answer_request,
                user=self.user,
                kind=kinds.APPROVAL,
                session_id=self.session.id,
                request_id=frame.approval_id,
                answer=frame.answer(),
            )
            return
        if frame.type == "cancel":
            await self._act(
                cancel.cancel_session_run,
                user=self.user,
                session=self.session,
                run_id=frame.run,
            )
            return
        if frame.type == "cancel_queue":
            await self._act(
                cancel.cancel_queue, session=self.session, running=frame.running
            )
            return
        if frame.type == "credential":
            await self._act(
                answer_request,
                user=self.user,
                kind=kinds.CREDENTIAL,
                session_id=self.session.id,
                call_id=frame.call_id,
                answer=frame.credential.model_dump(exclude_none=True),
            )
            return
        await super().handle_frame(frame)


class InboxConsumer(StreamConsumer):
    """`/ws/inbox/`: a doorbell for every request the user may answer, or made.

    It joins the inbox groups of its user, of each of their Django groups and,
    for staff, staff's (streams.inbox_*_group): one send per change and group
    reaches every socket that may hear of it (agents.requests.rings). It sends
    the count of requests waiting on the user first, then a `request` frame per
    change; it takes `decide` frames for any approval the user may decide."""

    socket_kind = "inbox"

    async def authorized_connect(self) -> None:
        await self.join(*await _inbox_groups(self.user))
        await self.accept()
        # After joining: a change from now on rings here, so none is missed.
        count = await database_sync_to_async(inbox.count_waiting)(user=self.user)
        await self.send_frame(InboxFrame(count=count))

    async def inbox_changed(self, message: dict[str, Any]) -> None:
        await self.send_json(message["frame"])

    async def handle_frame(self, frame: ClientFrame) -> None:
        if frame.type == "decide":
            await self._act(
                answer_by_id,
                user=self.user,
                kind=kinds.APPROVAL,
                request_id=frame.approval_id,
                answer=frame.answer(),
            )
            return
        await super().handle_frame(frame)


class FilteredStreamConsumer(StreamConsumer):
    """A live view over many sessions, filtered by kinds (and agent, user)."""

    kinds: set[str]

    def wanted(self, message: dict[str, Any]) -> bool:
        if self.kinds and streams.frame_kind(message) not in self.kinds:
            return False
        return self.user.is_staff or message.get("owner") == self.user.pk

    async def event_new(self, message: dict[str, Any]) -> None:
        if self.wanted(message):
            await self.send(text_data=streams.frame_text(message))


class AgentStreamConsumer(FilteredStreamConsumer):
    """`/ws/agents/{name}/?kinds=`: every session of one agent that the subscriber may see."""

    socket_kind = "agent"

    async def authorized_connect(self) -> None:
        name = self.scope["url_route"]["kwargs"]["agent_name"]
        if not await _agent_exists(name, self.user):
            await self._refuse(CLOSE_NOT_FOUND)
            return
        self.kinds = _list_param(self.scope, "kinds")
        await self.join(streams.agent_group(name))
        await self.accept()


class FirehoseConsumer(FilteredStreamConsumer):
    """`/ws/firehose/?agent=&user=&kinds=`: staff see every session's events.

    `user` takes usernames or ids (digits, as the audit's filter reads them); each
    frame names its session's owner (`user`, a username), looked up once a socket."""

    socket_kind = "firehose"

    async def authorized_connect(self) -> None:
        if not self.user.is_staff:
            await self._refuse(CLOSE_FORBIDDEN)
            return
        self.kinds = _list_param(self.scope, "kinds")
        self.agents = _list_param(self.scope, "agent")
        self.usernames: dict[int | None, str | None] = {None: None}
        try:
            self.owners = await _owners(_list_param(self.scope, "user"))
        except BadParameter as exc:
            await self._refuse_parameter(exc)
            return
        await self.join(streams.firehose_group())
        await self.accept()

    def wanted(self, message: dict[str, Any]) -> bool:
        if self.agents and message.get("agent") not in self.agents:
            return False
        if self.owners is not None and message.get("owner") not in self.owners:
            return False
        return super().wanted(message)

    async def event_new(self, message: dict[str, Any]) -> None:
        if not self.wanted(message):
            return
        owner = message.get("owner")
        if owner not in self.usernames:
            self.usernames[owner] = await _username(owner)
        # The frame's JSON object, its owner's name added before its closing brace.
        text = streams.frame_text(message)
        user = json.dumps(self.usernames[owner])
        await self.send(text_data=f'{text[:-1]}, "user": {user}}}')


@database_sync_to_async
def _owners(values: set[str]) -> set[int] | None:
    """The ids of the users `values` name (usernames, or ids in digits 0-9: the
    audit's rule); None for no filter. Unicode digits or an id past the database's
    range: BadParameter."""
    if not values:
        return None
    ids = {parse_whole_number(v, name="user") for v in values if v.isdigit()}
    names = {value for value in values if not value.isdigit() and is_name(value)}
    found = get_user_model().objects.filter(username__in=names)
    return ids | set(found.values_list("pk", flat=True))


@database_sync_to_async
def _username(user_id: int | None) -> str | None:
    """The username of a session's owner; None for a gone one."""
    users = get_user_model().objects.filter(pk=user_id)
    return users.values_list("username", flat=True).first()


def _query(scope) -> dict[str, list[str]]:
    return parse_qs(scope.get("query_string", b"").decode())


def _after_param(scope) -> int:
    values = _query(scope).get("after", [])
    return parse_whole_number(values[0], name="after") if values else 0


def _list_param(scope, name: str) -> set[str]:
    values = _query(scope).get(name, [])
    return {item for value in values for item in value.split(",") if item}


@database_sync_to_async
def _access_session(user, session_id: str) -> Session | None:
    if not is_name(session_id):  # a NUL: no session has it, and PostgreSQL refuses it
        return None
    try:
        return access_session(user=user, session_id=session_id)
    except NotFoundError:
        return None


@database_sync_to_async
def _inbox_groups(user) -> list[str]:
    names = user.groups.values_list("name", flat=True)
    groups = [streams.inbox_user_group(user.pk)]
    groups += [streams.inbox_group_group(name) for name in names]
    if user.is_staff:
        groups.append(streams.inbox_staff_group())
    return groups


@database_sync_to_async
def _agent_exists(name: str, user) -> bool:
    """Whether the agent exists and `user` may use it (its groups: agents.sessions)."""
    return is_name(name) and agents_open_to(user=user).filter(name=name).exists()
