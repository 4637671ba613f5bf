"""Where a turn runs: inline (a background event loop in this process) or Celery.

Both call runs.execute_turn() by run id. Inline is the embedded default; with
CELERY_BROKER_URL set, turns are queued for workers once the Run row is committed
(a broker that does not answer fails the run, rather than leaving it queued).
"""

import asyncio
import contextvars
import logging
import threading
import time
from concurrent.futures import Future
from importlib import import_module
from uuid import UUID

from celery import Task
from django import db
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError

from agents import recovery
from agents.models import Run

logger = logging.getLogger(__name__)

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()
_futures: dict[UUID, Future] = {}


def _inline_loop() -> asyncio.AbstractEventLoop:
    """The process's turn loop, started on first use in a daemon thread."""
    global _loop
    with _loop_lock:
        if _loop is None or not _loop.is_running():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=serve, name="toolcrib-turns", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


def _execute(run_id: UUID) -> None:
    # runs imports executors; reaching it by name here keeps the import graph acyclic.
    runs = import_module("agents.runs")
    loop = _inline_loop()
    future: Future = Future()
    _futures[run_id] = future

    def start() -> None:
        task = loop.create_task(runs.execute_turn(run_id))
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
    # tasks imports runs, which imports executors: reached by name, like runs above.
    tasks = import_module("agents.tasks")
    try:
        tasks.execute_turn_task.delay(run_id=str(run_id))
    except OperationalError:
        # Left queued, the run would hold up every later turn of its session.
        logger.exception("turn not queued run=%s", run_id)
        recovery.fail_unqueued(run_id)


def later(delay: float, task: Task) -> None:
    """Run a Celery task (one that takes no arguments, such as a sweep) in `delay`
    seconds: on a worker when there is a broker, else on a timer of this process.

    A timer is lost with its process; each sweep also runs at other moments (see
    the task), so a lost timer only delays it."""
    if settings.TOOLCRIB_EXECUTOR == "celery":
        try:
            task.apply_async(countdown=delay)
        except OperationalError:
            logger.exception("not scheduled task=%s", task.name)
        return
    timer = threading.Timer(delay, _run_sweep, args=(task,))
    timer.daemon = True
    timer.start()


def _run_sweep(task: Task) -> None:
    try:
        task()
    except Exception:  # noqa: BLE001 - a timer thread has nobody else to tell
        logger.exception("sweep failed task=%s", task.name)
    finally:
        db.connections.close_all()


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
