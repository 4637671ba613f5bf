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
row of each of its periods (project.periods: its week, day, six hours and hour, UTC;
`user_id` EVERYONE_WEEKS, EVERYONE (a day), EVERYONE_SIX_HOURS, EVERYONE_HOURS;
`hour` the period's start), and by status alone (agent and tool blank) for its day,
six hours and hour (STATUSES_BY_PERIOD). Staff's Overview reads those, a few rows a
period for each agent, tool and status (or a row a status), where a week of hourly
rows by user can hold as many rows as calls: each window in the fewest periods
(project.periods.cover).
"""

from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    F,
    Max,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, NullIf, TruncHour

from project.counters import Counters
from project.periods import (
    DAY,
    EVERYONE_BY_PERIOD,
    EVERYONE_DAYS,
    HOUR,
    SIX_HOURS,
    PeriodStart,
    period_of,
)
from toolsets.models import LATENCY_BUCKETS, ToolCall, ToolCallTotal

BUCKETS = [name for _, name in LATENCY_BUCKETS]
# Every user's rows, by period (project.periods): user_ids below zero.
EVERYONE = EVERYONE_DAYS  # the user_id of a day's row of every user's calls
# Every user's calls by status alone (agent and tool blank), by period: the
# Overview's buckets, a row a status a period.
STATUSES_BY_PERIOD = {DAY: -11, SIX_HOURS: -13, HOUR: -12}
CALL_TOTALS = Counters(
    ToolCallTotal,
    key=["hour", "user_id", "agent", "tool", "status"],
    sums=["calls", *BUCKETS],
    maxima=["max_ms"],
)
ANY_TOOL = {"agent": "", "tool": ""}  # a row of every agent's and tool's calls
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
    statuses = [
        {**row, "hour": period_of(started_at, size), "user_id": user, **ANY_TOOL}
        for size, user in STATUSES_BY_PERIOD.items()
    ]
    CALL_TOTALS.add([row, *everyone, *statuses])


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
    for size, everyone in STATUSES_BY_PERIOD.items():
        CALL_TOTALS.add_query(
            _by_key(calls, sign=sign, size=size, everyone=everyone, any_tool=True)
        )


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
    any_tool: bool = False,
) -> QuerySet:
    """`calls` grouped by the totals' key (`everyone`: their periods of `size`
    seconds for every user, under that user_id; `any_tool`: by status alone),
    counted with `sign` (-1: taken out), as values_list in CALL_TOTALS' order."""
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
            t_agent=Value("") if any_tool else F("agent"),
            t_tool=Value("") if any_tool else TOOL,
        )
        .values("t_hour", "t_user", "t_agent", "t_tool", "status")
        .annotate(n=Count("id") * sign, **buckets, longest=longest)
    )
    return grouped.values_list(
        "t_hour", "t_user", "t_agent", "t_tool", "status", "n", *buckets, "longest"
    )
