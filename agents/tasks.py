"""Celery tasks: shells that take ids, and call the service."""

import asyncio
from uuid import UUID

from celery import shared_task

from agents.runs import execute_turn


@shared_task(name="agents.execute_turn", acks_late=True, reject_on_worker_lost=True)
def execute_turn_task(*, run_id: str) -> None:
    """Run one queued turn in this worker (see runs.execute_turn)."""
    asyncio.run(execute_turn(UUID(run_id)))
