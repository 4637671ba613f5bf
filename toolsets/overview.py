"""The Overview's numbers, read from the tool calls' hourly totals, never the calls.

`summarize_calls` answers five queries whatever the number of calls, over the
ToolCallTotal rows of the window (toolsets.call_totals keeps them as each call is
audited): counts by status, distinct tools, counts by bucket (1, 6 or 24 hours,
aligned in UTC) and status, each tool's latency buckets of the calls that ran
(its p50 and p95; all tools' together, the KPI's p95), and denials by user and
tool.

The totals are hourly, so the window is read in whole hours (UTC): from the hour
that holds `since` (the answer's `since` is that hour's start) through the hour that
holds `until` (with `until` now, the hour so far); with buckets of a day, in whole
days (UTC). Staff's (every user's calls) come from the totals for everyone, a few
rows an hour or a day per agent, tool and status (call_totals.EVERYONE_HOURS, or
EVERYONE by day); only the denials by user read the users' hours. Durations are counted
in fixed buckets (models.LATENCY_BUCKETS: 10 ms, 25, 50, 100, 250, 500 ms, 1 s, 2.5,
5, 10, 30, 60 s, over), so percentiles are bucket-accurate: the nearest rank
(ceil(q·n)) falls in one bucket, and the percentile given is that bucket's upper
bound, or the longest duration counted if that is less (past 60 s, the longest).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import (
    BigIntegerField,
    Count,
    Func,
    Max,
    QuerySet,
    Sum,
    Value,
)

from toolsets.audit import FAILED, GROUPS, RAN, OutcomeGroup, group_of
from toolsets.call_totals import BUCKETS, EVERYONE, EVERYONE_HOURS, day_of, hour_of
from toolsets.models import LATENCY_BUCKETS, ToolCall, ToolCallTotal

Status = ToolCall.Status
BUCKET_HOURS = {"1h": 1, "6h": 6, "1d": 24}
MAX_BUCKETS = 1000
TOP = 8  # rows of the slowest tools and of the denials
BOUNDS = [bound for bound, _ in LATENCY_BUCKETS]
# Per group of totals: its calls, its calls in each latency bucket, the longest.
LATENCIES = {
    "n": Sum("calls"),
    **{name: Sum(name) for name in BUCKETS},
    "longest": Max("max_ms"),
}


class EpochSeconds(Func):
    """Whole seconds since the epoch of a datetime column, in the database's own
    functions (Django's TruncHour runs a Python function per row on SQLite)."""

    output_field = BigIntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        # Stored as UTC text: strftime's %s reads it as UTC.
        template = "CAST(strftime('%%%%s', %(expressions)s) AS INTEGER)"
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_postgresql(self, compiler, connection, **extra):
        template = "CAST(FLOOR(EXTRACT(EPOCH FROM %(expressions)s)) AS BIGINT)"
        return self.as_sql(compiler, connection, template=template, **extra)


class TooManyBuckets(ValueError):
    """The range holds more than MAX_BUCKETS buckets of the size asked for."""


@dataclass(frozen=True)
class Kpis:
    calls: int  # each call once: an approved call's run has a row of its own
    ran: int
    failed: int
    denied: int
    approved: int
    rejected: int
    expired: int
    awaiting: int
    p95_ms: int | None  # of the calls that ran, bucket-accurate; None if none ran
    tools: int


@dataclass(frozen=True)
class Bucket:
    start: datetime
    counts: dict[str, int]  # by outcome group; groups without calls left out


@dataclass(frozen=True)
class ToolSpeed:
    tool: str
    calls: int
    p50_ms: int
    p95_ms: int


@dataclass(frozen=True)
class Denial:
    user: str | None
    tool: str
    count: int


@dataclass(frozen=True)
class Overview:
    since: datetime
    until: datetime
    bucket: str
    groups: Sequence[OutcomeGroup]
    kpis: Kpis
    buckets: list[Bucket]
    slowest: list[ToolSpeed]
    denials: list[Denial]


def summarize_calls(
    *,
    user_id: int | None,
    since: datetime,
    until: datetime,
    bucket: str,
) -> Overview:
    """The Overview of a user's calls (None: every user's) in the hours from that
    of `since` through that of `until` (whole days, with buckets of a day), in
    buckets of `bucket`.

    Args:
        user_id: whose calls (overview_scope: staff every user's).
        bucket: a key of BUCKET_HOURS.

    Raises:
        TooManyBuckets: the range holds more than MAX_BUCKETS buckets.
    """
    by_day = bucket == "1d"
    since = day_of(since) if by_day else hour_of(since)
    starts = _bucket_starts(since, until, BUCKET_HOURS[bucket])
    rows = ToolCallTotal.objects.filter(hour__gte=since, hour__lt=until).order_by()
    hours = rows.filter(
        **({"user_id__gte": 0} if user_id is None else {"user_id": user_id})
    )
    if user_id is None:
        totals = rows.filter(user_id=EVERYONE if by_day else EVERYONE_HOURS)
    else:
        totals = hours
    by_status = dict(
        totals.values_list("status").annotate(n=Sum("calls")).values_list("status", "n")
    )
    # Each tool's latencies, of the calls that ran: its p50 and p95, and all of
    # them together the KPI's p95.
    ran = list(totals.filter(status__in=RAN).values("tool").annotate(**LATENCIES))
    return Overview(
        since=since,
        until=until,
        bucket=bucket,
        groups=GROUPS,
        kpis=_kpis(totals, by_status, ran),
        buckets=_buckets(totals, starts, BUCKET_HOURS[bucket]),
        slowest=_slowest(ran),
        denials=_denials(hours.filter(status=Status.DENIED)),
    )


def overview_scope(*, user) -> int | None:
    """Whose calls `user` reads in the Overview (toolsets.audit.visible_calls's
    rule): None, every user's, for staff; else their own id."""
    return None if user.is_staff else user.pk


def _bucket_starts(since: datetime, until: datetime, hours: int) -> list[datetime]:
    # Aligned to whole buckets since the epoch, in UTC: days start at midnight UTC.
    size = hours * 3600
    first = math.floor(since.timestamp() / size) * size
    count = math.ceil((until.timestamp() - first) / size)  # each starts before until
    if count > MAX_BUCKETS:
        raise TooManyBuckets(count)
    return [datetime.fromtimestamp(first + i * size, UTC) for i in range(count)]


def _kpis(
    totals: QuerySet[ToolCallTotal], by_status: dict[str, int], ran: list[dict]
) -> Kpis:
    def count(*statuses: str) -> int:
        return sum(by_status.get(status) or 0 for status in statuses)

    return Kpis(
        calls=count(*by_status) - count(Status.APPROVED),
        ran=count(*RAN),
        failed=count(*FAILED),
        denied=count(Status.DENIED),
        approved=count(Status.APPROVED),
        rejected=count(Status.REJECTED),
        expired=count(Status.EXPIRED),
        awaiting=count(Status.AWAITING_APPROVAL),
        p95_ms=_percentile(95, ran),
        tools=totals.aggregate(n=Count("tool", distinct=True))["n"] if by_status else 0,
    )


def _percentile(percent: int, rows: list[dict]) -> int | None:
    """The bucket-accurate nearest-rank percentile of the calls of `rows` (each
    with LATENCIES): the upper bound of the bucket holding rank ceil(q·n), or the
    longest duration if less; None if no call."""
    counts = [sum(row[name] or 0 for row in rows) for name in BUCKETS]
    total = sum(counts)
    if not total:
        return None
    longest = max(row["longest"] or 0 for row in rows)
    rank = _rank(percent, total)
    seen = 0
    for bound, n in zip(BOUNDS, counts, strict=True):
        seen += n
        if seen >= rank:
            return longest if bound is None else min(bound, longest)
    return longest


def _rank(percent: int, n: int) -> int:
    """The nearest rank, ceil(percent/100 · n), in integers (1-based)."""
    return -(-percent * n // 100)


def _buckets(
    totals: QuerySet[ToolCallTotal], starts: list[datetime], hours: int
) -> list[Bucket]:
    counts: list[dict[str, int]] = [{} for _ in starts]
    size = hours * 3600
    first = int(starts[0].timestamp())
    # Integer division: every hour counted starts at or after `first`.
    index = (EpochSeconds("hour") - Value(first)) / Value(size)
    by_bucket = (
        totals.annotate(bucket=index)
        .values_list("bucket", "status")
        .annotate(n=Sum("calls"))
        .values_list("bucket", "status", "n")
    )
    for bucket, status, n in by_bucket:
        if 0 <= bucket < len(starts) and n:
            group = group_of(status)
            counts[bucket][group] = counts[bucket].get(group, 0) + n
    return [Bucket(start, count) for start, count in zip(starts, counts, strict=True)]


def _slowest(ran: list[dict]) -> list[ToolSpeed]:
    """The TOP tools by p95, slowest first (then by name), from each tool's
    latency buckets."""
    speeds = [
        ToolSpeed(row["tool"], row["n"], _percentile(50, [row]), _percentile(95, [row]))
        for row in ran
        if row["n"]
    ]
    speeds.sort(key=lambda speed: (-speed.p95_ms, speed.tool))
    return speeds[:TOP]


def _denials(denied: QuerySet[ToolCallTotal]) -> list[Denial]:
    """The TOP (user, tool) pairs by denials, most first (then by name): the totals
    grouped first, each group's user named after, one join a group (a subquery in
    the grouped query would be a key of the grouping, run for every row)."""
    grouped = (
        denied.values("user_id", "tool")
        .annotate(n=Sum("calls"))
        .filter(n__gt=0)
        .order_by()
    )
    inner, params = grouped.query.sql_with_params()
    people = get_user_model()
    table = connection.ops.quote_name(people._meta.db_table)
    key = connection.ops.quote_name(people._meta.pk.column)
    name = connection.ops.quote_name(people._meta.get_field("username").column)
    sql = (
        f"SELECT u.{name}, g.tool, g.n FROM ({inner}) AS g"
        f" LEFT JOIN {table} AS u ON u.{key} = g.user_id"
        f" ORDER BY g.n DESC, u.{name}, g.tool LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, TOP])
        return [Denial(user, tool, n) for user, tool, n in cursor.fetchall()]
