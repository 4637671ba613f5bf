"""Where an eval run's driver runs: a Celery worker with TOOLCRIB_EXECUTOR
"celery" (the task `evals.execute_run`, evals/tasks.py), else a thread of this
process. Either way its turns go through the turn queue and its executors like
anyone's: the driver only starts them one after another and waits."""

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import close_old_connections, transaction

from project.celery import app

logger = logging.getLogger(__name__)

EXECUTE_RUN = "evals.execute_run"


def submit(*, run_id: int, drive: Callable[[int], object]) -> None:
    """Start the run's driver once the surrounding transaction commits: `drive`
    (runs.py's execute_run) on a thread here, or the task on a worker."""
    if settings.TOOLCRIB_EXECUTOR == "celery":
        transaction.on_commit(
            lambda: app.send_task(EXECUTE_RUN, kwargs={"run_id": run_id})
        )
        return
    transaction.on_commit(lambda: _thread(run_id, drive))


def _thread(run_id: int, drive: Callable[[int], object]) -> None:
    threading.Thread(
        target=_drive, args=(run_id, drive), name=f"eval-run-{run_id}", daemon=True
    ).start()


def _drive(run_id: int, drive: Callable[[int], object]) -> None:
    try:
        drive(run_id)
    except Exception:
        logger.exception("eval run driver crashed run=%s", run_id)
    finally:
        close_old_connections()
