"""Celery tasks of turns: shells that take ids, and call the service.

The names are the ones queued messages and workers know: keep them."""

from uuid import UUID

from asgiref.sync import async_to_sync
from celery import shared_task
from celery.signals import worker_ready

from agents.turns import queue
from agents.turns.drive import execute_turn
from agents.turns.loop import run_on_turn_loop


@shared_task(name="agents.execute_turn", acks_late=True, reject_on_worker_lost=True)
def execute_turn_task(*, run_id: str) -> None:
    """Run one queued turn in this worker (see drive.execute_turn)."""
    # On the process's turn loop, not a loop of its own: see agents.turns.loop.
    run_on_turn_loop(execute_turn(UUID(run_id)))


@shared_task(name="agents.fail_lost_runs")
def fail_lost_runs_task() -> int:
    """Fail the running turns whose worker died (see queue.afail_lost_runs)."""
    return async_to_sync(queue.afail_lost_runs)()


@worker_ready.connect
def _sweep_after_start(**kwargs) -> None:
    # A worker that starts may replace one that was killed. The Redis broker gives
    # the killed worker's task back only after its visibility timeout, so look for
    # lost turns now, once the old leases have run out.
    if queue.lease_seconds():
        fail_lost_runs_task.apply_async(countdown=queue.lease_seconds())
