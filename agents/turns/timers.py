"""Sweeps run later: on a worker when there is a broker, else on a timer of this
process. Apart from executors.py, which imports the turn's driver, so that a module
the turn itself imports (an approval recorder, say) can schedule its sweep."""

import logging
import threading

from celery import Task
from django import db
from django.conf import settings
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)


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
