"""Celery tasks of evals: a run's driver on a worker (evals.running.dispatch)."""

from celery import shared_task

from evals.running.dispatch import EXECUTE_RUN
from evals.running.runs import execute_run


@shared_task(name=EXECUTE_RUN)
def execute_run_task(*, run_id: int) -> None:
    """Drive one queued eval run to its end in this worker."""
    execute_run(run_id)
