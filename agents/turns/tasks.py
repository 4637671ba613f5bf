"""Celery tasks of turns: shells that take ids, and call the service.

The names are the ones queued messages and workers know: keep them."""

from uuid import UUID

from asgiref.sync import async_to_sync
from celery import shared_task
from celery.signals import worker_ready

from agents.turns import sweep
from agents.turns.drive import execute_turn
from agents.turns.executors import EXECUTE_TURN
from agents.turns.loop import run_on_turn_loop


@shared_task(name=EXECUTE_TURN, acks_late=True, reject_on_worker_lost=True)
def execute_turn_task(*, run_id: str) -> None:
    """Run one queued turn in this worker (see drive.execute_turn)."""
    # On the process's turn loop, not a loop of its own: see agents.turns.loop.
    run_on_turn_loop(execute_turn(UUID(run_id)))


@shared_task(name="agents.fail_lost_runs")
def fail_lost_runs_task() -> int:
    """Sweep the runs a dead process left (see sweep.asweep); how many it ended or
    queued again."""
    swept = async_to_sync(sweep.asweep)()
    return swept.failed_lost + swept.requeued + swept.failed_not_taken


@worker_ready.connect
def _sweep_while_serving(**kwargs) -> None:
    # A worker that starts may replace one that was killed: the Redis broker gives
    # the killed worker's tasks back only after its visibility timeout. Every
    # worker sweeps, on a thread, from now on: a run the killed one left is found
    # by the first sweep after its lease has run out.
    sweep.start()
