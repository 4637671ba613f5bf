"""Sweeps run later: on a worker when there is a broker, else on a timer of this
process. Apart from the turns' executors.py, which imports the turn's driver, and
below the turns, the requests and the notices, so that a module the turn itself
imports (the requests' recorder, say) can schedule its sweep.

A sweep is named by its Celery task's registered name, as a worker knows it: the
sweep may start turns (an expired request resumes its agent), so the module that
schedules it, run by a turn, cannot import it."""

import logging
import threading

from django import db
from django.conf import settings
from kombu.exceptions import OperationalError

from project.celery import app

logger = logging.getLogger(__name__)


def later(delay: float, task_name: str) -> None:
    """Run a Celery task (one that takes no arguments, such as a sweep) in `delay`
    seconds: on a worker when there is a broker, else on a timer of this process.

    A timer is lost with its process; each sweep also runs at other moments (see
    the task), so a lost timer only delays it."""
    if settings.TOOLCRIB_EXECUTOR == "celery":
        try:
            app.send_task(task_name, countdown=delay)
        except OperationalError:
            logger.exception("not scheduled task=%s", task_name)
        return
    timer = threading.Timer(delay, _run_sweep, args=(task_name,))
    timer.daemon = True
    timer.start()


def _run_sweep(task_name: str) -> None:
    try:
        app.tasks[task_name]()
    except Exception:  # noqa: BLE001 - a timer thread has nobody else to tell
        logger.exception("sweep failed task=%s", task_name)
    finally:
        db.connections.close_all()
