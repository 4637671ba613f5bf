"""The Celery task of notices: a shell that sends what is due.

Its name is the one timers and workers know (enqueue.SEND_NOTICES): keep it.
agents/apps.py imports this module, so the task is known in every process, also
where a timer thread runs it without a worker."""

from celery import shared_task
from celery.signals import worker_ready

from agents.notices import sending
from agents.notices.enqueue import SEND_NOTICES


@shared_task(name=SEND_NOTICES)
def send_notices_task() -> int:
    """Send the notices that are due (new ones, and retries whose time came).

    Scheduled when notices are queued and when an attempt failed, and run when a
    worker starts."""
    return sending.send_due()


@worker_ready.connect
def _send_after_start(**kwargs) -> None:
    # Timers of a process that died are gone: send what they would have sent.
    send_notices_task.delay()
