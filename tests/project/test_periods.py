"""A window of whole hours is covered exactly by the fewest aligned periods: whole
weeks in its middle, then days, six hours and hours toward its ragged ends."""

import random
from datetime import UTC, datetime, timedelta

from project.periods import EVERYONE_BY_PERIOD, WEEK, cover, merged, period_of

NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # a Tuesday


def test_a_window_is_covered_by_the_fewest_aligned_periods():
    rng = random.Random(7)
    sizes = {user: size for size, user in EVERYONE_BY_PERIOD.items()}
    for _ in range(500):
        since = period_of(NOON - timedelta(hours=rng.randrange(2000)), 3600)
        until = since + timedelta(hours=rng.randrange(1500))
        longest = rng.choice(list(EVERYONE_BY_PERIOD))

        ranges = cover(since, until, longest)

        assert [r[1] for r in ranges[1:]] == [r[2] for r in ranges[:-1]]  # no gap
        if since < until:
            assert (ranges[0][1], ranges[-1][2]) == (since, until)
        for user, first, end in ranges:
            size = sizes[user]
            assert size <= longest
            assert first.timestamp() % size == end.timestamp() % size == 0
            assert first < end
        # Few: the longest periods' one range, and at most one range of each
        # shorter length on each side of it.
        assert len(ranges) <= 2 * len(EVERYONE_BY_PERIOD) - 1

    week = cover(
        datetime(2026, 2, 26, tzinfo=UTC), datetime(2026, 3, 12, tzinfo=UTC), WEEK
    )
    assert week == [
        (-4, datetime(2026, 2, 26, tzinfo=UTC), datetime(2026, 3, 12, tzinfo=UTC))
    ]  # two weeks, from a Thursday


def test_a_period_starts_on_the_epoch_in_utc():
    moment = datetime(2026, 3, 10, 13, 59, 59, 999999, tzinfo=UTC)

    assert [period_of(moment, size) for size in EVERYONE_BY_PERIOD] == [
        datetime(2026, 3, 5, tzinfo=UTC),  # the Thursday before
        datetime(2026, 3, 10, tzinfo=UTC),
        datetime(2026, 3, 10, 12, tzinfo=UTC),
        datetime(2026, 3, 10, 13, tzinfo=UTC),
    ]


def test_adjacent_ranges_of_one_kind_are_merged():
    days = [
        cover(
            NOON.replace(hour=0) + timedelta(days=d),
            NOON.replace(hour=0) + timedelta(days=d + 1),
            WEEK,
        )
        for d in range(3)
    ]

    assert merged([r for day in days for r in day]) == [
        (-1, datetime(2026, 3, 10, tzinfo=UTC), datetime(2026, 3, 13, tzinfo=UTC))
    ]
