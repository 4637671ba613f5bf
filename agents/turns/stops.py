"""Stopping a running turn wherever it runs: a stop request reaches the process that
drives it, which cancels the turn's task there.

A stop request is a key in the shared cache (Redis whenever turns run on workers,
which project/settings.py requires), so it crosses processes. One watcher per event
loop reads the keys of every turn running there, one cache read (get_many) per
STOP_POLL_SECONDS however many turns run, never a database query (the turn's query
counts stay as they are). A turn of this very process (the inline executor, or a
stop asked from the worker itself) is woken at once.

`watching(run)` is to a stop what asyncio.timeout is to a deadline: the turn's
task is cancelled where it is (a model call or an async tool in flight included),
and the block raises TurnStopped instead of CancelledError.

Safe under threads: a watcher belongs to one loop and is used only there; the map
of loops to watchers, and of this process's turns to their loops, change under a
lock, and a loop's watcher is read without one once made
(tests/agents/turns/test_stops_threads.py).
"""

import asyncio
import contextvars
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from agents.models import Run

logger = logging.getLogger(__name__)

STOP_POLL_SECONDS = 0.2
# A cache that cannot answer says nothing about a stop: the turn goes on.
CACHE_ERRORS = (RedisError, OSError)

_local: dict[UUID, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}
_local_lock = threading.Lock()


class TurnStopped(Exception):
    """The turn was stopped by a person; its Run was ended by who stopped it."""


def stop_key(run_id: UUID) -> str:
    return f"run-stop:{run_id}"


def request_stop(*, run_id: UUID) -> None:
    """Ask the turn of `run_id` to stop, in whichever process drives it."""
    try:
        # Long enough for a turn that has not yet seen it; gone after that.
        cache.set(stop_key(run_id), 1, timeout=settings.TOOLCRIB_TURN_TIMEOUT * 2)
    except CACHE_ERRORS:
        logger.warning("stop not written run=%s", run_id, exc_info=True)
    with _local_lock:
        local = _local.get(run_id)
    if local is not None:
        loop, event = local
        loop.call_soon_threadsafe(event.set)


class _Watcher:
    """The turns watched on one event loop, and the task that reads their keys."""

    def __init__(self) -> None:
        self.events: dict[UUID, asyncio.Event] = {}
        self.task: asyncio.Task | None = None

    def watch(self, run_id: UUID, event: asyncio.Event) -> None:
        self.events[run_id] = event
        if self.task is None or self.task.done():
            # In a context of its own: it outlives the turn that started it.
            self.task = asyncio.create_task(
                self._poll(), name="toolcrib-stops", context=contextvars.Context()
            )

    def unwatch(self, run_id: UUID) -> None:
        self.events.pop(run_id, None)

    async def _poll(self) -> None:
        """Set the event of every watched turn whose stop key is in the cache;
        end when no turn is watched."""
        while self.events:
            await asyncio.sleep(STOP_POLL_SECONDS)
            keys = {stop_key(run_id): run_id for run_id in self.events}
            if not keys:
                break
            for key in await _arequested(list(keys)):
                event = self.events.get(keys[key])
                if event is not None:
                    event.set()


_watchers: dict[asyncio.AbstractEventLoop, _Watcher] = {}
# Making a loop's watcher sweeps out those of closed loops: one thread at a time,
# since another loop's thread may be making its own (a dict changed while it is
# walked raises, and two sweeps delete one entry twice).
_watchers_lock = threading.Lock()


async def _arequested(keys: list[str]) -> list[str]:
    """Which of the stop keys are set."""
    try:
        return await sync_to_async(_requested, thread_sensitive=False)(keys)
    except CACHE_ERRORS:
        return []


def _requested(keys: list[str]) -> list[str]:
    return list(cache.get_many(keys))


def _watcher() -> _Watcher:
    loop = asyncio.get_running_loop()
    watcher = _watchers.get(loop)
    if watcher is not None:
        return watcher
    with _watchers_lock:
        for closed in [other for other in _watchers if other.is_closed()]:
            del _watchers[closed]
        watcher = _watchers[loop] = _Watcher()
    return watcher


@asynccontextmanager
async def watching(run: Run) -> AsyncIterator[None]:
    """Run the block as the turn of `run`; a stop request cancels it.

    The Run object says it was stopped (`status` cancelled) before the task is
    cancelled, so what runs during the cancellation (the audit of a call cut
    short) can tell a stop from the turn timeout.

    Raises:
        TurnStopped: A stop was asked while the block ran.
    """
    task = asyncio.current_task()
    event = asyncio.Event()
    with _local_lock:
        _local[run.pk] = (asyncio.get_running_loop(), event)
    stopped = False

    async def watch() -> None:
        nonlocal stopped
        await event.wait()
        stopped = True
        run.status = Run.Status.CANCELLED
        task.cancel()

    waiter = asyncio.create_task(watch(), name=f"toolcrib-stop-{run.pk}")
    watcher = _watcher()
    watcher.watch(run.pk, event)
    try:
        yield
    except asyncio.CancelledError:
        if not stopped:
            raise
        task.uncancel()
        raise TurnStopped() from None
    finally:
        watcher.unwatch(run.pk)
        waiter.cancel()
        with _local_lock:
            _local.pop(run.pk, None)
