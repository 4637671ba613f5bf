"""How an A2A caller waits on a task: woken by its session's doorbell.

A task moves only when its session's log does: a run starts, says something, asks
a person, ends; and each of those is a stored event rung on the session's channel
group (agents.doorbell.streams). A caller waiting on a task (`message/send`
blocking, `message/stream`, `tasks/resubscribe`) joins that group through the
process's relay for the session (streams.subscribe: one layer channel per session
and process, however many wait on it) and reads the task again only when a stored
event is rung. While nothing happens it costs no query and no thread: an
`asyncio.Event` on the server's loop; whichever process drives the turn (this one,
another web process, a Celery worker) rings the same group through Redis.

The doorbell is not the log, and may be missed: Redis away when the caller joins,
its connection lost while it waits, or a message dropped for a full channel
(channels_redis drops them with only a log line). So a waiter reads the task
anyway every FALLBACK_SECONDS once its doorbell is lost (or never joined), and
every CHECK_SECONDS while it has one; the task is read afresh each time, from the
database, and a read that finds nothing new yields nothing.
"""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agents.doorbell import streams

logger = logging.getLogger(__name__)

# Seconds between reads of a task whose doorbell is lost (Redis away): slow,
# where 0.2 s polls once held the server's database thread for every waiter.
FALLBACK_SECONDS = 2.0
# Seconds between reads while the doorbell works: only a dropped doorbell
# message is waited out this long.
CHECK_SECONDS = 30.0


class Doorbell:
    """One waiter on a session's group: set when a stored event of it is rung."""

    def __init__(self) -> None:
        self.rung = asyncio.Event()
        self.lost = True  # until joined

    async def deliver(self, message: dict[str, Any]) -> None:
        """A frame of the session: a stored one (with a seq) may move the task;
        a partial one (streamed text, never stored) cannot."""
        if streams.frame_seq(message) is not None:
            self.rung.set()

    async def relay_lost(self) -> None:
        """The relay heard its last (the layer's connection lost): fall back."""
        if not self.lost:
            logger.warning("a2a doorbell lost: reading every %ss", FALLBACK_SECONDS)
        self.lost = True
        self.rung.set()

    async def wait(self, timeout: float | None) -> None:
        """Until the doorbell rings, its interval passes, or `timeout` seconds."""
        interval = FALLBACK_SECONDS if self.lost else CHECK_SECONDS
        if timeout is not None:
            interval = min(interval, max(timeout, 0))
        try:
            await asyncio.wait_for(self.rung.wait(), timeout=interval)
        except TimeoutError:
            pass
        self.rung.clear()


@asynccontextmanager
async def doorbell(session_id: str) -> AsyncIterator[Doorbell]:
    """A doorbell on the session's group for as long as the block runs.

    Joined before the block starts: a change committed after it rings, so a read
    of the task made inside the block misses nothing. With the layer away, the
    doorbell starts lost (the waiter reads every FALLBACK_SECONDS)."""
    bell = Doorbell()
    # The in-memory layer's queues belong to the loop bound here: a turn on
    # another loop (the process's turn thread) hands its doorbell over to it.
    streams.bind_home_loop(asyncio.get_running_loop())
    try:
        await streams.subscribe(session_id, bell)
    except streams.PUBLISH_ERRORS:
        logger.warning(
            "a2a doorbell unavailable session=%s: reading every %ss",
            session_id,
            FALLBACK_SECONDS,
            exc_info=True,
        )
    else:
        bell.lost = False
    try:
        yield bell
    finally:
        await _leave(session_id, bell)


async def _leave(session_id: str, bell: Doorbell) -> None:
    try:
        await streams.unsubscribe(session_id, bell)
    except streams.PUBLISH_ERRORS:  # the layer is away: nothing left to leave
        logger.info("a2a doorbell left with the layer away session=%s", session_id)
