"""The Overview's totals stay equal to the audit rows they count while many threads
audit calls at once, and decide held ones, as a worker's turns do: the totals'
upsert adds, it never loses an addition to a race (project.counters), on SQLite and
on PostgreSQL (tests/project/test_threads_postgresql.py runs this file there)."""

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.db.models import Count, Max, Sum
from django.utils import timezone

from project.periods import EVERYONE_BY_PERIOD
from tests.threads import at_once
from toolsets.call_totals import BUCKETS, STATUSES_BY_PERIOD, bucket_of
from toolsets.governance.decisions import record_decision
from toolsets.governance.records import record_call
from toolsets.models import ToolCall, ToolCallTotal

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
CALLS_EACH = 10
STATUSES = ("ok", "ok", "error", "denied", "awaiting_approval")


def audit(user_id: int | None, index: int) -> None:
    """One audit row, written as governance writes it (records.record_call)."""
    started = timezone.now() - timedelta(hours=index % 2)
    async_to_sync(record_call)(
        user_id=user_id,
        session_id="s1",
        run_id=None,
        invocation_id="inv",
        agent="bank",
        adk_agent="bank",
        call_id=f"call-{user_id}-{index}",
        tool_name="wire_money",
        tool_full_name=("bank.wire_money", "bank.balance")[index % 2],
        args={},
        result_summary="",
        raw_result_summary="",
        status=STATUSES[index % len(STATUSES)],
        access_rule="",
        started_at=started,
        finished_at=started,
        duration_ms=(index * 97) % 3000,
        attempts=1,
    )


def assert_totals_equal_rows() -> None:
    counted = {
        (t.user_id, t.tool, t.status): t
        for t in ToolCallTotal.objects.filter(calls__gt=0, user_id__gte=0)
    }
    rows = (
        ToolCall.objects.values("user_id", "tool_full_name", "status")
        .annotate(n=Count("id"), longest=Max("duration_ms"))
        .order_by()
    )
    by_key: dict = {}
    for row in rows:
        key = (row["user_id"] or 0, row["tool_full_name"], row["status"])
        by_key[key] = by_key.get(key, 0) + row["n"]
    assert {k: t.calls for k, t in counted.items()} == by_key
    buckets = {name: 0 for name in BUCKETS}
    for ms in ToolCall.objects.values_list("duration_ms", flat=True):
        buckets[bucket_of(ms)] += 1
    # The hours' totals by user, and every period's for everyone (weeks, days,
    # six hours, hours), each count every row.
    for rows in (
        ToolCallTotal.objects.filter(user_id__gte=0),
        *(ToolCallTotal.objects.filter(user_id=u) for u in EVERYONE_BY_PERIOD.values()),
        *(ToolCallTotal.objects.filter(user_id=u) for u in STATUSES_BY_PERIOD.values()),
    ):
        total = rows.aggregate(
            calls=Sum("calls"), **{name: Sum(name) for name in BUCKETS}
        )
        assert total["calls"] == ToolCall.objects.count()
        assert {name: total[name] for name in BUCKETS} == buckets
    by_status = dict(
        ToolCall.objects.values_list("status").annotate(n=Count("id")).order_by()
    )
    periods = {**{u: s for s, u in EVERYONE_BY_PERIOD.items()}}
    periods |= {u: s for s, u in STATUSES_BY_PERIOD.items()}
    for user_id, size in periods.items():
        everyone = ToolCallTotal.objects.filter(user_id=user_id, calls__gt=0)
        assert (
            dict(everyone.values_list("status").annotate(n=Sum("calls")).order_by())
            == by_status
        )
        # Each row at the start of its period, and a call moved out of a row takes
        # it from that row (the write's key and SQL's alike): none below zero.
        assert not ToolCallTotal.objects.filter(user_id=user_id, calls__lt=0)
        for hour in everyone.values_list("hour", flat=True):
            assert hour.timestamp() % size == 0


def test_calls_audited_at_once_are_each_counted_once(alice, bob):
    users = (alice.pk, bob.pk, None)

    def write(index: int) -> None:
        try:
            for n in range(CALLS_EACH):
                audit(users[index % 3], index * CALLS_EACH + n)
        finally:
            connection.close()

    at_once(write, threads=THREADS)

    assert ToolCall.objects.count() == THREADS * CALLS_EACH
    assert_totals_equal_rows()


def test_held_calls_decided_at_once_move_between_totals_once(alice):
    for index in range(THREADS):
        audit(alice.pk, index * len(STATUSES) + 4)  # held, of two hours and tools
    held = list(ToolCall.objects.values_list("call_id", flat=True))

    def decide(index: int) -> int:
        try:
            # Two deciders race for each call: only one moves it.
            return record_decision(
                session_id="s1",
                call_id=held[index % len(held)],
                status=("approved", "rejected")[index % 2],
                decided_by_id=None,
                decided_at=timezone.now(),
            )
        finally:
            connection.close()

    moved = at_once(decide, threads=THREADS * 2)

    assert sum(moved) == len(held)
    assert not ToolCall.objects.filter(status="awaiting_approval").exists()
    assert_totals_equal_rows()
