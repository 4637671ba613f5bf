"""One holder at a time for a job, across processes and machines: a `Lease` row.

A holder claims the row by one conditional UPDATE (free, expired, or its own), then
renews it as the first statement of each of its transactions, so a holder that lost
it (it ran past `expires_at` and another claimed it) learns so before it writes.
The same statements on SQLite and PostgreSQL; no advisory lock, no cache.
"""

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from agents.models import Lease


class LeaseLost(Exception):
    """Another holder has the lease now: stop, write nothing more."""


def claim(*, name: str, holder: str, seconds: float) -> bool:
    """Take the lease `name` for `seconds` if nobody else holds it; whether taken."""
    _ensure(name)
    now = timezone.now()
    free = Q(expires_at__isnull=True) | Q(expires_at__lt=now) | Q(holder=holder)
    taken = Lease.objects.filter(free, name=name).update(
        holder=holder, expires_at=now + timedelta(seconds=seconds)
    )
    return taken == 1


def renew(*, name: str, holder: str, seconds: float) -> None:
    """Hold the lease `seconds` more; raises LeaseLost if another holds it now."""
    until = timezone.now() + timedelta(seconds=seconds)
    if not Lease.objects.filter(name=name, holder=holder).update(expires_at=until):
        raise LeaseLost(name)


def release(*, name: str, holder: str) -> None:
    """Give the lease up (nothing if another holds it now)."""
    Lease.objects.filter(name=name, holder=holder).update(holder="", expires_at=None)


def _ensure(name: str) -> None:
    if Lease.objects.filter(name=name).exists():
        return
    try:
        with transaction.atomic():
            Lease.objects.create(name=name)
    except IntegrityError:
        pass  # another holder made it first: as good
