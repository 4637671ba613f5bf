"""The Redis channel layer: Redis Pub/Sub as the doorbell.

Toolcrib's layer is only a doorbell: an event is in the database with its seq
before it is rung, and a socket that misses one replays it (docs/events.md). So
the layer need not keep a message in Redis for whoever is not listening, as
channels_redis's core layer does (a sorted set per channel, a script to send, a
script and a backup to receive, a blocking pop per process): a message is
PUBLISHed to who listens now, and Redis pushes it to them. A frame rung on its
session's, agent's and firehose groups is one write, and receiving it costs no
command at all.

- A group is a Pub/Sub channel (`<prefix>:g:<group>`). A process subscribes to it
  while a channel of its own is in the group, and `group_add` returns once Redis
  has confirmed the subscription: what is published after that reaches the member.
- A process's channels (`new_channel()`: `specific.<bus>!<id>`) share one Pub/Sub
  channel, `<prefix>:c:specific.<bus>!`, and the message names its channel. A send to
  a channel of this process and event loop skips Redis. Another name is a Pub/Sub
  channel of its own, subscribed to while something receives on it.
- `send_to_groups` sends one message to several groups in one write, encoded once.
  Publishes go out on a connection of their own and wait for no reply (a reader
  takes the replies off, in order): a turn publishing a frame pays for a write, not
  a round trip. One written to a Redis that then died is counted as a failed publish
  (`toolcrib_publish_failures_total`) and logged; one to a Redis that is gone raises,
  as a command would.
- A channel holds at most its capacity; a full one misses a message, as channels'
  layers do (a socket finds the gap by seq and replays it).
- A lost connection (Redis restarted, failed over) ends every receive of that
  process and event loop with ConnectionError, and every later receive on a channel
  made before it: each socket closes (1011), its client reconnects with
  `?after=<seq>` and replays what it missed. The next call connects afresh.
- A message sent to a group or channel nobody listens to is dropped.

Pub/Sub channel names are global to a Redis server (database numbers do not part
them): deployments sharing one Redis need prefixes of their own
(TOOLCRIB_REDIS_PREFIX).

Written for channels 4.3 (BaseChannelLayer), channels_redis 4.3 (its serializers'
registry, `create_pool`, `decode_hosts`) and redis-py 8.2 (an async connection's
`send_command` and `read_response(push_request=True)`). Off
(`TOOLCRIB_PATCHES_OFF=redis_layer`): settings name channels_redis's own core layer
(sorted sets and scripts), with the same hosts, prefix and capacity.
"""

import asyncio
import logging
import math
import types
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from channels.layers import BaseChannelLayer
from channels_redis.serializers import registry
from channels_redis.utils import create_pool, decode_hosts
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from project import metrics

WRITTEN_FOR = {"channels": "4.3", "channels_redis": "4.3", "redis": "8.2"}

logger = logging.getLogger(__name__)

LOST_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)
CHANNEL_KEY = "__asgi_channel__"


class _Lost:
    """Put on every queue of a bus whose connection was lost."""


LOST = _Lost()


class RedisChannelLayer(BaseChannelLayer):
    """A channel layer on Redis Pub/Sub: one subscriber connection per process and
    event loop (a `_Bus`), pushed to; sends published."""

    extensions = ["groups", "flush"]

    def __init__(
        self,
        hosts: Iterable[Any] | None = None,
        prefix: str = "asgi",
        expiry: int = 60,
        capacity: int = 100,
        channel_capacity: dict | None = None,
        symmetric_encryption_keys: Iterable[str] | None = None,
        serializer_format: str = "msgpack",
        **_ignored: Any,  # channels_redis's group_expiry and the like: no use here
    ) -> None:
        super().__init__(
            expiry=expiry, capacity=capacity, channel_capacity=channel_capacity
        )
        decoded = decode_hosts(hosts)
        if len(decoded) != 1:
            raise ValueError("RedisChannelLayer takes exactly one Redis host.")
        self.host = decoded[0]
        self.prefix = prefix
        self.serializer = registry.get_serializer(
            serializer_format, symmetric_encryption_keys=symmetric_encryption_keys
        )
        self._buses: dict[asyncio.AbstractEventLoop, _Bus] = {}

    # Names in Redis.

    def group_key(self, group: str) -> str:
        return f"{self.prefix}:g:{group}"

    def channel_key(self, channel: str) -> str:
        """A process channel's key is its process's; any other name its own."""
        if "!" in channel:
            channel = channel[: channel.index("!") + 1]
        return f"{self.prefix}:c:{channel}"

    def _bus(self) -> "_Bus":
        loop = asyncio.get_running_loop()
        bus = self._buses.get(loop)
        if bus is None or bus.lost:
            bus = self._buses[loop] = _Bus(self, loop)
            _close_with(loop, self)
        return bus

    # The channel layer API.

    async def new_channel(self, prefix: str = "specific.") -> str:
        bus = self._bus()
        await bus.listen_as_process()
        channel = f"{prefix}{bus.id}!{uuid.uuid4().hex}"
        bus.queues[channel] = asyncio.Queue()  # holds what comes before a receive
        return channel

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "message is not a dict"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        bus = self._bus()
        if bus.owns(channel):  # as it would arrive: a copy of its own, or refused
            bus.put(channel, self.deserialize(self.serialize(message)))
            return
        if "!" in channel:
            message = {**message, CHANNEL_KEY: channel}
        await bus.publish([self.channel_key(channel)], self.serialize(message))

    async def receive(self, channel: str) -> dict[str, Any]:
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        bus = self._bus()
        queue = await bus.queue_of(channel)
        try:
            message = await queue.get()
        except asyncio.CancelledError:
            await bus.forget(channel)
            raise
        if message is LOST:
            queue.put_nowait(LOST)  # and for every later receive on it
            raise RedisConnectionError(
                "The connection to Redis was lost; group memberships may be gone."
            )
        return message

    async def group_add(self, group: str, channel: str) -> None:
        assert self.require_valid_group_name(group), "Group name not valid"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        await self._bus().join(group, channel)

    async def group_discard(self, group: str, channel: str) -> None:
        assert self.require_valid_group_name(group), "Group name not valid"
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        await self._bus().leave(group, channel)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self.send_to_groups([group], message)

    async def send_to_groups(
        self, groups: Iterable[str], message: dict[str, Any]
    ) -> None:
        """Send `message` to every member of each group, encoded once, in one write."""
        assert isinstance(message, dict), "message is not a dict"
        keys = []
        for group in groups:
            assert self.require_valid_group_name(group), "Group name not valid"
            keys.append(self.group_key(group))
        await self._bus().publish(keys, self.serialize(message))

    async def flush(self) -> None:
        """Forget this loop's channels and groups and close its connections."""
        bus = self._buses.pop(asyncio.get_running_loop(), None)
        if bus is not None:
            await bus.close()

    def serialize(self, message: dict[str, Any]) -> bytes:
        return self.serializer.serialize(message)

    def deserialize(self, data: bytes) -> dict[str, Any]:
        return self.serializer.deserialize(data)


class _Bus:
    """One event loop's side of the layer: its publishing client, its subscriber
    connection and reader, and the queues and groups of its channels."""

    def __init__(self, layer: RedisChannelLayer, loop: asyncio.AbstractEventLoop):
        self.layer = layer
        self.loop = loop
        self.id = uuid.uuid4().hex
        self.client = Redis(connection_pool=create_pool(layer.host))
        self.queues: dict[str, asyncio.Queue] = {}
        self.groups: dict[str, set[str]] = {}  # group -> this bus's member channels
        # Pub/Sub channels subscribed to, by key: the last SUBSCRIBE's confirmation.
        self.subscribed: dict[str, asyncio.Future] = {}
        # Every SUBSCRIBE sent and not confirmed yet, by key, oldest first: Redis
        # confirms them in order, even past an UNSUBSCRIBE in between.
        self.confirming: dict[str, deque[asyncio.Future]] = {}
        self.lost = False
        self._connection = None
        self._connecting: asyncio.Future | None = None
        self._reader: asyncio.Task | None = None
        self._publisher = _Publisher(self.client)

    async def publish(self, keys: list[str], data: bytes) -> None:
        await self._publisher.publish(keys, data)

    def owns(self, channel: str) -> bool:
        """A process channel made by this bus."""
        return channel.partition("!")[0].endswith(self.id) and "!" in channel

    def put(self, channel: str, message: dict[str, Any] | _Lost) -> None:
        queue = self.queues.get(channel)
        if queue is None:
            return  # nobody receives on it: dropped
        if message is not LOST and queue.qsize() >= self.layer.get_capacity(channel):
            return  # full: it misses this one
        queue.put_nowait(message)

    async def queue_of(self, channel: str) -> asyncio.Queue:
        """The channel's queue; a general channel is subscribed to first. A process
        channel of another bus (one lost since) answers LOST at once."""
        queue = self.queues.get(channel)
        if queue is not None:
            return queue
        queue = self.queues[channel] = asyncio.Queue()
        if "!" in channel and not self.owns(channel):
            queue.put_nowait(LOST)
        elif "!" not in channel:
            await self.subscribe(self.layer.channel_key(channel))
        return queue

    async def forget(self, channel: str) -> None:
        """The channel's receiver went: its queue and memberships go with it."""
        self.queues.pop(channel, None)
        for group in [g for g, members in self.groups.items() if channel in members]:
            await self.leave(group, channel)
        if "!" not in channel:
            await self.unsubscribe(self.layer.channel_key(channel))

    async def listen_as_process(self) -> None:
        await self.subscribe(self.layer.channel_key(f"specific.{self.id}!"))

    async def join(self, group: str, channel: str) -> None:
        if channel not in self.queues:
            await self.queue_of(channel)
        self.groups.setdefault(group, set()).add(channel)
        await self.subscribe(self.layer.group_key(group))

    async def leave(self, group: str, channel: str) -> None:
        members = self.groups.get(group)
        if members is None or channel not in members:
            return
        members.discard(channel)
        if not members:
            del self.groups[group]
            await self.unsubscribe(self.layer.group_key(group))

    async def subscribe(self, key: str) -> None:
        """Subscribe to `key` and wait until Redis confirms it."""
        confirmed = self.subscribed.get(key)
        if confirmed is None:
            confirmed = self.subscribed[key] = self.loop.create_future()
            try:
                connection = await self._connect()
                # Waiting before it is sent: the reader may see the reply first.
                self.confirming.setdefault(key, deque()).append(confirmed)
                await connection.send_command("SUBSCRIBE", key, check_health=False)
            except BaseException:
                if self.subscribed.get(key) is confirmed:
                    del self.subscribed[key]
                raise
        await asyncio.shield(confirmed)

    async def unsubscribe(self, key: str) -> None:
        if self.subscribed.pop(key, None) is None or self.lost:
            return
        connection = await self._connect()
        try:
            await connection.send_command("UNSUBSCRIBE", key, check_health=False)
        except LOST_ERRORS:
            self._lose()

    async def _connect(self):
        """The subscriber connection, and its reader started."""
        if self._connection is not None:
            return self._connection
        if self._connecting is None:
            self._connecting = self.loop.create_future()
            try:
                connection = await self.client.connection_pool.get_connection()
            except BaseException as error:
                self._connecting.set_exception(error)
                self._connecting.exception()  # read: others raise it themselves
                self._connecting = None
                raise
            self._connection = connection
            self._reader = self.loop.create_task(self._read())
            self._connecting.set_result(connection)
        return await asyncio.shield(self._connecting)

    async def _read(self) -> None:
        connection = self._connection
        try:
            while True:
                reply = await connection.read_response(
                    timeout=math.inf, push_request=True
                )
                self._on_reply(reply)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - any failure of the connection ends it
            self._lose()

    def _on_reply(self, reply: list) -> None:
        kind, key = reply[0], reply[1].decode()
        if kind == b"message":
            self._dispatch(key, reply[2])
        elif kind == b"subscribe":
            waiting = self.confirming.get(key)
            if waiting:
                confirmed = waiting.popleft()
                if not waiting:
                    del self.confirming[key]
                if not confirmed.done():
                    confirmed.set_result(None)

    def _dispatch(self, key: str, data: bytes) -> None:
        layer = self.layer
        prefix = f"{layer.prefix}:g:"
        if key.startswith(prefix):
            for channel in list(self.groups.get(key[len(prefix) :], ())):
                self.put(channel, layer.deserialize(data))
            return
        message = layer.deserialize(data)
        channel = message.pop(CHANNEL_KEY, None) or key.removeprefix(
            f"{layer.prefix}:c:"
        )
        self.put(channel, message)

    def _lose(self) -> None:
        """The subscriber connection is gone: every receive ends, and the layer
        makes a new bus for the next call on this loop."""
        if self.lost:
            return
        self.lost = True
        for queue in self.queues.values():
            queue.put_nowait(LOST)
        for confirmed in {*self.subscribed.values()} | {
            future for waiting in self.confirming.values() for future in waiting
        }:
            if not confirmed.done():
                confirmed.set_exception(
                    RedisConnectionError("The connection to Redis was lost.")
                )
                confirmed.exception()  # read here: a waiter may have gone
        self.loop.create_task(self._disconnect())

    async def _disconnect(self) -> None:
        if self._connection is not None:
            await self._connection.disconnect()
        await self.client.aclose(close_connection_pool=True)

    async def close(self) -> None:
        self.lost = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        await self._publisher.close()
        await self._disconnect()


class _Publisher:
    """A connection that PUBLISHes without waiting for Redis' replies: a publish is
    written (and the write drained) and returns; a reader takes the replies off in
    order. One connection keeps one loop's messages in the order they were sent.

    A publish on a connection that is gone raises, as a command would; one lost
    after it was written is counted and logged (`publish_lost`), as a doorbell
    that failed: the events are stored, and clients replay them by seq."""

    def __init__(self, client: Redis) -> None:
        self.client = client
        self._connection = None
        self._reader: asyncio.Task | None = None
        self._lock = asyncio.Lock()
        self._unanswered = 0  # replies the connection owes

    async def publish(self, keys: Sequence[str], data: bytes) -> None:
        connection = self._connection or await self._connect()
        packed = connection.pack_commands([("PUBLISH", key, data) for key in keys])
        self._unanswered += len(keys)
        try:
            await connection.send_packed_command(packed, check_health=False)
        except BaseException:
            self._forget(connection)
            raise

    async def _connect(self):
        async with self._lock:  # one connection, however many publish at once
            if self._connection is None:
                connection = await self.client.connection_pool.get_connection()
                self._connection = connection
                self._reader = asyncio.get_running_loop().create_task(
                    self._read(connection)
                )
            return self._connection

    async def _read(self, connection) -> None:
        while True:
            try:
                await connection.read_response(timeout=math.inf)
            except asyncio.CancelledError:
                raise
            except ResponseError:
                publish_lost("refused by Redis")
            except Exception:  # noqa: BLE001 - the connection is gone
                if self._connection is connection and self._unanswered:
                    publish_lost("connection lost")
                self._forget(connection)
                return
            self._unanswered -= 1

    def _forget(self, connection) -> None:
        if self._connection is connection:
            self._connection = None
            self._unanswered = 0
            asyncio.get_running_loop().create_task(connection.disconnect())

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._connection is not None:
            await self._connection.disconnect()
            self._connection = None


def publish_lost(why: str) -> None:
    """A message written to Redis that may not have been published."""
    metrics.count_publish_failure()
    logger.warning("publish lost: %s", why)


def _close_with(loop: asyncio.AbstractEventLoop, layer: RedisChannelLayer) -> None:
    """Close the loop's bus when the loop closes (asgiref's async_to_sync makes and
    closes loops)."""
    if getattr(loop, "_toolcrib_layers", None) is None:
        loop._toolcrib_layers = set()
        original = loop.close

        def close(self, *args: Any, **kwargs: Any) -> None:
            for each in self._toolcrib_layers:
                bus = each._buses.pop(self, None)
                if bus is not None and not self.is_running():
                    self.run_until_complete(bus.close())
            self.close = original
            original(*args, **kwargs)

        loop.close = types.MethodType(close, loop)
    loop._toolcrib_layers.add(layer)
