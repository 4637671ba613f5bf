"""The migration that counts models apart splits the usage totals kept before it
by model, from the runs they counted; a total whose runs are partly gone
(retention) stays whole, its model blank."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.models import RunTotal

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("agents", "0034_a2a")]
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def old_apps():
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


def test_totals_are_split_by_model_where_their_runs_are_all_kept(old_apps):
    User = old_apps.get_model("auth", "User")
    alice = User.objects.create(username="alice")
    Session = old_apps.get_model("agents", "Session")
    session = Session.objects.create(
        id="s1", adk_id="s1", app_name="bank", user_id=str(alice.pk), owner=alice
    )
    Run = old_apps.get_model("agents", "Run")
    Total = old_apps.get_model("agents", "RunTotal")
    for model, tokens in [("lab/a", 10), ("lab/b", 20), ("lab/b", 30)]:
        run = Run.objects.create(
            session=session,
            user=alice,
            status="succeeded",
            model=model,
            total_tokens=tokens,
        )
        Run.objects.filter(pk=run.pk).update(created_at=NOON)
    Total.objects.create(
        hour=NOON,
        user_id=alice.pk,
        agent="bank",
        outcome="succeeded",
        runs=3,
        total_tokens=60,
    )
    # An hour whose runs retention removed: kept whole.
    Total.objects.create(
        hour=NOON - timedelta(days=90),
        user_id=alice.pk,
        agent="bank",
        outcome="succeeded",
        runs=7,
        total_tokens=700,
    )

    migrate_to_latest()

    users = RunTotal.objects.filter(user_id__gte=0)
    rows = sorted(users.values_list("hour", "model", "runs", "total_tokens"))
    assert rows == [
        (NOON - timedelta(days=90), "", 7, 700),
        (NOON, "lab/a", 1, 10),
        (NOON, "lab/b", 2, 50),
    ]
