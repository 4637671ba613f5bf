"""The session's queue of turns: the Run rows are the queue, its head is claimed by
one conditional UPDATE, and a turn whose process died ends failed.

One turn at a time per session across processes: a turn waits until every earlier
run of its session has ended, then claims its own (aclaim), so a redelivered run
never runs twice.

A lease shows a turn is alive: a running turn holds a short-lived key in the
shared cache (Redis), written and renewed by one thread per process (three times
per lease, all of the process's leases in one write), so a turn spends no cache
round trip of its own on taking it. A key that is missing twice, a lease
apart, belongs to a turn whose process died (a worker killed, a machine lost):
the Run ends failed, with an error event a user can read, and the session's next
turn may start. Everything stored before stays as it was.

A delivery of a queued run holds its lease too, from the moment it has read the
run (while it waits for the session's earlier turns, and claims): a queued run no
delivery holds was taken by a process that died, or is still with the broker;
agents.turns.sweep runs it again, or ends it failed once it has waited too long.

Leases need a cache every process shares: with no REDIS_URL they are off, and
_queue_head() fails a silent turn after twice the turn timeout instead (the
embedded server, one process, knows its own runs: is_held_here).
A run that no broker would take ends failed the same way (fail_unqueued).
"""

import asyncio
import logging
import threading
import time
from collections import Counter
from datetime import timedelta
from typing import Any
from uuid import UUID

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.db.models import Exists, Q
from django.utils import timezone
from redis.exceptions import RedisError

from agents.events.log import arecord_and_publish
from agents.events.wire import run_out
from agents.models import Run
from agents.usage import end_run
from project.patches.prepared import Param, PreparedUpdate

logger = logging.getLogger(__name__)

LOST_CODE = "WORKER_LOST"
LOST_MESSAGE = (
    "The worker running this turn stopped before the turn ended; what it did "
    "until then is kept. Send your message again."
)
UNQUEUED_CODE = "NOT_QUEUED"
UNQUEUED_MESSAGE = (
    "The turn could not be queued: the task broker did not answer. "
    "Send your message again."
)
# A cache that cannot answer says nothing about the turn: it is assumed alive.
CACHE_ERRORS = (RedisError, OSError)
POLL_SECONDS = 0.5
# How often a turn looks whether it heads its session's queue: doubling, up to the max.
POLL_START = 0.02
POLL_MAX = 0.5

# By run: how many of this process's deliveries hold its lease (a broker may hand
# one process the same run twice); renewed while any does.
_held: Counter[UUID] = Counter()
_fresh: set[UUID] = set()  # held, not yet written
_released: set[UUID] = set()  # given up, not yet deleted
_wake = threading.Event()
_renewer: threading.Thread | None = None
_renewer_lock = threading.Lock()


async def aclaim(run: Run, *, tried_first: bool = False) -> bool:
    """Wait until every earlier run of the session has ended, then claim this one.

    One turn at a time per session across processes: the Run rows are the queue,
    and the conditional UPDATE is the claim, so a redelivered run never runs twice.
    A run that heads its queue is claimed by that UPDATE alone (one query); one
    that waits, or follows a run that died, looks at the head first.
    `tried_first`: the caller tried that UPDATE already (claim_if_first), in vain.
    """
    if not tried_first and await sync_to_async(claim_if_first)(run):
        return True
    delay = POLL_START
    while True:
        head = await _queue_head(run.session_id)
        if head is None or head.pk != run.pk:
            if not await Run.objects.filter(
                pk=run.pk, status=Run.Status.QUEUED
            ).aexists():
                return False
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_MAX)
            continue
        now = timezone.now()
        claimed = await Run.objects.filter(pk=run.pk, status=Run.Status.QUEUED).aupdate(
            status=Run.Status.RUNNING, started_at=now
        )
        run.status, run.started_at = Run.Status.RUNNING, now
        return bool(claimed)


def _claim_first() -> PreparedUpdate:
    """Claim a queued run if no earlier unfinished run of its session precedes it:
    one UPDATE, compiled once a process."""
    run = Run._meta

    def param(name: str, field: str) -> Param:
        return Param(name, run.get_field(field))

    created = param("created_at", "created_at")
    earlier = Run.objects.filter(
        session_id=param("session", "session"),
        status__in=[Run.Status.QUEUED, Run.Status.RUNNING],
    ).filter(
        Q(created_at__lt=created) | Q(created_at=created, id__lt=param("pk", "id"))
    )
    return PreparedUpdate(
        Run.objects.filter(pk=param("pk", "id"), status=Run.Status.QUEUED).filter(
            ~Exists(earlier)
        ),
        {"status": Run.Status.RUNNING, "started_at": param("now", "started_at")},
    )


CLAIM_FIRST = _claim_first()


def claim_if_first(run: Run) -> bool:
    """Claim a queued run no earlier unfinished run of its session precedes."""
    now = timezone.now()
    claimed = CLAIM_FIRST.run(
        pk=run.pk, session=run.session_id, created_at=run.created_at, now=now
    )
    if claimed:
        run.status, run.started_at = Run.Status.RUNNING, now
    return bool(claimed)


async def _queue_head(session_id: str) -> Run | None:
    """The oldest unfinished run of a session, after failing a running one that
    died silently (past twice the turn timeout, or its lease lost).

    One query when the head is queued or alive: the stale check reads the head
    itself, and only a stale head costs its UPDATE (and a second look).
    """
    head = (
        await Run.objects.filter(
            session_id=session_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
        )
        .order_by("created_at", "id")
        .afirst()
    )
    if head is None or head.status != Run.Status.RUNNING:
        return head
    if await _afail_if_stale(head) or await afail_if_lost(head.pk):
        return await _queue_head(session_id)
    return head


async def _afail_if_stale(run: Run) -> bool:
    """Fail a running run that started more than twice the turn timeout ago."""
    stale = timezone.now() - timedelta(seconds=settings.TOOLCRIB_TURN_TIMEOUT * 2)
    if run.started_at is None or run.started_at >= stale:
        return False
    return await sync_to_async(end_run)(
        run_id=run.pk,
        where={"status": Run.Status.RUNNING, "started_at__lt": stale},
        status=Run.Status.FAILED,
        finished_at=timezone.now(),
        error="The worker running this turn stopped answering.",
    )


def lease_seconds() -> float:
    """How long a lease lasts; 0 when leases are off."""
    return settings.TOOLCRIB_RUN_LEASE


def _renew_every() -> float:
    return lease_seconds() / 3


def lease_key(run_id: UUID) -> str:
    return f"run-lease:{run_id}"


async def ahold_lease(run_id: UUID) -> None:
    """Take the lease of a run this process has read queued, or claimed, and keep
    renewing it while the turn is this process's.

    The renewer thread writes it at once. Until then the run looks lost to nobody:
    a run is taken for lost only when its key is missing twice, a lease apart.
    With leases off the hold is only noted here (is_held_here).
    """
    _hold(run_id)


async def arelease_lease(run_id: UUID) -> None:
    """Give up a run's lease: the turn has ended. It is no longer renewed at once;
    the renewer thread deletes it (with any other given up meanwhile), so the turn
    waits for no cache call. A lease not deleted (Redis away) expires by itself.
    Another delivery of the run in this process that still holds it keeps it."""
    with _renewer_lock:
        if not _held[run_id]:
            return
        _held[run_id] -= 1
        if _held[run_id]:
            return
        del _held[run_id]
        _fresh.discard(run_id)
        if not lease_seconds():
            return
        _released.add(run_id)
    _wake.set()


def is_held_here(run_id: UUID) -> bool:
    """Whether a delivery in this process holds the run (queued or running)."""
    with _renewer_lock:
        return bool(_held[run_id])


def _hold(run_id: UUID) -> None:
    """Add a lease to the renewed ones, to be written at once; start the renewer if
    none runs."""
    global _renewer
    with _renewer_lock:
        _held[run_id] += 1
        if not lease_seconds():
            return
        _fresh.add(run_id)
        _released.discard(run_id)
        if _renewer is None or not _renewer.is_alive():
            _renewer = threading.Thread(
                target=_renew_while_held, name="toolcrib-leases", daemon=True
            )
            _renewer.start()
    _wake.set()


def _renew_while_held() -> None:
    """Write new leases as they come and renew every lease this process holds; a
    thread, so a busy loop cannot stop it. Ends when no lease is held at a renewal."""
    global _renewer
    renew_at = time.monotonic() + max(_renew_every(), 0.05)
    while True:
        _wake.wait(timeout=max(renew_at - time.monotonic(), 0))
        _wake.clear()
        renew = time.monotonic() >= renew_at
        with _renewer_lock:
            released = list(_released)
            _released.clear()
            stop = renew and not _held
            if stop:
                _renewer = None
            due = list(_held if renew else _fresh)
            _fresh.clear()
        if renew:
            renew_at = time.monotonic() + max(_renew_every(), 0.05)
        _delete_leases(released)
        if stop:
            return
        if not due:
            continue
        try:
            cache.set_many(
                {lease_key(run_id): 1 for run_id in due}, timeout=lease_seconds()
            )
        except CACHE_ERRORS:
            logger.warning("leases not written count=%s", len(due), exc_info=True)


def _delete_leases(released: list[UUID]) -> None:
    if not released:
        return
    try:
        cache.delete_many([lease_key(run_id) for run_id in released])
    except CACHE_ERRORS:
        logger.warning("leases not deleted count=%s", len(released), exc_info=True)


async def _ais_held(run_id: UUID) -> bool:
    try:
        return await cache.aget(lease_key(run_id)) is not None
    except CACHE_ERRORS:
        return True


async def ais_lost(run_id: UUID) -> bool:
    """Whether a running run's lease is gone, and still gone a whole lease later."""
    if not lease_seconds() or await _ais_held(run_id):
        return False
    # A restarted Redis forgets leases too; a live holder writes its own again
    # within one renewal. A holder can be late (its machine loaded, its Redis
    # paused or its connection killed): it is given a whole lease more before its
    # turn is taken for lost, so only a process silent for two leases loses it.
    await asyncio.sleep(max(lease_seconds(), _renew_every() + POLL_SECONDS))
    return not await _ais_held(run_id)


async def afail_if_lost(run_id: UUID) -> bool:
    """End a running run whose process died: failed, with a readable error event.

    Returns whether this call ended it.
    """
    if not await ais_lost(run_id):
        return False
    ended = await aend_failed(
        run_id, was=Run.Status.RUNNING, code=LOST_CODE, message=LOST_MESSAGE
    )
    if ended:
        logger.warning("turn lost its worker run=%s", run_id)
    return ended


def fail_unqueued(run_id: UUID) -> bool:
    """End a queued run the broker would not take: failed, with a readable error."""
    return async_to_sync(aend_failed)(
        run_id, was=Run.Status.QUEUED, code=UNQUEUED_CODE, message=UNQUEUED_MESSAGE
    )


async def aend_failed(run_id: UUID, *, was: str, code: str, message: str) -> bool:
    """Fail a run still in status `was`, then store and publish why; whether it did."""
    ended = await sync_to_async(end_run)(
        run_id=run_id,
        where={"status": was},
        status=Run.Status.FAILED,
        finished_at=timezone.now(),
        error=message,
    )
    if not ended:
        return False
    run = await Run.objects.select_related("session").aget(pk=run_id)
    out = run_out(run)
    await _record(
        run, "error", {"error": {"code": code, "message": message}, "run": out}
    )
    await _record(run, "run_finished", {"run": out})
    return True


async def await_run_end(run_id: UUID) -> None:
    """Wait for a run that another process claimed to end; fail it if that one died.

    A broker delivers a task again when the worker that had it died, or lost its
    connection: this is what such a second delivery does, instead of a second turn.
    """
    if not lease_seconds():
        return
    deadline = time.monotonic() + 2 * settings.TOOLCRIB_TURN_TIMEOUT
    while time.monotonic() < deadline:
        status = await _status_of(run_id)
        if status != Run.Status.RUNNING or await afail_if_lost(run_id):
            return
        await asyncio.sleep(POLL_SECONDS)


async def afail_lost_runs() -> int:
    """Fail every running run whose process died; how many were."""
    if not lease_seconds():
        return 0
    running = Run.objects.filter(status=Run.Status.RUNNING).values_list("pk", flat=True)
    ids = [run_id async for run_id in running]
    ended = await asyncio.gather(*(afail_if_lost(run_id) for run_id in ids))
    return sum(ended)


async def _status_of(run_id: UUID) -> str | None:
    return await Run.objects.filter(pk=run_id).values_list("status", flat=True).afirst()


async def _record(run: Run, kind: str, data: dict[str, Any]) -> None:
    await arecord_and_publish(
        session=run.session, kind=kind, invocation_id=run.invocation_id, data=data
    )
