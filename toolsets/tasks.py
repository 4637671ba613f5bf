"""Celery tasks of the tool catalog: sweeps that take no arguments."""

from celery import shared_task
from celery.signals import worker_ready

from toolsets.approvals import expire_due


@shared_task(name="toolsets.expire_approvals")
def expire_approvals_task() -> int:
    """Reject the pending approvals whose time is up; their agents are told.

    Scheduled for each approval's expiry when it is asked (record_approvals), run
    when a worker starts, and whenever approvals are listed or decided."""
    return expire_due()


@worker_ready.connect
def _sweep_after_start(**kwargs) -> None:
    # Timers of a process that died are gone: catch up on what they would have done.
    expire_approvals_task.delay()
