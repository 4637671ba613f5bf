"""The Redis channel layer, made to survive a Redis restart.

Redis holds channels_redis's group memberships. A restarted Redis has forgotten
them, and a receiver that reconnects without a word would never hear its groups
again. Only one receiver of a process sees the connection drop (the one blocked
on Redis for everyone), so here that one wakes every other receive of the process
with the same error: each websocket closes (1011), and its client reconnects with
`?after=<seq>` and replays what it missed from the database (docs/events.md).

A group send costs two round trips, whatever the group's size, and group sends
started together (a frame rung on its session's, agent's and firehose groups) share
them: one script reads (and trims) every group's members, one script delivers to
every member's channel. channels_redis's own takes two round trips per group plus
three per group with members. A message to this process's own channel is received in
one round trip while messages wait (channels_redis's takes four: restore script,
BZPOPMIN, backup ZADD, backup ZPOPMIN).
"""

import asyncio
import time
from typing import Any

from channels_redis.core import RedisChannelLayer as BaseRedisChannelLayer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

LOST_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)

# KEYS: group keys; ARGV[1]: a membership older than this score has expired.
# Trims each group, then returns its members.
GROUP_MEMBERS = """
local members = {}
for i = 1, #KEYS do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, ARGV[1])
    members[i] = redis.call('ZRANGE', KEYS[i], 0, -1)
end
return members
"""
# KEYS: channel keys (one may repeat); ARGV: a message, a capacity and a score per
# key (the send's time, a microsecond apart each so that the messages of a batch keep
# their order), then: a message older than this score has expired, the key's expiry.
# channels_redis's group send, for all its keys at once: expired messages go, and
# a full channel misses the message. Returns how many channels were full.
GROUP_DELIVER = """
local n = #KEYS
local expired, expiry = ARGV[3 * n + 1], ARGV[3 * n + 2]
local over_capacity = 0
for i = 1, n do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, expired)
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[n + i]) then
        redis.call('ZADD', KEYS[i], ARGV[2 * n + i], ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
    else
        over_capacity = over_capacity + 1
    end
end
return over_capacity
"""


# ARGV[1]: a channel's key, ARGV[2]: its backup, ARGV[3...]: messages this process
# has delivered from it. Forgets those, puts back what is left in the backup (a
# receive cut short), then pops the next message into the backup; nil if none.
RECEIVE = """
for i = 3, #ARGV do
    redis.call('ZREM', ARGV[2], ARGV[i])
end
local backed_up = redis.call('ZRANGE', ARGV[2], 0, -1, 'WITHSCORES')
for i = #backed_up, 1, -2 do
    redis.call('ZADD', ARGV[1], backed_up[i], backed_up[i - 1])
end
redis.call('DEL', ARGV[2])
local popped = redis.call('ZPOPMIN', ARGV[1])
if popped[1] then
    redis.call('ZADD', ARGV[2], popped[2], popped[1])
    return popped[1]
end
return false
"""


class RedisChannelLayer(BaseRedisChannelLayer):
    """channels_redis's layer; a lost Redis connection ends every receiver."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lost: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        # Group sends waiting for this loop's next batch: (group, message, future).
        self._pending: dict[asyncio.AbstractEventLoop, list[tuple]] = {}
        # This process's channel: the message being received, and those delivered
        # but still in its backup (forgotten by the next receive's script).
        self._popped: dict[str, bytes] = {}
        self._delivered: dict[str, list[bytes]] = {}

    async def _brpop_with_clean(self, index, channel, timeout):
        """channels_redis's, in one round trip while messages wait (RECEIVE); and
        the backup of the process's own channel is cleaned by the next receive
        instead of a ZPOPMIN of its own. Other channels: channels_redis's."""
        if "!" not in channel:
            return await super()._brpop_with_clean(index, channel, timeout)
        connection = self.connection(index)
        backup = self._backup_channel_name(channel)
        delivered = self._delivered.get(channel, [])
        member = await connection.eval(RECEIVE, 0, channel, backup, *delivered)
        # Forgotten in Redis: a later receive need not say them again.
        self._delivered[channel] = self._delivered.get(channel, [])[len(delivered) :]
        if member is None:
            result = await connection.bzpopmin(channel, timeout=timeout)
            if result is None:
                return None
            _, member, timestamp = result
            await connection.zadd(backup, {member: float(timestamp)})
        self._popped[channel] = member
        return member

    async def _clean_receive_backup(self, index, channel):
        """The message was delivered: the next receive's script forgets it."""
        if "!" not in channel:
            await super()._clean_receive_backup(index, channel)
            return
        member = self._popped.pop(channel, None)
        if member is not None:
            self._delivered.setdefault(channel, []).append(member)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        """Send to every channel of a group, in a batch with the group sends
        started in the same turn of the event loop (see the module's docstring)."""
        if self.ring_size != 1:  # sharded: channels_redis's own, per host
            await super().group_send(group, message)
            return
        assert self.require_valid_group_name(group), "Group name not valid"
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        batch = self._pending.setdefault(loop, [])
        if not batch:
            loop.call_soon(self._start_batch, loop)
        batch.append((group, message, done))
        await done

    def _start_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        batch = self._pending.pop(loop, [])
        if batch:
            loop.create_task(self._send_batch(batch))

    async def _send_batch(self, batch: list[tuple]) -> None:
        try:
            await self._deliver(batch)
        except asyncio.CancelledError:
            for _, _, done in batch:
                done.cancel()
            raise
        except Exception as error:  # each sender raises what the batch did
            for _, _, done in batch:
                if not done.done():
                    done.set_exception(error)
        else:
            for _, _, done in batch:
                if not done.done():
                    done.set_result(None)

    async def _deliver(self, batch: list[tuple]) -> None:
        connection = self.connection(0)
        members = await connection.eval(
            GROUP_MEMBERS,
            len(batch),
            *(self._group_key(group) for group, _, _ in batch),
            int(time.time()) - self.group_expiry,
        )
        keys: list[str] = []
        messages: list[bytes] = []
        capacities: list[int] = []
        for (_, message, _), names in zip(batch, members, strict=True):
            channels = [name.decode("utf8") for name in names]
            _, to_send, capacity = self._map_channel_keys_to_connection(
                channels, message
            )
            for key, data in to_send.items():
                keys.append(key)
                messages.append(data)
                capacities.append(capacity[key])
        if not keys:
            return
        now = time.time()
        await connection.eval(
            GROUP_DELIVER,
            len(keys),
            *keys,
            *messages,
            *capacities,
            *(now + index / 1e6 for index in range(len(keys))),
            int(now) - int(self.expiry),
            self.expiry,
        )

    def _lost_event(self) -> asyncio.Event:
        """The event of this loop that the next lost connection sets."""
        loop = asyncio.get_running_loop()
        if self._lost is None or self._lost[0] is not loop:
            self._lost = (loop, asyncio.Event())
        return self._lost[1]

    def _signal_lost(self) -> None:
        event = self._lost_event()
        self._lost = None  # Receives that start from now on wait on a fresh event.
        event.set()

    async def receive(self, channel: str) -> dict[str, Any]:
        """channels_redis's receive, or the error that ended another receiver's."""
        lost = self._lost_event()
        receiving = asyncio.ensure_future(super().receive(channel))
        waiting = asyncio.ensure_future(lost.wait())
        try:
            await asyncio.wait(
                {receiving, waiting}, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            _abandon(receiving)
            raise
        finally:
            waiting.cancel()
        if receiving.done():
            return receiving.result()
        _abandon(receiving)
        raise RedisConnectionError(
            "The connection to Redis was lost; group memberships may be gone."
        )

    async def receive_single(self, channel: str) -> tuple[Any, Any]:
        try:
            return await super().receive_single(channel)
        except LOST_ERRORS:
            self._signal_lost()
            raise


def _abandon(task: asyncio.Future) -> None:
    """Cancel a receive nobody waits for; whatever it ends with is read, not logged."""
    task.cancel()
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
