"""The tool calls' totals, kept as each audit row is written: what the Overview reads.

Every audit row (ToolCall) is counted in a ToolCallTotal row of its hour (UTC, of
its start), user, agent, tool (`toolset.tool`, or the name the model called) and
status: one more call, one more in its duration's bucket (models.LATENCY_BUCKETS),
the longest duration kept. It is counted in the transaction that writes the row
(`count_call`, `create_call`), one statement more (project.counters); a row whose
status changes (a held call decided, a direct call refused) moves between totals
in the transaction that changes it (`recount`). Nothing reads the calls again to
count them, and deleting audit rows (retention) leaves the totals as they were.

Each call is also counted, in the same statement, for every user together, in a
row of each of its periods (UTC, aligned on the epoch; `hour` the period's start):
its week (`user_id` EVERYONE_WEEKS, from a Thursday: 1970-01-01 was one), its day
(EVERYONE), its six hours (EVERYONE_SIX_HOURS: from 00:00, 06:00, 12:00 or 18:00)
and its hour (EVERYONE_HOURS). Staff's Overview reads those, a few rows a period
for each agent, tool and status, where a week of hourly rows by user can hold as
many rows as calls: each window in the fewest periods (`cover`: whole weeks, then
whole days, six hours and hours at its ragged ends).
"""

from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    DateTimeField,
    F,
    Func,
    Max,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, NullIf, TruncHour

from project.counters import Counters
from toolsets.models import LATENCY_BUCKETS, ToolCall, ToolCallTotal

BUCKETS = [name for _, name in LATENCY_BUCKETS]
EVERYONE = -1  # the user_id of a day's row of every user's calls
EVERYONE_HOURS = -2  # the user_id of an hour's row of every user's calls
EVERYONE_SIX_HOURS = -3  # the user_id of six hours' row of every user's calls
EVERYONE_WEEKS = -4  # the user_id of a week's row of every user's calls
HOUR = 3600
DAY = 24 * HOUR
WEEK = 7 * DAY
# Every user's rows by the length of their period, in seconds, longest first: each
# divides the one before it.
EVERYONE_BY_PERIOD = {
    WEEK: EVERYONE_WEEKS,
    DAY: EVERYONE,
    6 * HOUR: EVERYONE_SIX_HOURS,
    HOUR: EVERYONE_HOURS,
}
CALL_TOTALS = Counters(
    ToolCallTotal,
    key=["hour", "user_id", "agent", "tool", "status"],
    sums=["calls", *BUCKETS],
    maxima=["max_ms"],
)
# The name a call is counted under: `toolset.tool`, or the name the model called.
TOOL = Coalesce(NullIf(F("tool_full_name"), Value("")), F("tool_name"))


def bucket_of(duration_ms: int) -> str:
    """The latency bucket a duration counts in."""
    for bound, name in LATENCY_BUCKETS:
        if bound is None or duration_ms <= bound:
            return name
    raise AssertionError("the last bucket has no bound")


def hour_of(moment: datetime) -> datetime:
    """The start of the hour (UTC) of `moment`."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def day_of(moment: datetime) -> datetime:
    """The start of the day (UTC) of `moment`."""
    return hour_of(moment).replace(hour=0)


def period_of(moment: datetime, size: int) -> datetime:
    """The start of the period of `size` seconds (aligned on the epoch, UTC) that
    holds `moment`."""
    return _utc(int(moment.timestamp()) // size * size)


def cover(
    since: datetime, until: datetime, longest: int
) -> list[tuple[int, datetime, datetime]]:
    """The periods of every user's rows that count the hours from `since` (an
    hour's start) to `until` (an hour's start, excluded), the fewest of them: whole
    days, then whole six hours, then hours, none longer than `longest` seconds; as
    (user_id, first start, end) ranges of the rows' `hour`."""
    ranges: list[tuple[int, datetime, datetime]] = []
    periods = [
        (size, user) for size, user in EVERYONE_BY_PERIOD.items() if size <= longest
    ]
    _cover(int(since.timestamp()), int(until.timestamp()), periods, ranges)
    return ranges


def _cover(start: int, end: int, periods: list[tuple[int, int]], ranges: list) -> None:
    for index, (size, user_id) in enumerate(periods):
        first = -(-start // size) * size  # epoch-aligned: days start at midnight UTC
        last = end // size * size
        if first < last:
            ranges.append((user_id, _utc(first), _utc(last)))
            shorter = periods[index + 1 :]
            if start < first:
                _cover(start, first, shorter, ranges)
            if last < end:
                _cover(last, end, shorter, ranges)
            return


def _utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def count_call(
    *,
    user_id: int | None,
    agent: str,
    tool_full_name: str,
    tool_name: str,
    status: str,
    started_at: datetime,
    duration_ms: int,
) -> None:
    """Count one audit row in its totals, its hour's, and its week's, day's, six
    hours' and hour's for everyone: call it in the transaction that writes the row
    (one statement)."""
    bucket = bucket_of(duration_ms)
    row: dict[str, Any] = {
        "hour": hour_of(started_at),
        "user_id": user_id or 0,
        "agent": agent,
        "tool": tool_full_name or tool_name,
        "status": status,
        "calls": 1,
        **{name: int(name == bucket) for name in BUCKETS},
        "max_ms": duration_ms,
    }
    everyone = [
        {**row, "hour": period_of(started_at, size), "user_id": user}
        for size, user in EVERYONE_BY_PERIOD.items()
    ]
    CALL_TOTALS.add([row, *everyone])


def create_call(**fields: Any) -> ToolCall:
    """Write an audit row through the ORM and count it, in one transaction."""
    with transaction.atomic():
        call = ToolCall.objects.create(**fields)
        count_call(**_counted(call))
    return call


def recount(calls: QuerySet[ToolCall], **changes: Any) -> int:
    """UPDATE `calls` with `changes` (a status), moving them between totals in the
    same transaction: taken out as they were, counted again as they are; how many
    rows changed."""
    with transaction.atomic():
        ids = list(calls.select_for_update().values_list("pk", flat=True))
        if not ids:
            return 0
        rows = ToolCall.objects.filter(pk__in=ids)
        _add(rows, sign=-1)
        changed = rows.update(**changes)
        _add(rows, sign=1)
    return changed


def count_all(calls: QuerySet[ToolCall]) -> None:
    """Count audit rows already written (a back-fill): five statements."""
    _add(calls, sign=1)


def _add(calls: QuerySet[ToolCall], *, sign: int) -> None:
    """Add `calls` to their hours' totals, and their periods' for everyone."""
    CALL_TOTALS.add_query(_by_key(calls, sign=sign))
    for size, everyone in EVERYONE_BY_PERIOD.items():
        CALL_TOTALS.add_query(_by_key(calls, sign=sign, size=size, everyone=everyone))


class PeriodStart(Func):
    """The start of the period of `size` seconds (aligned on the epoch, UTC) that
    holds a datetime column, in SQL."""

    output_field = DateTimeField()

    def __init__(self, expression, *, size: int) -> None:
        super().__init__(expression)
        self.size = int(size)

    def as_sqlite(self, compiler, connection, **extra):
        # Stored as UTC text 'YYYY-MM-DD HH:MM:SS', as Django stores a datetime.
        template = (
            "datetime(CAST(strftime('%%%%s', %(expressions)s) AS INTEGER)"
            f" / {self.size} * {self.size}, 'unixepoch')"
        )
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_postgresql(self, compiler, connection, **extra):
        template = (
            f"to_timestamp(FLOOR(EXTRACT(EPOCH FROM %(expressions)s) / {self.size})"
            f" * {self.size})"
        )
        return self.as_sql(compiler, connection, template=template, **extra)


def _counted(call: ToolCall) -> dict[str, Any]:
    return {
        "user_id": call.user_id,
        "agent": call.agent,
        "tool_full_name": call.tool_full_name,
        "tool_name": call.tool_name,
        "status": call.status,
        "started_at": call.started_at,
        "duration_ms": call.duration_ms,
    }


def _by_key(
    calls: QuerySet[ToolCall],
    *,
    sign: int,
    size: int = HOUR,
    everyone: int | None = None,
) -> QuerySet:
    """`calls` grouped by the totals' key (`everyone`: their periods of `size`
    seconds for every user, under that user_id), counted with `sign` (-1: taken
    out), as values_list in CALL_TOTALS' order."""
    integer = BigIntegerField()
    counted = Value(sign, output_field=integer)
    buckets = {}
    low = -1
    for bound, name in LATENCY_BUCKETS:
        within = {"duration_ms__gt": low}
        if bound is not None:
            within["duration_ms__lte"] = bound
        buckets[f"n_{name}"] = Sum(
            Case(When(**within, then=counted), default=0, output_field=integer)
        )
        low = bound if bound is not None else low
    longest = Max("duration_ms") if sign > 0 else Value(0, output_field=integer)
    grouped = (
        calls.order_by()
        .annotate(
            t_hour=TruncHour("started_at", tzinfo=UTC)
            if size == HOUR
            else PeriodStart("started_at", size=size),
            t_user=Coalesce("user_id", 0) if everyone is None else Value(everyone),
            t_tool=TOOL,
        )
        .values("t_hour", "t_user", "agent", "t_tool", "status")
        .annotate(n=Count("id") * sign, **buckets, longest=longest)
    )
    return grouped.values_list(
        "t_hour", "t_user", "agent", "t_tool", "status", "n", *buckets, "longest"
    )
