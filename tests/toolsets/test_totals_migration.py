"""The totals' migrations count what was stored before them: every ended run in
usage's totals (a queued or running one is counted when it ends), every audit row
in the Overview's, in batches, so a team's history shows the day they upgrade."""

from datetime import UTC, datetime, timedelta
from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.models import RunTotal
from project.periods import (
    EVERYONE_BY_PERIOD,
    EVERYONE_HOURS,
    EVERYONE_SIX_HOURS,
    EVERYONE_WEEKS,
    period_of,
)
from toolsets.call_totals import EVERYONE, create_call
from toolsets.models import ToolCallTotal

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("agents", "0023_run_requeues"), ("toolsets", "0021_access_version")]
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def old_apps():
    """The apps as they were before the totals; the schema is the latest after."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        yield executor.loader.project_state(BEFORE).apps
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_history_is_counted_by_the_migration(old_apps, monkeypatch):
    # Batches of two rows: a key's rows in two batches add up.
    for name in (
        "agents.migrations.0026_run_totals_backfill",
        "toolsets.migrations.0023_tool_call_totals_backfill",
    ):
        monkeypatch.setattr(import_module(name), "BATCH", 2)
    User = old_apps.get_model("auth", "User")
    alice = User.objects.create(username="alice")
    Session = old_apps.get_model("agents", "Session")
    session = Session.objects.create(
        id="s1", adk_id="s1", app_name="bank", user_id=str(alice.pk), owner=alice
    )
    Run = old_apps.get_model("agents", "Run")
    for index, status in enumerate(["succeeded", "failed", "succeeded", "queued"]):
        run = Run.objects.create(
            session=session, user=alice, status=status, total_tokens=10 + index
        )
        Run.objects.filter(pk=run.pk).update(created_at=NOON + timedelta(minutes=index))
    OldCall = old_apps.get_model("toolsets", "ToolCall")
    for index, ms in enumerate([5, 40, 40, 70_000, 3]):
        OldCall.objects.create(
            user=alice if index < 4 else None,
            agent="bank",
            tool_name="wire_money",
            tool_full_name="bank.wire_money" if index else "",
            status="ok",
            duration_ms=ms,
            started_at=NOON + timedelta(hours=index // 2),
            finished_at=NOON,
        )

    migrate_to_latest()

    users = RunTotal.objects.filter(user_id__gte=0)
    assert sorted(users.values_list("outcome", "runs", "total_tokens")) == [
        ("failed", 1, 11),
        ("succeeded", 2, 22),
    ]
    calls = {
        (t.hour, t.user_id, t.tool): (t.calls, t.le_10ms, t.le_50ms, t.over_60s)
        for t in ToolCallTotal.objects.filter(user_id__gte=0)
    }
    later = NOON + timedelta(hours=1)
    assert calls == {
        (NOON, alice.pk, "wire_money"): (1, 1, 0, 0),
        (NOON, alice.pk, "bank.wire_money"): (1, 0, 1, 0),
        (later, alice.pk, "bank.wire_money"): (2, 0, 1, 1),
        (NOON + timedelta(hours=2), 0, "bank.wire_money"): (1, 1, 0, 0),
    }
    assert ToolCallTotal.objects.get(hour=later, user_id=alice.pk).max_ms == 70_000
    # The day's, for everyone, across the batches.
    day = {
        t.tool: (t.calls, t.le_10ms, t.le_50ms, t.over_60s)
        for t in ToolCallTotal.objects.filter(user_id=EVERYONE)
    }
    assert day == {"wire_money": (1, 1, 0, 0), "bank.wire_money": (4, 1, 2, 1)}
    assert {t.hour for t in ToolCallTotal.objects.filter(user_id=EVERYONE)} == {
        NOON.replace(hour=0)
    }
    # Each hour's, for everyone (0025, from the users' hours): alice's and nobody's.
    hours = {
        (t.hour, t.tool): (t.calls, t.le_10ms, t.le_50ms, t.over_60s, t.max_ms)
        for t in ToolCallTotal.objects.filter(user_id=EVERYONE_HOURS)
    }
    assert hours == {
        (NOON, "wire_money"): (1, 1, 0, 0, 5),
        (NOON, "bank.wire_money"): (1, 0, 1, 0, 40),
        (later, "bank.wire_money"): (2, 0, 1, 1, 70_000),
        (NOON + timedelta(hours=2), "bank.wire_money"): (1, 1, 0, 0, 3),
    }
    # Each six hours' and week's, for everyone (0030, from the hours' and days'),
    # at their periods' starts (a week from a Thursday: 5 March).
    week = datetime(2026, 3, 5, tzinfo=UTC)
    for user_id, start in ((EVERYONE_SIX_HOURS, NOON), (EVERYONE_WEEKS, week)):
        periods = {
            (t.hour, t.tool): (t.calls, t.le_10ms, t.le_50ms, t.over_60s, t.max_ms)
            for t in ToolCallTotal.objects.filter(user_id=user_id)
        }
        assert periods == {
            (start, "wire_money"): (1, 1, 0, 0, 5),
            (start, "bank.wire_money"): (4, 1, 2, 1, 70_000),
        }
    # By status alone, each period's (0030): the five calls in one row each.
    for user_id, start in ((-11, NOON.replace(hour=0)), (-13, NOON), (-12, later)):
        rows = ToolCallTotal.objects.filter(user_id=user_id, hour=start)
        assert list(rows.values_list("agent", "tool", "status")) == [("", "", "ok")]
    assert ToolCallTotal.objects.get(user_id=-13).calls == 5
    assert ToolCallTotal.objects.get(user_id=-12, hour=later).calls == 2
    # A call audited after adds to the rows the migration filled, not beside them.
    create_call(
        user=None,
        agent="bank",
        tool_name="wire_money",
        tool_full_name="bank.wire_money",
        status="ok",
        duration_ms=7,
        started_at=NOON + timedelta(hours=5, minutes=59),
        finished_at=NOON,
    )
    for user_id, start in ((EVERYONE_SIX_HOURS, NOON), (EVERYONE_WEEKS, week)):
        [row] = ToolCallTotal.objects.filter(user_id=user_id, tool="bank.wire_money")
        assert (row.hour, row.calls, row.le_10ms) == (start, 5, 2)
    assert ToolCallTotal.objects.get(user_id=-13).calls == 6
    # Every user's runs by week, day and six hours (agents 0049, from the hours').
    for size, user_id in EVERYONE_BY_PERIOD.items():
        periods = RunTotal.objects.filter(user_id=user_id)
        assert sorted(
            periods.values_list("hour", "outcome", "runs", "total_tokens")
        ) == [
            (period_of(NOON, size), "failed", 1, 11),
            (period_of(NOON, size), "succeeded", 2, 22),
        ]
