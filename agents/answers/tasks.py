"""Celery tasks of requests: the expiry sweep and the standing approvals' sweep,
shells that take no arguments.

The names are the ones scheduled timers and workers know (record.EXPIRE_REQUESTS,
record.APPROVE_STANDING): keep them. agents/apps.py imports this module, so the
tasks are known in every process, also where a timer runs them without a worker."""

from celery import shared_task
from celery.signals import worker_ready

from agents.answers import expiry, standing
from agents.requests.record import APPROVE_STANDING, EXPIRE_REQUESTS


@shared_task(name=EXPIRE_REQUESTS)
def expire_requests_task() -> int:
    """Expire the pending requests whose time is up; their agents are told.

    Scheduled for each request's expiry when it is recorded, and run when a
    worker starts."""
    return expiry.expire_due()


@shared_task(name=APPROVE_STANDING)
def approve_standing_task() -> int:
    """Approve the pending approvals a requester always allows in their session.

    Scheduled when such an approval is recorded, and run when a worker starts."""
    return standing.approve_standing()


@worker_ready.connect
def _sweep_after_start(**kwargs) -> None:
    # Timers of a process that died are gone: catch up on what they would have done.
    expire_requests_task.delay()
    approve_standing_task.delay()
