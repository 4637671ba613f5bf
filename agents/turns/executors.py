"""Where a turn runs: inline (a background event loop in this process) or Celery.

Both call drive.execute_turn() by run id (a worker through tasks.py). Inline is
the embedded default; with CELERY_BROKER_URL set, turns are queued for workers once
the Run row is committed (a broker that does not answer fails the run, rather than
leaving it queued). Sweeps scheduled for later are in timers.py.
"""

import asyncio
import contextvars
import logging
import time
from concurrent.futures import Future
from uuid import UUID

from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError

from agents.models import Run
from agents.turns import drive, queue
from agents.turns.loop import turn_loop
from project.celery import app

logger = logging.getLogger(__name__)

# The Celery task that runs a turn on a worker (tasks.py), by the name queued
# messages and workers know it: sent by name, so tasks.py may import this module.
EXECUTE_TURN = "agents.execute_turn"

_futures: dict[UUID, Future] = {}


def _execute(run_id: UUID) -> None:
    loop = turn_loop()
    future: Future = Future()
    _futures[run_id] = future

    def start() -> None:
        task = loop.create_task(drive.execute_turn(run_id))
        task.add_done_callback(lambda done: _settle(run_id, future, done))

    # An empty context: the caller's context variables (a consumer's thread-sensitive
    # executor, say) must not leak into a turn that outlives the caller.
    loop.call_soon_threadsafe(start, context=contextvars.Context())


def _settle(run_id: UUID, future: Future, task: asyncio.Task) -> None:
    _futures.pop(run_id, None)
    if task.cancelled():
        future.cancel()
    elif task.exception() is not None:
        logger.error("turn crashed run=%s", run_id, exc_info=task.exception())
        future.set_exception(task.exception())
    else:
        future.set_result(None)


def submit(*, run_id: UUID) -> None:
    """Queue a recorded run; it starts once the surrounding transaction commits."""
    if settings.TOOLCRIB_EXECUTOR == "celery":
        transaction.on_commit(lambda: _enqueue(run_id))
        return
    transaction.on_commit(lambda: _execute(run_id))


def _enqueue(run_id: UUID) -> None:
    """Queue a committed run for the workers; a run no broker takes ends failed."""
    try:
        app.send_task(EXECUTE_TURN, kwargs={"run_id": str(run_id)})
    except OperationalError:
        # Left queued, the run would hold up every later turn of its session.
        logger.exception("turn not queued run=%s", run_id)
        queue.fail_unqueued(run_id)


def wait(*, run_id: UUID, timeout: float) -> None:
    """Block until the run has ended or the timeout has passed."""
    future = _futures.get(run_id)
    if future is not None:
        try:
            future.result(timeout=timeout)
        except TimeoutError:
            return
        return
    _poll_until_finished(run_id, timeout)


def _poll_until_finished(run_id: UUID, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = Run.objects.filter(pk=run_id).values_list("status", flat=True).first()
        if status in Run.TERMINAL or status is None:
            return
        time.sleep(0.05)
