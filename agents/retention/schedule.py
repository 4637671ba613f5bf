"""The retention job every TOOLCRIB_RETENTION_SECONDS on a thread of this process:
the embedded server's schedule (project/asgi.py starts it when turns run inline).
With a broker, Celery beat schedules `agents.apply_retention` instead (tasks.py).
Several processes running it at once are safe: the lease lets one work."""

import logging
import random
import threading
import time

from django.conf import settings
from django.db import close_old_connections

from agents.retention.jobs import apply_retention

logger = logging.getLogger(__name__)

# The first run waits this long after start (at most one period), so a server's
# start-up is not slowed by it.
FIRST_DELAY_SECONDS = 60.0

_thread: threading.Thread | None = None
_lock = threading.Lock()


def start() -> None:
    """Run the job on a thread of this process, every TOOLCRIB_RETENTION_SECONDS;
    once per process; nothing when that is 0."""
    global _thread
    if settings.TOOLCRIB_RETENTION_SECONDS <= 0:
        return
    with _lock:
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(
            target=_apply_forever, name="toolcrib-retention", daemon=True
        )
        _thread.start()


def _apply_forever() -> None:
    every = settings.TOOLCRIB_RETENTION_SECONDS
    time.sleep(min(FIRST_DELAY_SECONDS, every) * random.uniform(0.8, 1.2))
    while True:
        try:
            apply_retention()
        except Exception:  # noqa: BLE001 - the next run tries again
            logger.exception("retention failed")
        finally:
            close_old_connections()
        time.sleep(every * random.uniform(0.9, 1.1))
