"""The Overview's numbers, read from the tool calls' totals, never the calls.

`summarize_calls` answers three queries whatever the number of calls, over the
ToolCallTotal rows of the window (toolsets.call_totals keeps them as each call is
audited): each tool's counts by status with their latency buckets (the counts by
status, the tools called, each tool's p50 and p95 of the calls that ran, all tools'
together the KPI's p95), the counts by bucket (1, 6 or 24 hours, aligned in UTC)
and status, and the denials by user and tool.

The totals are hourly, so the window is read in whole hours (UTC): from the hour
that holds `since` (the answer's `since` is that hour's start) through the hour that
holds `until` (with `until` now, the hour so far); with buckets of a day, in whole
days (UTC). Staff's (every user's calls) come from the totals for everyone, a few
rows a period per agent, tool and status, each window read in the fewest periods
(call_totals.cover): the tools' in whole weeks, then days, six hours and hours at
the window's ragged ends; the buckets' from the rows by status alone, in periods no
longer than a bucket, summed by their start (each lies in one bucket). Only the denials by user read the users'
hours, from an index of their rows alone. Durations are counted
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
    Func,
    Max,
    Q,
    QuerySet,
    Sum,
    Value,
)

from project.periods import HOUR, WEEK, cover
from toolsets.audit import FAILED, GROUPS, RAN, OutcomeGroup, group_of
from toolsets.call_totals import BUCKETS, STATUSES_BY_PERIOD, day_of, hour_of
from toolsets.models import LATENCY_BUCKETS, ToolCall, ToolCallTotal

Status = ToolCall.Status
# A literal of the statement that reads the denials (an enum's own value).
DENIED = Status.DENIED.value
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
    size = BUCKET_HOURS[bucket] * HOUR
    since = day_of(since) if by_day else hour_of(since)
    starts = _bucket_starts(since, until, BUCKET_HOURS[bucket])
    rows = ToolCallTotal.objects.order_by()
    hours = rows.filter(
        hour__gte=since,
        hour__lt=until,
        **({"user_id__gte": 0} if user_id is None else {"user_id": user_id}),
    )
    if user_id is None:
        # Every user's rows, in the fewest periods: the tools' over the whole
        # window, the buckets' (by status alone) in periods no longer than a
        # bucket. The periods
        # counted: those that start before `until` (whole days by day).
        end = _ceil(until, size if by_day else HOUR)
        totals = _periods(rows, cover(since, end, WEEK))
        by_bucket = _periods(rows, cover(since, end, size, STATUSES_BY_PERIOD))
    else:
        totals = by_bucket = hours
    # Each tool's calls by status with their latencies: the counts by status, the
    # tools called, and (of the calls that ran) each tool's p50 and p95, and all
    # of them together the KPI's p95.
    by_tool = _rows(totals.values("tool", "status").annotate(**LATENCIES))
    by_status: dict[str, int] = {}
    for row in by_tool:
        by_status[row["status"]] = by_status.get(row["status"], 0) + row["n"]
    ran = _by_tool([row for row in by_tool if row["status"] in RAN])
    return Overview(
        since=since,
        until=until,
        bucket=bucket,
        groups=GROUPS,
        kpis=_kpis(by_status, ran, tools=len({row["tool"] for row in by_tool})),
        buckets=_buckets(by_bucket, starts, size, by_period=user_id is None),
        slowest=_slowest(ran),
        denials=_denials(user_id=user_id, since=since, until=until),
    )


def _ceil(moment: datetime, size: int) -> datetime:
    """The first start of a period of `size` seconds (epoch-aligned) at or after
    `moment`."""
    return datetime.fromtimestamp(-(-moment.timestamp() // size) * size, UTC)


def _periods(
    rows: QuerySet[ToolCallTotal], ranges: list[tuple[int, datetime, datetime]]
) -> QuerySet[ToolCallTotal]:
    """`rows` of every user's periods, in the (user_id, first start, end) ranges."""
    if not ranges:
        return rows.none()
    within = Q()
    for user, first, end in ranges:
        within |= Q(user_id=user, hour__gte=first, hour__lt=end)
    return rows.filter(within)


def _by_tool(rows: list[dict]) -> list[dict]:
    """Rows with LATENCIES by tool and status, added up by tool."""
    tools: dict[str, dict] = {}
    for row in rows:
        kept = tools.get(row["tool"])
        if kept is None:
            tools[row["tool"]] = dict(row)
            continue
        for name in ("n", *BUCKETS):
            kept[name] = (kept[name] or 0) + (row[name] or 0)
        kept["longest"] = max(kept["longest"] or 0, row["longest"] or 0)
    return list(tools.values())


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


def _kpis(by_status: dict[str, int], ran: list[dict], *, tools: int) -> Kpis:
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
        tools=tools,
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
    totals: QuerySet[ToolCallTotal],
    starts: list[datetime],
    size: int,
    *,
    by_period: bool,
) -> list[Bucket]:
    """Counts by bucket and outcome group. `by_period`: each row's period lies in
    one bucket (every user's rows, `cover`), so the rows are summed by their start
    and put in buckets here, with no function of each row in SQL."""
    counts: list[dict[str, int]] = [{} for _ in starts]
    first = int(starts[0].timestamp())
    if by_period:
        by_start: dict[tuple[int, str], int] = {}
        # Each period's start in seconds, a function of the group, not of a row.
        rows = totals.values("hour", "status").annotate(
            n=Sum("calls"), at=EpochSeconds("hour")
        )
        for row in _rows(rows):
            key = ((row["at"] - first) // size, row["status"])
            by_start[key] = by_start.get(key, 0) + row["n"]
        by_bucket = [(bucket, status, n) for (bucket, status), n in by_start.items()]
    else:
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


def _rows(rows: QuerySet) -> list[dict]:
    """The rows of a values() query as dicts, read by the cursor: sums and names
    need none of the ORM's per-row converters (a third of the Overview's time on
    SQLite at 30 days of a team's totals, 300 rows)."""
    query = rows.query
    sql, params = query.sql_with_params()
    fields, sums = list(query.values_select), list(query.annotation_select)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    # PostgreSQL sums a bigint as a numeric: whole numbers here, as the ORM gives.
    width = len(fields)
    return [
        {
            **dict(zip(fields, row[:width], strict=True)),
            **{
                name: None if value is None else int(value)
                for name, value in zip(sums, row[width:], strict=True)
            },
        }
        for row in found
    ]


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


def _denials(*, user_id: int | None, since: datetime, until: datetime) -> list[Denial]:
    """The TOP (user, tool) pairs by denials, most first (then by name): the totals
    grouped first, each group's user named after, one join a group (a subquery in
    the grouped query would be a key of the grouping, run for every row)."""
    window = [connection.ops.adapt_datetimefield_value(at) for at in (since, until)]
    whose = [] if user_id is None else [user_id]
    with connection.cursor() as cursor:
        cursor.execute(denials_sql(everyone=user_id is None), [*whose, *window, TOP])
        return [Denial(user, tool, int(n)) for user, tool, n in cursor.fetchall()]


def denials_sql(*, everyone: bool) -> str:
    """The denials' statement; its parameters: the user (unless `everyone`), the
    window's start and end, how many.

    The status and "every user" are written into the statement, not bound: a
    statement run often is prepared, and PostgreSQL's generic plan for a bound
    `user_id >= $3` cannot prove the partial index `toolcalltotal_denials`'s
    condition, so from the sixth run it read the whole key's range (10 ms at 30
    days on a team's day 100, against 1)."""
    people = get_user_model()
    quote = connection.ops.quote_name
    table, key = quote(people._meta.db_table), quote(people._meta.pk.column)
    name = quote(people._meta.get_field("username").column)
    totals = quote(ToolCallTotal._meta.db_table)
    whose = "t.user_id >= 0" if everyone else "t.user_id = %s"
    return (
        f"SELECT u.{name}, g.tool, g.n FROM (SELECT t.user_id, t.tool,"
        f" SUM(t.calls) AS n FROM {totals} AS t WHERE t.status = '{DENIED}'"
        f" AND {whose} AND t.hour >= %s AND t.hour < %s"
        " GROUP BY t.user_id, t.tool HAVING SUM(t.calls) > 0) AS g"
        f" LEFT JOIN {table} AS u ON u.{key} = g.user_id"
        # A user since deleted (no name) after the named, on both databases.
        f" ORDER BY g.n DESC, u.{name} IS NULL, u.{name}, g.tool LIMIT %s"
    )
