"""Celery tasks of requests: the expiry sweep, a shell that takes no arguments.

The name is the one scheduled timers and workers know (record.EXPIRE_REQUESTS):
keep it. agents/apps.py imports this module, so the task is known in every
process, also where a timer runs it without a worker."""

from celery import shared_task
from celery.signals import worker_ready

from agents.requests import expiry
from agents.requests.record import EXPIRE_REQUESTS


@shared_task(name=EXPIRE_REQUESTS)
def expire_requests_task() -> int:
    """Expire the pending requests whose time is up; their agents are told.

    Scheduled for each request's expiry when it is recorded, and run when a
    worker starts."""
    return expiry.expire_due()


@worker_ready.connect
def _sweep_after_start(**kwargs) -> None:
    # Timers of a process that died are gone: catch up on what they would have done.
    expire_requests_task.delay()
