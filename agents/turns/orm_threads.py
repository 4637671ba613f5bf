"""A turn's thread for the ORM: one of its own while it runs, kept for the next.

Every ORM call of a turn (`sync_to_async`, thread-sensitive) runs on one thread
that no other turn and no request shares while the turn runs, as Django gives each
request one: a caller blocked waiting for a turn can never starve it. Starting that
thread for every turn and joining it at the end cost the turn loop a thread start
and a join each turn; here a turn borrows an idle one (asgiref's
`ThreadSensitiveContext(executor=...)`) and gives it back when it ends. Threads
beyond `KEPT` idle ones are stopped when given back.

A thread given back releases its database connection as the first thing it does
after the turn, on that thread, before any later turn's call (the turn does not
wait for it): a SQLite connection the turn left clean stays open on the thread for
its next turn (project/sqlite_pool's `release`), any other is closed (back to its
pool). A kept one is checked again the same way when the thread is lent, before
the turn's first call (its file may have been replaced meanwhile). A thread stopped
closes its connection first.
"""

import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator
from concurrent.futures import Future, ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext
from django.db import connection

logger = logging.getLogger(__name__)

KEPT = 64  # idle threads kept for later turns; the rest are stopped

_idle: list[ThreadPoolExecutor] = []
_lock = threading.Lock()


@contextlib.asynccontextmanager
async def turn_thread() -> AsyncIterator[None]:
    """Within the block, thread-sensitive ORM calls run on a thread of the turn's
    own (an idle one, or a new one)."""
    with _lock:
        executor = _idle.pop() if _idle else None
    if executor is None:
        executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="toolcrib-orm", initializer=_as_batch
        )
    else:
        # Before the turn's first call: a connection kept since the last turn is
        # checked again (its file may have been replaced since).
        executor.submit(_check_connection).add_done_callback(_closed)
    try:
        async with ThreadSensitiveContext(executor=executor):
            yield
    finally:
        _give_back(executor)


def _give_back(executor: ThreadPoolExecutor) -> None:
    with _lock:
        kept = len(_idle) < KEPT
        if kept:  # queued before the thread is lent again
            executor.submit(_release_connection).add_done_callback(_closed)
            _idle.append(executor)
    if not kept:
        executor.submit(_close_connection).add_done_callback(_closed)
        executor.shutdown(wait=False)


def _release_connection() -> None:
    """This thread's connection (read on the thread itself), between two turns:
    kept by a backend that can (project.patches.sqlite_pool), else closed."""
    if not _check_connection():
        connection.close()


def _as_batch() -> None:
    """A turn's thread is batch work to Linux's scheduler (SCHED_BATCH): woken by a
    call, it does not preempt the event loop's thread, whose GIL it would wait for
    at once; it runs when the loop waits or its slice ends. At one client that
    ping-pong was two context switches a hop, 36 a turn (bench/README.md)."""
    if not hasattr(os, "SCHED_BATCH"):
        return  # not Linux: the default policy
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError:
        logger.debug("SCHED_BATCH refused; the turn thread keeps the default policy")


def _check_connection() -> bool:
    """A kept connection, checked on its thread (project.patches.sqlite_pool's `release`:
    kept if still clean, closed if not); False for a backend that keeps none."""
    release = getattr(connection, "release", None)
    if release is None:
        return False
    release()
    return True


def _close_connection() -> None:
    connection.close()  # this thread's: read on the thread itself


def _closed(future: Future) -> None:
    if future.exception() is not None:
        logger.error(
            "releasing a turn's connection failed", exc_info=future.exception()
        )


def idle() -> int:
    """How many threads wait for a turn."""
    with _lock:
        return len(_idle)
