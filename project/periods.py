"""Totals kept for every user by period: a window read in the fewest periods.

A table of totals by the hour (toolsets' ToolCallTotal, agents' RunTotal) also keeps
every user's counts in rows of longer periods, each under a user_id of its own below
zero (`hour`: the period's start): a week, a day, six hours, an hour, aligned on the
epoch in UTC (days start at midnight UTC; weeks on a Thursday, as 1970-01-01 was).
Each length divides the next longer, so a window of whole hours is covered exactly
by whole weeks in its middle, then whole days, six hours and hours toward its ragged
ends (`cover`): a month is a few weeks and a few days, where it was 720 hours, and a
week's six-hour buckets 28 rows a kind rather than 168.

`PeriodStart` computes a period's start in SQL (a back-fill's `INSERT ... SELECT`),
`period_of` in Python (a row added by value): both give the key's `hour` alike.
"""

from datetime import UTC, datetime

from django.db.models import DateTimeField, Func

HOUR = 3600
DAY = 24 * HOUR
WEEK = 7 * DAY
SIX_HOURS = 6 * HOUR
# Every user's rows (user_id) by the length of their period in seconds, longest
# first, as both tables keep them.
EVERYONE_WEEKS = -4
EVERYONE_DAYS = -1
EVERYONE_SIX_HOURS = -3
EVERYONE_HOURS = -2
EVERYONE_BY_PERIOD = {
    WEEK: EVERYONE_WEEKS,
    DAY: EVERYONE_DAYS,
    SIX_HOURS: EVERYONE_SIX_HOURS,
    HOUR: EVERYONE_HOURS,
}
Range = tuple[int, datetime, datetime]  # user_id, first period's start, end


def period_of(moment: datetime, size: int) -> datetime:
    """The start of the period of `size` seconds (aligned on the epoch, UTC) that
    holds `moment`."""
    return utc(int(moment.timestamp()) // size * size)


def cover(
    since: datetime,
    until: datetime,
    longest: int,
    periods: dict[int, int] = EVERYONE_BY_PERIOD,
) -> list[Range]:
    """The fewest periods of `periods` ({seconds: user_id}, longest first, each
    dividing the one before) none longer than `longest` seconds, that count the
    hours from `since` (an hour's start) to `until` (an hour's start, excluded): as
    (user_id, first start, end) ranges of the rows' `hour`, in time order."""
    ranges: list[Range] = []
    kept = [(size, user) for size, user in periods.items() if size <= longest]
    _cover(int(since.timestamp()), int(until.timestamp()), kept, ranges)
    return sorted(ranges, key=lambda each: each[1])


def _cover(start: int, end: int, periods: list[tuple[int, int]], ranges: list) -> None:
    for index, (size, user_id) in enumerate(periods):
        first = -(-start // size) * size
        last = end // size * size
        if first < last:
            ranges.append((user_id, utc(first), utc(last)))
            shorter = periods[index + 1 :]
            if start < first:
                _cover(start, first, shorter, ranges)
            if last < end:
                _cover(last, end, shorter, ranges)
            return


def merged(ranges: list[Range]) -> list[Range]:
    """`ranges` in time order, each run of one user_id's adjacent ranges made one."""
    kept: list[Range] = []
    for user_id, first, end in ranges:
        if kept and kept[-1][0] == user_id and kept[-1][2] == first:
            kept[-1] = (user_id, kept[-1][1], end)
        else:
            kept.append((user_id, first, end))
    return kept


def utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


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
