"""A run of the retention job: the jobs of TOOLCRIB_RETENTION_JOBS, in order, each
removing what its setting says is too old, a bounded batch per transaction.

A job is an object with a `kind` and two methods (`Job`): `plan` counts what it
would remove, `remove` removes it, yielding what each batch removed. The runtime's
jobs live in `sessions.py`; the audit's in toolsets (`toolsets/retention.py`), named
by the setting, since the runtime never imports governance (DESIGN.md rule 1).

`apply_retention` runs them under the `retention` lease (`lease.py`): a second run
at once, in this process or another, finds it held and does nothing. Every batch's
transaction renews the lease first, which on SQLite also takes the write lock.
`plan_retention` is the dry run: it counts, and changes nothing.
"""

import logging
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.module_loading import import_string

from agents.retention import lease
from agents.retention.archive import Archive
from project import metrics

logger = logging.getLogger(__name__)

LEASE = "retention"
# Seconds the lease lasts without a renewal: far longer than a batch takes.
LEASE_SECONDS = 300.0


@dataclass(frozen=True)
class Scope:
    """What a run looks at: the time it judges age by, and one agent's rows or all."""

    now: datetime
    agent: str | None = None

    def cutoff(self, days: int) -> datetime:
        """The time before which a row `days` days old is too old."""
        return self.now - timedelta(days=days)


@dataclass
class Count:
    """Rows of one kind and agent, removed or to remove, and the oldest date among
    them where the kind has one that decides (a session's last activity)."""

    kind: str
    agent: str
    rows: int
    oldest: datetime | None = None


class Batch:
    """What a job's batches share: their size, the run's archive, their transaction."""

    def __init__(self, *, size: int, archive: Archive | None, holder: str) -> None:
        self.size = max(1, size)
        self.archive = archive
        self._holder = holder

    def take(self, rows: QuerySet) -> list:
        """The primary keys of the next batch of `rows`, archived first, on the
        disk before the caller deletes them (whole rows read only then: without an
        archive the keys are enough). Outside any transaction: the archive's
        writing holds no lock."""
        if self.archive is None:
            return list(rows.values_list("pk", flat=True)[: self.size])
        taken = list(rows[: self.size])
        self.archive.write(taken)
        self.archive.flush()
        return [row.pk for row in taken]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One batch's transaction, the lease renewed first (LeaseLost if gone)."""
        with transaction.atomic():
            lease.renew(name=LEASE, holder=self._holder, seconds=LEASE_SECONDS)
            yield


class Job(Protocol):
    """One kind of row the retention job removes."""

    kind: str

    def plan(self, *, scope: Scope) -> list[Count]:
        """What a run would remove now, by kind and agent."""
        ...

    def remove(self, *, scope: Scope, batch: Batch) -> Iterator[list[Count]]:
        """Remove it, one batch per transaction (`batch.transaction()`), the
        archive written first; yields what each batch removed."""
        ...


@dataclass
class Report:
    """What a run removed (or, dry, would remove)."""

    dry_run: bool
    counts: list[Count] = field(default_factory=list)
    archive: Path | None = None
    # Another run held the lease: this one removed nothing.
    skipped: bool = False

    def total(self, kind: str) -> int:
        return sum(count.rows for count in self.counts if count.kind == kind)


def jobs() -> list[Job]:
    """The jobs of TOOLCRIB_RETENTION_JOBS, in order."""
    return [import_string(path) for path in settings.TOOLCRIB_RETENTION_JOBS]


def plan_retention(*, agent: str | None = None, now: datetime | None = None) -> Report:
    """The dry run: what apply_retention would remove now; nothing changes."""
    scope = Scope(now=now or timezone.now(), agent=agent)
    counts = [count for job in jobs() for count in job.plan(scope=scope)]
    return Report(dry_run=True, counts=_merged(counts))


def apply_retention(*, agent: str | None = None, now: datetime | None = None) -> Report:
    """Remove what is older than the retention settings allow (docs/retention.md),
    archived first when TOOLCRIB_RETENTION_ARCHIVE_DIR is set; nothing while another
    run holds the lease."""
    scope = Scope(now=now or timezone.now(), agent=agent)
    holder = uuid.uuid4().hex
    if not lease.claim(name=LEASE, holder=holder, seconds=LEASE_SECONDS):
        logger.info("retention skipped: another run holds the lease")
        return Report(dry_run=False, skipped=True)
    archive = _archive(scope, holder)
    batch = Batch(
        size=settings.TOOLCRIB_RETENTION_BATCH, archive=archive, holder=holder
    )
    removed: list[Count] = []
    try:
        for job in jobs():
            for counts in job.remove(scope=scope, batch=batch):
                _count(counts)
                removed.extend(counts)
    finally:
        path = archive.close() if archive else None
        lease.release(name=LEASE, holder=holder)
    report = Report(dry_run=False, counts=_merged(removed), archive=path)
    if report.counts:
        logger.info("retention removed %s", _summary(report.counts))
    return report


def _archive(scope: Scope, holder: str) -> Archive | None:
    folder = settings.TOOLCRIB_RETENTION_ARCHIVE_DIR
    if not folder:
        return None
    return Archive(folder=Path(folder), started=scope.now, holder=holder)


def _count(counts: Sequence[Count]) -> None:
    for count in counts:
        metrics.RETENTION_REMOVED.labels(count.kind).inc(count.rows)


def _merged(counts: Sequence[Count]) -> list[Count]:
    """One Count per kind and agent, in the order first met."""
    merged: dict[tuple[str, str], Count] = {}
    for count in counts:
        if not count.rows:
            continue
        key = (count.kind, count.agent)
        kept = merged.setdefault(key, Count(kind=count.kind, agent=count.agent, rows=0))
        kept.rows += count.rows
        oldest = [date for date in (kept.oldest, count.oldest) if date is not None]
        kept.oldest = min(oldest, default=None)
    return list(merged.values())


def _summary(counts: Sequence[Count]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for count in counts:
        totals[count.kind] = totals.get(count.kind, 0) + count.rows
    return totals
