"""The Overview's numbers, aggregated in the database rather than in the browser.

`summarize_calls` answers a constant number of queries whatever the number of
calls: counts by status, distinct tools, the p95 of the calls that ran, counts by
bucket (1, 6 or 24 hours, aligned in UTC) and status, each tool's p50 and
p95, and denials by user and tool. Percentiles are nearest-rank (the value at rank
ceil(q·n) of the sorted durations), computed in SQL with window functions, which
SQLite (3.25+) and PostgreSQL both have, so no duration leaves the database;
buckets are whole seconds since the epoch divided in SQL.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connections
from django.db.models import BigIntegerField, Count, F, Func, QuerySet, Value, Window
from django.db.models.functions import Coalesce, NullIf, RowNumber

from toolsets.audit import FAILED, GROUPS, RAN, OutcomeGroup, group_of
from toolsets.models import ToolCall

Status = ToolCall.Status
BUCKET_HOURS = {"1h": 1, "6h": 6, "1d": 24}
MAX_BUCKETS = 1000
TOP = 8  # rows of the slowest tools and of the denials
# The name a call is counted under: `toolset.tool`, or the name the model called.
TOOL = Coalesce(NullIf(F("tool_full_name"), Value("")), F("tool_name"))


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
    p95_ms: int | None  # of the calls that ran; None if none ran
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
    *, calls: QuerySet[ToolCall], since: datetime, until: datetime, bucket: str
) -> Overview:
    """The Overview of `calls` started in [since, until), in buckets of `bucket`.

    Args:
        calls: the calls the reader may see (toolsets.audit.visible_calls).
        bucket: a key of BUCKET_HOURS.

    Raises:
        TooManyBuckets: the range holds more than MAX_BUCKETS buckets.
    """
    starts = _bucket_starts(since, until, BUCKET_HOURS[bucket])
    calls = calls.filter(started_at__gte=since, started_at__lt=until).order_by()
    by_status = dict(
        calls.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    return Overview(
        since=since,
        until=until,
        bucket=bucket,
        groups=GROUPS,
        kpis=_kpis(calls, by_status),
        buckets=_buckets(calls, starts, BUCKET_HOURS[bucket]),
        slowest=_slowest(calls.filter(status__in=RAN)),
        denials=_denials(calls.filter(status=Status.DENIED)),
    )


def _bucket_starts(since: datetime, until: datetime, hours: int) -> list[datetime]:
    # Aligned to whole buckets since the epoch, in UTC: days start at midnight UTC.
    size = hours * 3600
    first = math.floor(since.timestamp() / size) * size
    count = math.ceil((until.timestamp() - first) / size)  # each starts before until
    if count > MAX_BUCKETS:
        raise TooManyBuckets(count)
    return [datetime.fromtimestamp(first + i * size, UTC) for i in range(count)]


def _kpis(calls: QuerySet[ToolCall], by_status: dict[str, int]) -> Kpis:
    ran = sum(by_status.get(status, 0) for status in RAN)
    return Kpis(
        calls=sum(by_status.values()) - by_status.get(Status.APPROVED, 0),
        ran=ran,
        failed=sum(by_status.get(status, 0) for status in FAILED),
        denied=by_status.get(Status.DENIED, 0),
        approved=by_status.get(Status.APPROVED, 0),
        rejected=by_status.get(Status.REJECTED, 0),
        expired=by_status.get(Status.EXPIRED, 0),
        awaiting=by_status.get(Status.AWAITING_APPROVAL, 0),
        p95_ms=_p95(calls.filter(status__in=RAN), ran),
        tools=calls.aggregate(n=Count(TOOL, distinct=True))["n"] if by_status else 0,
    )


def _p95(ran_calls: QuerySet[ToolCall], ran: int) -> int | None:
    if not ran:
        return None
    rank = _rank(95, ran)
    durations = ran_calls.order_by("duration_ms").values_list("duration_ms", flat=True)
    return durations[rank - 1 : rank][0]


def _rank(percent: int, n: int) -> int:
    """The nearest rank, ceil(percent/100 · n), in integers (1-based)."""
    return -(-percent * n // 100)


def _buckets(
    calls: QuerySet[ToolCall], starts: list[datetime], hours: int
) -> list[Bucket]:
    counts: list[dict[str, int]] = [{} for _ in starts]
    size = hours * 3600
    first = int(starts[0].timestamp())
    # Integer division: every call started at or after since, so after `first`.
    index = (EpochSeconds("started_at") - Value(first)) / Value(size)
    by_bucket = (
        calls.annotate(bucket=index)
        .values_list("bucket", "status")
        .annotate(n=Count("id"))
        .values_list("bucket", "status", "n")
    )
    for bucket, status, n in by_bucket:
        if 0 <= bucket < len(starts):
            group = group_of(status)
            counts[bucket][group] = counts[bucket].get(group, 0) + n
    return [Bucket(start, count) for start, count in zip(starts, counts, strict=True)]


def _slowest(ran_calls: QuerySet[ToolCall]) -> list[ToolSpeed]:
    """The TOP tools by p95, slowest first, from one query over ranked durations."""
    ranked = ran_calls.annotate(
        tool_key=TOOL,
        place=Window(RowNumber(), partition_by=[TOOL], order_by="duration_ms"),
        tool_total=Window(Count("id"), partition_by=[TOOL]),
    ).values_list("tool_key", "duration_ms", "place", "tool_total")
    sql, params = ranked.query.sql_with_params()
    # The value at rank r is the smallest duration whose place is r or more.
    query = (
        "SELECT tool_key, tool_total,"
        " MIN(CASE WHEN place * 100 >= 50 * tool_total THEN duration_ms END) AS p50,"
        " MIN(CASE WHEN place * 100 >= 95 * tool_total THEN duration_ms END) AS p95"
        f" FROM ({sql}) ranked GROUP BY tool_key, tool_total"
        " ORDER BY p95 DESC, tool_key LIMIT %s"
    )
    with connections[ranked.db].cursor() as cursor:
        cursor.execute(query, [*params, TOP])
        rows = cursor.fetchall()
    return [ToolSpeed(tool, total, p50, p95) for tool, total, p50, p95 in rows]


def _denials(denied_calls: QuerySet[ToolCall]) -> list[Denial]:
    rows = (
        denied_calls.values_list("user__username", TOOL)
        .annotate(n=Count("id"))
        .order_by("-n", "user__username", TOOL.asc())
    )
    return [Denial(user, tool, n) for user, tool, n in rows[:TOP]]
