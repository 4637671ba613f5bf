"""No run waits forever: the runs a process that died left behind, found, and
ended or run again.

A sweep (asweep) looks at every unfinished run that no delivery of any process
holds (queue.py's leases, held from the moment a delivery has read the run; with
leases off, the embedded server is the one process that runs turns and knows its
own: queue.is_held_here):

- running: its process died mid-turn. It ends failed (queue.LOST_CODE); its model
  calls and tools may have had effects, so it is never run again.
- queued for longer than TOOLCRIB_REQUEUE_SECONDS (longer again after each time):
  a process took it and died before the turn started, or its start failed and
  could not even be failed. Nothing of it has run, so it is queued again; the
  Run's `requeues` counts each time, and the events about it say so.
- queued and unheld for longer than twice the turn timeout: it ends failed
  (NOT_TAKEN_CODE), so the session's queue goes on.

Sweeps run on a thread of every Celery worker and of a web server that runs turns
inline, every TOOLCRIB_SWEEP_SECONDS; the embedded server's first one, as it
starts, takes what its previous life left as lost at once.
"""

import asyncio
import logging
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.db.models import F
from django.utils import timezone

from agents.models import Run
from agents.turns import executors, queue
from project import metrics

logger = logging.getLogger(__name__)

NOT_TAKEN_CODE = "NOT_TAKEN"
NOT_TAKEN_MESSAGE = (
    "No worker took this turn for {minutes} minutes, so it was dropped. "
    "Send your message again."
)
# A run this young is still between its claim and its hold: never judged.
SETTLE_SECONDS = 5.0

_started_at = timezone.now()  # this process's start, as the embedded sweep needs it
_sweeper: threading.Thread | None = None
_sweeper_lock = threading.Lock()


@dataclass
class Swept:
    """What one sweep did."""

    failed_lost: int = 0
    requeued: int = 0
    failed_not_taken: int = 0


async def asweep(*, now: datetime | None = None) -> Swept:
    """End, or queue again, every unfinished run no delivery holds (see above)."""
    now = now or timezone.now()
    swept = Swept()
    # The partial index's own condition, literally (Run.UNFINISHED_SQL).
    unfinished = Run.objects.extra(where=[Run.UNFINISHED_SQL]).values_list(
        "pk", "status", "created_at", "started_at", "requeues"
    )
    candidates = [row async for row in unfinished.order_by("created_at")]
    lost = await asyncio.gather(*(_ais_unheld(row, now) for row in candidates))
    for (run_id, status, created_at, _, requeues), unheld in zip(
        candidates, lost, strict=True
    ):
        if not unheld:
            continue
        if status == Run.Status.RUNNING:
            swept.failed_lost += await _afail_lost(run_id)
        elif now - created_at > _give_up_after():
            swept.failed_not_taken += await _afail_not_taken(run_id)
        elif now - created_at > _requeue_after() * (requeues + 1):
            swept.requeued += await _arequeue(run_id, requeues)
    if swept != Swept():
        logger.warning("runs swept %s", swept)
    return swept


async def _ais_unheld(row: tuple, now: datetime) -> bool:
    """Whether no delivery of any process holds the run (with leases off: of this
    process, the only one), once it has had time to settle."""
    run_id, status, created_at, started_at, _ = row
    since = started_at if status == Run.Status.RUNNING else created_at
    if queue.lease_seconds():
        if since and now - since < timedelta(seconds=SETTLE_SECONDS):
            return False
        return await queue.ais_lost(run_id)
    if queue.is_held_here(run_id):
        return False
    # The embedded server: a run from before it started has nobody to run it.
    before_this_process = since is None or since < _started_at
    settled = since is None or now - since >= timedelta(seconds=SETTLE_SECONDS)
    return before_this_process or settled


async def _afail_lost(run_id: UUID) -> int:
    ended = await queue.aend_failed(
        run_id,
        was=Run.Status.RUNNING,
        code=queue.LOST_CODE,
        message=queue.LOST_MESSAGE,
    )
    if ended:
        metrics.RUNS_RECOVERED.labels("failed_lost").inc()
    return int(ended)


async def _afail_not_taken(run_id: UUID) -> int:
    minutes = round(_give_up_after().total_seconds() / 60)
    ended = await queue.aend_failed(
        run_id,
        was=Run.Status.QUEUED,
        code=NOT_TAKEN_CODE,
        message=NOT_TAKEN_MESSAGE.format(minutes=minutes),
    )
    if ended:
        metrics.RUNS_RECOVERED.labels("failed_not_taken").inc()
    return int(ended)


async def _arequeue(run_id: UUID, requeues: int) -> int:
    """Queue a run again, once whatever number of sweeps find it at once: the
    count moves from `requeues` by one conditional UPDATE, and only its winner
    hands the run to the executor."""
    taken = await Run.objects.filter(
        pk=run_id, status=Run.Status.QUEUED, requeues=requeues
    ).aupdate(requeues=F("requeues") + 1)
    if not taken:
        return 0
    logger.warning("turn queued again run=%s requeues=%s", run_id, requeues + 1)
    metrics.RUNS_RECOVERED.labels("requeued").inc()
    await sync_to_async(executors.submit)(run_id=run_id)
    return 1


def _requeue_after() -> timedelta:
    return timedelta(seconds=settings.TOOLCRIB_REQUEUE_SECONDS)


def _give_up_after() -> timedelta:
    return timedelta(seconds=2 * settings.TOOLCRIB_TURN_TIMEOUT)


def start() -> None:
    """Sweep on a thread of this process, every TOOLCRIB_SWEEP_SECONDS (with a
    little jitter, so workers started together do not sweep together); once."""
    global _sweeper
    if settings.TOOLCRIB_SWEEP_SECONDS <= 0:
        return
    with _sweeper_lock:
        if _sweeper is not None and _sweeper.is_alive():
            return
        _sweeper = threading.Thread(
            target=_sweep_forever, name="toolcrib-sweep", daemon=True
        )
        _sweeper.start()


def _sweep_forever() -> None:
    while True:
        try:
            async_to_sync(asweep)()
        except Exception:  # noqa: BLE001 - the next sweep tries again
            logger.exception("sweep failed")
        finally:
            close_old_connections()
        every = settings.TOOLCRIB_SWEEP_SECONDS
        time.sleep(every * random.uniform(0.8, 1.2))
