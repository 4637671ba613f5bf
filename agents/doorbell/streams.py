"""Channel-group names (one function per kind of group), publishing, and relays.

apublish_frame() is the one doorbell for a frame, with the Redis error guard;
agents.events.log.record_and_publish() stores an event and rings it. The frame
crosses the layer as the JSON text its renderer encoded once
(agents.events.wire.frame_text), with the few fields a consumer filters on beside
it (event_message()): no subscriber encodes it again.

A session's sockets in one process share one relay (subscribe()): one layer
channel in the session's group, which hands each doorbell to every local
subscriber in turn. A session with 100 sockets costs the layer one message per
event in each process, not 100.

The database is the log; the channel layer is only a doorbell. Publish after the
event is committed, with its seq, so a client that misses a frame replays it.
"""

import asyncio
import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from channels.layers import get_channel_layer
from redis.exceptions import RedisError

from agents.models import Session
from project import metrics
from project.patches.memory_layer import InMemoryChannelLayer
from project.patches.redis_layer import RedisChannelLayer

logger = logging.getLogger(__name__)

# What a doorbell raises when Redis is away; the event is stored all the same.
PUBLISH_ERRORS = (RedisError, OSError)
EVENT_MESSAGE = "event.new"
ACCESS_MESSAGE = "access.changed"
INBOX_MESSAGE = "inbox.changed"
ACCOUNT_MESSAGE = "account.closed"


def session_group(session_id: str) -> str:
    """Every subscriber of one session."""
    return f"session.{session_id}"


def agent_group(agent_name: str) -> str:
    """Every subscriber following one agent."""
    return f"agent.{agent_name}"


def firehose_group() -> str:
    """Staff watching every session."""
    return "firehose"


def user_group(user_id: int) -> str:
    """Every socket of one user: access changes reach them here."""
    return f"user.{user_id}"


def account_group(user_id: int) -> str:
    """Every socket of one user, of any kind: her account switched off closes them."""
    return f"account.{user_id}"


def everyone_group() -> str:
    """Every user's sockets: a change for everyone is one send here."""
    return "users"


def inbox_user_group(user_id: int) -> str:
    """One user's inbox sockets: her own requests, and those only she answers."""
    return f"inbox.user.{user_id}"


def inbox_group_group(group_name: str) -> str:
    """The inbox sockets of one Django group's members.

    A group's name may hold any character and run to 150; a channel group's name
    only [A-Za-z0-9-_.], under 100: so a digest of the name."""
    digest = hashlib.sha256(group_name.encode("utf-8", "surrogatepass")).hexdigest()
    return f"inbox.group.{digest[:40]}"


def inbox_staff_group() -> str:
    """Staff's inbox sockets: staff may answer every call and approval."""
    return "inbox.staff"


_home_loop: asyncio.AbstractEventLoop | None = None


def bind_home_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Record the loop the consumers of this process run on.

    The in-memory layer's queues belong to that loop; a turn running on another
    loop (a Celery worker's, or before any socket bound this one) must hand its
    sends over to it. Inline turns run on it once it is bound
    (agents.turns.loop.turn_loop).
    """
    global _home_loop
    _home_loop = loop


def home_loop() -> asyncio.AbstractEventLoop | None:
    """The sockets' loop, while it runs; None before a socket bound one."""
    loop = _home_loop
    return loop if loop is not None and loop.is_running() else None


async def asend_to_groups(groups: list[str], message: dict[str, Any]) -> None:
    """group_send to each group, on the loop that owns the layer's queues."""
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        await _deliver_in_memory(layer, groups, message)
        return
    if isinstance(layer, RedisChannelLayer):  # every group in one write
        await layer.send_to_groups(groups, message)
        return
    await asyncio.gather(*(layer.group_send(group, message) for group in groups))


# Iterations of the sockets' loop a publisher waits past its delivery: the relays
# run, then their sockets are written (see _deliver_in_memory).
SENT_ON = 3


async def _deliver_in_memory(
    layer: InMemoryChannelLayer, groups: list[str], message: dict[str, Any]
) -> None:
    """The in-memory layer's queues belong to the sockets' loop: deliver there, in
    one call for every group, and wait until the sockets' loop has sent it on.

    Waited for, past the delivery itself: the publisher resumes three iterations of
    the sockets' loop later, after the relays the delivery woke have run (one) and
    their sockets' writes have been flushed (the next two), so a sockets' loop busy
    writing frames slows the turn's publishing down rather than frames queueing up
    behind it. Resuming as soon as the message was queued put the store-to-socket
    p99 at 100 subscribers at 40-140 ms; not waiting at all, at 60-80 ms
    (bench/README.md)."""
    home = home_loop()
    current = asyncio.get_running_loop()
    if home is None:
        layer.deliver(groups, message)
        return
    if home is current:  # a turn on the sockets' loop: the same wait, in place
        layer.deliver(groups, message)
        for _ in range(SENT_ON):
            await asyncio.sleep(0)
        return
    delivered = current.create_future()

    def deliver() -> None:
        try:
            layer.deliver(groups, message)
        except BaseException as error:  # handed back to the publisher
            current.call_soon_threadsafe(_settle, delivered, error)
        else:
            _later(
                home, SENT_ON, current.call_soon_threadsafe, _settle, delivered, None
            )

    home.call_soon_threadsafe(deliver)
    await delivered


def _later(loop: asyncio.AbstractEventLoop, iterations: int, callback, *args) -> None:
    """Call `callback(*args)` on `loop` that many iterations from now."""
    if iterations:
        loop.call_soon(_later, loop, iterations - 1, callback, *args)
    else:
        callback(*args)


def _settle(future: asyncio.Future, error: BaseException | None) -> None:
    if future.done():  # the publisher was cancelled meanwhile
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def event_message(
    *, text: str, seq: int | None, kind: str, agent_name: str, owner_id: int | None
) -> dict[str, Any]:
    """The layer message of one event frame: the frame's JSON text (encoded once,
    by its renderer: agents.events.wire.frame_text), and what consumers filter on
    (seq, kind, agent, owner)."""
    return {
        "type": EVENT_MESSAGE,
        "text": text,
        "seq": seq,
        "kind": kind,
        "agent": agent_name,
        "owner": owner_id,
    }


def frame_text(message: Mapping[str, Any]) -> str:
    """The JSON text of an event message (or of a bare `frame`, as older senders
    ring it)."""
    text = message.get("text")
    return text if text is not None else json.dumps(message["frame"])


def frame_seq(message: Mapping[str, Any]) -> int | None:
    """The seq of an event message; None for a partial (never stored) frame."""
    if "text" in message:
        return message.get("seq")
    return message["frame"].get("seq")


def frame_kind(message: Mapping[str, Any]) -> str:
    if "text" in message:
        return message["kind"]
    return message["frame"]["event"]["kind"]


async def apublish(
    *,
    session_id: str,
    agent_name: str,
    owner_id: int | None,
    text: str,
    seq: int | None,
    kind: str,
) -> None:
    """Ring the doorbell for one event frame (its JSON `text`, its `seq` and its
    event's `kind`) on every group that may want it."""
    message = event_message(
        text=text, seq=seq, kind=kind, agent_name=agent_name, owner_id=owner_id
    )
    groups = [session_group(session_id), agent_group(agent_name), firehose_group()]
    await asend_to_groups(groups, message)


async def apublish_frame(
    session: Session, text: str, *, seq: int | None, kind: str
) -> None:
    """Ring the doorbell for one rendered frame of `session`: its JSON `text`
    (agents.events.wire.frame_text), its `seq` (None: partial) and its event's
    `kind`.

    A doorbell that fails (Redis restarting) is logged, not raised: the event is
    stored, and clients replay it by seq; it must not fail what recorded it."""
    try:
        await apublish(
            session_id=session.id,
            agent_name=session.app_name,
            owner_id=session.owner_id,
            text=text,
            seq=seq,
            kind=kind,
        )
    except PUBLISH_ERRORS:
        metrics.count_publish_failure()
        logger.warning(
            "publish failed session=%s seq=%s", session.id, seq, exc_info=True
        )


async def apublish_inbox(groups: list[str], frame: dict[str, Any]) -> None:
    """Ring the inbox doorbell: one send per group of who hears of a request.

    Logged, not raised, when it fails: the request is stored, and an inbox reads
    the database when it (re)connects."""
    try:
        await asend_to_groups(groups, {"type": INBOX_MESSAGE, "frame": frame})
    except PUBLISH_ERRORS:
        metrics.count_publish_failure()
        logger.warning("inbox publish failed frame=%s", frame, exc_info=True)


async def apublish_access(groups: list[str], message: dict[str, Any]) -> None:
    """Ring the access doorbell (`access.changed`) for these users' groups.

    Logged, not raised, when it fails: the change is committed, and what decides
    access reads it from the database, not from the doorbell."""
    try:
        await asend_to_groups(groups, message)
    except PUBLISH_ERRORS:
        metrics.count_publish_failure()
        logger.warning("access publish failed groups=%d", len(groups), exc_info=True)


async def apublish_account_closed(user_id: int) -> None:
    """Close every open socket of a user (`account.closed`), in every process.

    Logged, not raised, when it fails: she is switched off in the database, and
    her sockets' next frame or reconnect is refused by her account checks."""
    message = {"type": ACCOUNT_MESSAGE}
    try:
        await asend_to_groups([account_group(user_id)], message)
    except PUBLISH_ERRORS:
        metrics.count_publish_failure()
        logger.warning("account publish failed user=%s", user_id, exc_info=True)


class Subscriber(Protocol):
    """A socket fed by a relay (agents.realtime.consumers.SessionStreamConsumer)."""

    async def deliver(self, message: dict[str, Any]) -> None:
        """Take one event message; it must not wait on anything but its socket."""

    async def relay_lost(self) -> None:
        """The relay stopped (the layer's connection was lost): close the socket."""


class _Relay:
    """One process's layer channel in one session's group, and its local subscribers."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.layer = get_channel_layer()
        self.loop = asyncio.get_running_loop()
        self.subscribers: dict[Subscriber, None] = {}  # in the order they came
        self.channel = ""
        self.joined = asyncio.ensure_future(self._join())
        self.task: asyncio.Task | None = None

    async def _join(self) -> None:
        joined = False
        try:
            self.channel = await self.layer.new_channel()
            await self.layer.group_add(self.group, self.channel)
            joined = True
        finally:
            if not joined:  # Redis away: the next subscriber tries afresh
                self._forget()
        self.task = asyncio.ensure_future(self._relay())

    def _forget(self) -> None:
        if _relays.get(self.group) is self:
            del _relays[self.group]

    async def _relay(self) -> None:
        try:
            while True:
                message = await self.layer.receive(self.channel)
                for subscriber in list(self.subscribers):
                    await subscriber.deliver(message)
        except PUBLISH_ERRORS:
            logger.warning("relay lost group=%s", self.group, exc_info=True)
        finally:
            # Cancelled by leave(), or lost (Redis away): either way no socket may
            # stay subscribed to a relay that hears nothing more.
            self._forget()
            for subscriber in list(self.subscribers):
                await subscriber.relay_lost()

    async def leave(self) -> None:
        if self.task is not None:
            self.task.cancel()
        await self.layer.group_discard(self.group, self.channel)


_relays: dict[str, _Relay] = {}


async def subscribe(session_id: str, subscriber: Subscriber) -> None:
    """Feed `subscriber` every event message of the session from now on.

    When this returns, the relay is in the session's group: an event committed
    after this is rung to it, so a backlog read after this misses nothing."""
    group = session_group(session_id)
    relay = _relays.get(group)
    if relay is None or relay.loop is not asyncio.get_running_loop():
        relay = _relays[group] = _Relay(group)
    relay.subscribers[subscriber] = None
    try:
        await asyncio.shield(relay.joined)
    except BaseException:  # not joined (or the socket went): not subscribed
        relay.subscribers.pop(subscriber, None)
        raise


async def unsubscribe(session_id: str, subscriber: Subscriber) -> None:
    """Stop feeding `subscriber`; the last one out takes the relay down."""
    group = session_group(session_id)
    relay = _relays.get(group)
    if relay is None or subscriber not in relay.subscribers:
        return
    del relay.subscribers[subscriber]
    if relay.subscribers:
        return
    del _relays[group]
    await asyncio.shield(relay.joined)
    await relay.leave()
