"""Staff's Overview reads every user's calls in the fewest periods (whole weeks,
days, six hours, hours at the window's ragged ends: project.periods.cover), and answers
exactly what the former reads answered (every user's hours, or days by day; each
user's hours), on calls spread over hours, days, users and statuses, held calls
decided after; in three queries."""

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Sum

from project.periods import EVERYONE_HOURS, HOUR
from toolsets.audit import FAILED, GROUPS, RAN, group_of
from toolsets.call_totals import (
    EVERYONE,
    create_call,
    day_of,
    hour_of,
    recount,
)
from toolsets.models import ToolCall, ToolCallTotal
from toolsets.overview import (
    BUCKET_HOURS,
    LATENCIES,
    TOP,
    Bucket,
    Denial,
    EpochSeconds,
    Kpis,
    Overview,
    _bucket_starts,
    _percentile,
    _slowest,
    denials_sql,
    summarize_calls,
)

pytestmark = pytest.mark.django_db
Status = ToolCall.Status
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # a Tuesday
STATUSES = ["ok", "ok", "ok", "error", "timeout", "cached", "denied", "approved"]


def _former_denials(denied) -> list[Denial]:
    """The denials as they were read: the users' rows grouped by user and tool."""
    names = dict(get_user_model().objects.values_list("pk", "username"))
    grouped = [
        Denial(names.get(g["user_id"]), g["tool"], g["n"])
        for g in denied.values("user_id", "tool").annotate(n=Sum("calls")).order_by()
        if g["n"] > 0
    ]
    grouped.sort(key=lambda d: (-d.count, d.user is None, d.user or "", d.tool))
    return grouped[:TOP]


def former(*, user_id, since, until, bucket):
    """The Overview as it was read before (5 queries): staff's from every user's
    hours (EVERYONE_HOURS), or days by day (EVERYONE); a user's from their hours."""
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
    ran = list(totals.filter(status__in=RAN).values("tool").annotate(**LATENCIES))

    def count(*statuses):
        return sum(by_status.get(status) or 0 for status in statuses)

    tools = totals.values("tool").distinct().count() if by_status else 0
    kpis = Kpis(
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
    size = BUCKET_HOURS[bucket] * HOUR
    first = int(starts[0].timestamp())
    counts = [{} for _ in starts]
    index = (EpochSeconds("hour") - first) / size
    for at, status, n in (
        totals.annotate(bucket=index)
        .values_list("bucket", "status")
        .annotate(n=Sum("calls"))
        .values_list("bucket", "status", "n")
    ):
        if 0 <= at < len(starts) and n:
            group = group_of(status)
            counts[at][group] = counts[at].get(group, 0) + n
    return Overview(
        since=since,
        until=until,
        bucket=bucket,
        groups=GROUPS,
        kpis=kpis,
        buckets=[Bucket(s, c) for s, c in zip(starts, counts, strict=True)],
        slowest=_slowest(ran),
        denials=_former_denials(hours.filter(status=Status.DENIED)),
    )


@pytest.fixture
def history(alice, bob):
    """Calls over 40 days and the next ten hours: three callers, eight statuses,
    nine tools, durations across the latency buckets; a third of the held calls
    decided later (moved between totals, leaving rows of no calls)."""
    rng = random.Random(43)
    held = []
    for index in range(600):
        at = NOON + timedelta(hours=10) - timedelta(minutes=rng.randrange(40 * 24 * 60))
        status = rng.choice([*STATUSES, "awaiting_approval"])
        call = create_call(
            user=rng.choice([alice, bob, None]),
            agent=rng.choice(["bank", "shop"]),
            tool_name=f"tool{index % 9}",
            tool_full_name=f"kit.tool{index % 9}" if index % 4 else "",
            status=status,
            duration_ms=rng.choice([1, 9, 24, 90, 240, 800, 2400, 9000, 61_000]),
            started_at=at,
            finished_at=at,
        )
        if status == "awaiting_approval":
            held.append(call.pk)
    for index, pk in enumerate(held[: len(held) // 3]):
        decided = ("approved", "rejected", "expired")[index % 3]
        recount(ToolCall.objects.filter(pk=pk), status=decided)
    return alice


WINDOWS = [  # (since, until) around NOON
    (timedelta(days=7, hours=3, minutes=30), timedelta(minutes=20)),
    (timedelta(days=30), timedelta(minutes=20)),
    (timedelta(days=30, hours=5), timedelta(0)),  # until on the hour
    (timedelta(hours=24), timedelta(minutes=59)),
    (timedelta(days=12), -timedelta(days=2, hours=4, minutes=10)),  # until past
    (timedelta(days=2, hours=12), timedelta(days=2)),  # until beyond the calls
    (NOON - datetime(2026, 2, 26, tzinfo=UTC), timedelta(minutes=1)),  # a Thursday
]


def test_staffs_overview_in_periods_is_what_the_hours_and_days_gave(history, bob):
    for back, ahead in WINDOWS:
        since, until = NOON - back, NOON + ahead
        for bucket in ("1h", "6h", "1d"):
            if bucket == "1h" and back > timedelta(days=40):
                continue  # more than MAX_BUCKETS hours
            for user_id in (None, history.pk, bob.pk, 0):
                new = summarize_calls(
                    user_id=user_id, since=since, until=until, bucket=bucket
                )
                old = former(user_id=user_id, since=since, until=until, bucket=bucket)
                assert new == old, (back, ahead, bucket, user_id)
            assert new.kpis.calls  # nobody's calls, in every window


def test_the_windows_hold_calls_of_every_kind(history):
    overview = summarize_calls(
        user_id=None, since=NOON - timedelta(days=30), until=NOON, bucket="1d"
    )

    kpis = overview.kpis
    assert min(kpis.ran, kpis.failed, kpis.denied, kpis.approved) > 10
    assert kpis.rejected and kpis.expired and kpis.awaiting
    assert ToolCallTotal.objects.filter(calls=0).exists()  # held calls moved out
    assert len(overview.denials) == 8


@pytest.mark.parametrize("calls", [3, 300])
def test_the_overview_takes_three_queries_whatever_the_window(
    alice, bob, django_assert_num_queries, calls
):
    for index in range(calls):
        at = NOON - timedelta(minutes=index * 97)
        create_call(
            user=(alice, bob)[index % 2],
            tool_name=f"tool{index % 13}",
            tool_full_name=f"t.tool{index % 13}",
            status=("ok", "error", "denied", "approved", "timeout")[index % 5],
            duration_ms=index,
            started_at=at,
            finished_at=at,
        )

    for days, bucket in ((1, "1h"), (7, "6h"), (30, "1d")):
        for user_id in (None, alice.pk):
            with django_assert_num_queries(3):
                summarize_calls(
                    user_id=user_id,
                    since=NOON - timedelta(days=days, minutes=30),
                    until=NOON + timedelta(minutes=20),
                    bucket=bucket,
                )


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="PostgreSQL's prepared plans: tests/toolsets/test_overview_postgresql.py",
)
def test_staffs_denials_keep_their_index_once_the_statement_is_prepared(history):
    # A statement run often is prepared (the pool's prepare_threshold), and after
    # five runs PostgreSQL may keep its generic plan: one for any parameters.
    sql = denials_sql(everyone=True)
    for n in range(1, sql.count("%s") + 1):
        sql = sql.replace("%s", f"${n}", 1)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE toolsets_toolcalltotal")
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE denials (timestamptz, timestamptz, int) AS {sql}")
        since = (NOON - timedelta(days=30)).isoformat()
        cursor.execute(f"EXPLAIN EXECUTE denials ('{since}', '{NOON.isoformat()}', 8)")
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("DEALLOCATE denials")
        cursor.execute("RESET plan_cache_mode")

    assert "toolcalltotal_denials" in plan, plan
