"""Celery tasks: shells that take ids, and call the service."""

import asyncio
from uuid import UUID

from asgiref.sync import async_to_sync
from celery import shared_task
from celery.signals import worker_ready

from agents import recovery
from agents.runs import execute_turn


@shared_task(name="agents.execute_turn", acks_late=True, reject_on_worker_lost=True)
def execute_turn_task(*, run_id: str) -> None:
    """Run one queued turn in this worker (see runs.execute_turn)."""
    asyncio.run(execute_turn(UUID(run_id)))


@shared_task(name="agents.fail_lost_runs")
def fail_lost_runs_task() -> int:
    """Fail the running turns whose worker died (see recovery.afail_lost_runs)."""
    return async_to_sync(recovery.afail_lost_runs)()


@worker_ready.connect
def _sweep_after_start(**kwargs) -> None:
    # A worker that starts may replace one that was killed. The Redis broker gives
    # the killed worker's task back only after its visibility timeout, so look for
    # lost turns now, once the old leases have run out.
    if recovery.lease_seconds():
        fail_lost_runs_task.apply_async(countdown=recovery.lease_seconds())
