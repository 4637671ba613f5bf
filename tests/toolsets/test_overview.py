"""The Overview's numbers come from the totals kept as calls are audited, the same
as the browser counted them before from every row: each status in its group,
nearest-rank percentiles to their latency bucket, buckets aligned in UTC, denials
by user and tool, in a constant number of queries (three)."""

import math
from datetime import UTC, datetime, timedelta

import pytest

from toolsets.audit import GROUPS, group_of
from toolsets.call_totals import create_call
from toolsets.models import LATENCY_BUCKETS, ToolCall
from toolsets.overview import MAX_BUCKETS, TooManyBuckets, summarize_calls

pytestmark = pytest.mark.django_db
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
SINCE = NOON - timedelta(hours=24)


def call(user, status="ok", *, tool="rockets.launch", ms=100, at=NOON, name=""):
    return create_call(
        user=user,
        tool_name=name or tool.rsplit(".", 1)[-1],
        tool_full_name=tool,
        status=status,
        duration_ms=ms,
        started_at=at - timedelta(minutes=1),
        finished_at=at - timedelta(minutes=1),
    )


def summary(bucket="1h", since=SINCE, until=NOON):
    return summarize_calls(user_id=None, since=since, until=until, bucket=bucket)


def nearest_rank(values, q):
    """overview.js's quantile() before: the value at rank ceil(q·n), sorted."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def to_bucket(values, q):
    """The nearest rank's value, to its latency bucket: the bucket's upper bound,
    or the longest value if less (the totals keep no single duration)."""
    value = nearest_rank(values, q)
    bound = next(b for b, _ in LATENCY_BUCKETS if b is None or value <= b)
    return max(values) if bound is None else min(bound, max(values))


def test_every_status_counts_in_exactly_one_group():
    statuses = [status for group in GROUPS for status in group.statuses]

    assert sorted(statuses) == sorted(ToolCall.Status.values)
    assert group_of("awaiting_approval") == "held"
    assert group_of("something_new") == "refused"


def test_kpis_count_a_healthy_day_with_approvals_as_no_failure(alice):
    for status in ["ok", "ok", "approved", "ok", "rejected", "awaiting_approval"]:
        call(alice, status)
    call(alice, "denied", tool="bank.wire_money")
    call(alice, "error", ms=900)
    call(alice, "cached")

    kpis = summary().kpis

    # The approved row and the run it let through are one call.
    assert (kpis.calls, kpis.ran, kpis.failed, kpis.denied) == (8, 4, 1, 1)
    assert (kpis.approved, kpis.rejected, kpis.awaiting, kpis.expired) == (1, 1, 1, 0)
    assert kpis.p95_ms == 900  # its bucket, 1 s, but no call took longer than 900
    assert kpis.tools == 2


def test_no_calls_is_all_zeros_and_no_p95(alice):
    overview = summary()

    assert overview.kpis.calls == 0
    assert overview.kpis.p95_ms is None
    assert overview.slowest == []
    assert overview.denials == []
    assert all(bucket.counts == {} for bucket in overview.buckets)


def test_slowest_tools_have_bucketed_p50_and_p95_of_the_calls_that_ran(alice):
    slow = [700, 20, 300, 5, 1000, 80, 61, 62, 900, 10, 11, 400, 3, 2, 1, 999, 4, 6]
    for ms in slow:
        call(alice, tool="web.fetch", ms=ms)
    for ms in [50, 50, 51]:
        call(alice, "error", tool="math.add", ms=ms)
    call(alice, "denied", tool="math.add", ms=99_999)  # never ran: not counted
    call(alice, "ok", tool="", name="bare_function", ms=7)

    rows = [(r.tool, r.calls, r.p50_ms, r.p95_ms) for r in summary().slowest]

    assert rows == [
        ("web.fetch", 18, to_bucket(slow, 0.5), to_bucket(slow, 0.95)),
        ("math.add", 3, 50, 51),
        ("bare_function", 1, 7, 7),
    ]
    # The exact values were 20 and 1000: 20 lies in the bucket up to 25 ms.
    assert rows[0][2:] == (25, 1000)


@pytest.mark.parametrize("n", [1, 2, 19, 20, 21, 40, 101])
def test_percentiles_are_the_browsers_former_quantile_to_its_bucket(alice, n):
    durations = [(i * 37) % 1013 for i in range(n)]
    for ms in durations:
        call(alice, ms=ms)

    [row] = summary().slowest

    assert (row.p50_ms, row.p95_ms) == (
        to_bucket(durations, 0.5),
        to_bucket(durations, 0.95),
    )
    assert summary().kpis.p95_ms == to_bucket(durations, 0.95)


def test_only_the_eight_slowest_tools_are_listed(alice):
    for index in range(10):
        call(alice, tool=f"t.tool{index}", ms=index * 10)

    slowest = summary().slowest

    assert [row.tool for row in slowest] == [f"t.tool{i}" for i in range(9, 1, -1)]


def test_buckets_are_aligned_in_utc_and_count_by_outcome_group(alice):
    call(alice, "ok", at=NOON - timedelta(hours=1))  # 10:59
    call(alice, "error", at=NOON - timedelta(hours=1))
    call(alice, "approved", at=NOON - timedelta(hours=5))  # 06:59
    call(alice, "ok", at=NOON - timedelta(hours=30))  # before since: left out
    since = NOON - timedelta(hours=23, minutes=30)  # 12:30 the day before

    overview = summary("6h", since=since)

    assert [b.start.hour for b in overview.buckets] == [12, 18, 0, 6]
    assert overview.buckets[0].start == datetime(2026, 3, 9, 12, tzinfo=UTC)
    assert [b.counts for b in overview.buckets] == [
        {},
        {},
        {},
        {"ok": 1, "error": 1, "held": 1},
    ]
    assert overview.kpis.calls == 2  # the call before since is not counted


def test_hour_buckets_cover_the_day_like_the_page_did(alice):
    now = NOON + timedelta(minutes=20)

    overview = summary("1h", since=now - timedelta(hours=24), until=now)

    # The page drew ceil(24 / 1) + 1 columns, the first from the hour of since.
    assert len(overview.buckets) == 25
    assert overview.buckets[0].start == SINCE
    assert overview.buckets[-1].start == NOON


def test_day_buckets_start_at_midnight_utc(alice):
    overview = summary("1d", since=NOON - timedelta(days=7))

    assert [b.start.hour for b in overview.buckets] == [0] * 8
    assert overview.buckets[-1].start == datetime(2026, 3, 10, tzinfo=UTC)


def test_denials_are_counted_by_user_and_tool(alice, bob):
    for _ in range(3):
        call(bob, "denied", tool="bank.wire_money")
    call(alice, "denied", tool="bank.wire_money")
    call(alice, "denied", tool="shell.run")
    call(None, "denied", tool="shell.run")
    call(alice, "ok", tool="shell.run")

    rows = [(d.user, d.tool, d.count) for d in summary().denials]

    assert rows[0] == ("bob", "bank.wire_money", 3)
    assert sorted(rows[1:], key=str) == sorted(
        [
            ("alice", "bank.wire_money", 1),
            ("alice", "shell.run", 1),
            (None, "shell.run", 1),
        ],
        key=str,
    )


def test_a_range_of_too_many_buckets_is_refused(alice):
    with pytest.raises(TooManyBuckets):
        summary("1h", since=NOON - timedelta(hours=MAX_BUCKETS + 1))


@pytest.mark.parametrize("calls", [3, 300])
def test_the_overview_takes_three_queries_whatever_the_number_of_calls(
    alice, bob, django_assert_num_queries, calls
):
    for index in range(calls):
        user = (alice, bob)[index % 2]
        status = ("ok", "error", "denied", "approved", "timeout")[index % 5]
        call(
            user,
            status,
            tool=f"t.tool{index % 13}",
            ms=index,
            at=NOON - timedelta(minutes=index),
        )

    with django_assert_num_queries(3):
        summary()


def test_staffs_days_read_everyones_day_totals_and_agree_with_the_hours(alice, bob):
    for index in range(40):
        call(
            (alice, bob, None)[index % 3],
            ("ok", "error", "denied", "approved", "cached")[index % 5],
            tool=f"t.tool{index % 4}",
            ms=index * 31,
            at=NOON - timedelta(hours=index * 3),
        )
    since = NOON - timedelta(days=7)

    everyone = summarize_calls(user_id=None, since=since, until=NOON, bucket="1d")
    hourly = summarize_calls(user_id=None, since=since, until=NOON, bucket="6h")
    each = [
        summarize_calls(user_id=user_id, since=since, until=NOON, bucket="1d")
        for user_id in (alice.pk, bob.pk, 0)
    ]

    assert everyone.since == datetime(2026, 3, 3, tzinfo=UTC)  # whole days
    assert everyone.kpis.calls == sum(one.kpis.calls for one in each) > 0
    assert everyone.kpis.denied == sum(one.kpis.denied for one in each)
    assert everyone.kpis.p95_ms == hourly.kpis.p95_ms
    assert everyone.slowest == hourly.slowest
    assert everyone.denials == hourly.denials
    days = [sum(bucket.counts.values()) for bucket in everyone.buckets]
    assert days == [
        sum(sum(one.buckets[day].counts.values()) for one in each)
        for day in range(len(days))
    ]
    # Staff's hours read everyone's hourly totals: each bucket the users' sum.
    each_hourly = [
        summarize_calls(user_id=user_id, since=since, until=NOON, bucket="6h")
        for user_id in (alice.pk, bob.pk, 0)
    ]
    assert [b.counts for b in hourly.buckets] == [
        {
            group: n
            for group in {g for one in each_hourly for g in one.buckets[i].counts}
            if (n := sum(one.buckets[i].counts.get(group, 0) for one in each_hourly))
        }
        for i in range(len(hourly.buckets))
    ]
    assert hourly.kpis == everyone.kpis
