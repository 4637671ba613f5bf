"""The Redis channel layer, made to survive a Redis restart.

Redis holds channels_redis's group memberships. A restarted Redis has forgotten
them, and a receiver that reconnects without a word would never hear its groups
again. Only one receiver of a process sees the connection drop (the one blocked
on Redis for everyone), so here that one wakes every other receive of the process
with the same error: each websocket closes (1011), and its client reconnects with
`?after=<seq>` and replays what it missed from the database (docs/events.md).
"""

import asyncio
from typing import Any

from channels_redis.core import RedisChannelLayer as BaseRedisChannelLayer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

LOST_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)


class RedisChannelLayer(BaseRedisChannelLayer):
    """channels_redis's layer; a lost Redis connection ends every receiver."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lost: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

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
