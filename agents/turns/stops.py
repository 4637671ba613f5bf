"""Stopping a running turn wherever it runs: a stop request reaches the process that
drives it, which cancels the turn's task there.

A stop request is a key in the shared cache (Redis whenever turns run on workers,
which project/settings.py requires), so it crosses processes; the turn watches it
from a task of its own, one cache read per STOP_POLL_SECONDS, never a database query
(the turn's query counts stay as they are). A turn of this very process (the inline
executor, or a stop asked from the worker itself) is woken at once.

`watching(run)` is to a stop what asyncio.timeout is to a deadline: the turn's
task is cancelled where it is (a model call or an async tool in flight included),
and the block raises TurnStopped instead of CancelledError.
"""

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from uuid import UUID

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


async def _ais_requested(run_id: UUID) -> bool:
    try:
        return await cache.aget(stop_key(run_id)) is not None
    except CACHE_ERRORS:
        return False


async def _await_stop(run_id: UUID, event: asyncio.Event) -> None:
    """Return once a stop of the run is asked: here (the event) or in the cache."""
    while not await _ais_requested(run_id):
        with suppress(TimeoutError):
            async with asyncio.timeout(STOP_POLL_SECONDS):
                await event.wait()
            return


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
        await _await_stop(run.pk, event)
        stopped = True
        run.status = Run.Status.CANCELLED
        task.cancel()

    watcher = asyncio.create_task(watch(), name=f"toolcrib-stop-{run.pk}")
    try:
        yield
    except asyncio.CancelledError:
        if not stopped:
            raise
        task.uncancel()
        raise TurnStopped() from None
    finally:
        watcher.cancel()
        with _local_lock:
            _local.pop(run.pk, None)
