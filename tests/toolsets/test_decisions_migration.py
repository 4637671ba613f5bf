"""The audit migration of issue 16 keeps the access rule, and gives rows held
before it the decision their request recorded."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("agents", "0007_requests"), ("toolsets", "0010_audit_statuses")]
ASKED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
DECIDED = datetime(2026, 1, 2, 4, 0, 0, tzinfo=UTC)
RULE = "toolset bank is open to everyone"


@pytest.fixture
def old_apps():
    """The apps as they were before issue 16; the schema is the latest again after."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        yield executor.loader.project_state(BEFORE).apps
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def _held_before(old_apps) -> None:
    """Two held calls of alice's: one bob rejected, one still waiting."""
    User = old_apps.get_model("auth", "User")
    alice = User.objects.create(username="alice")
    bob = User.objects.create(username="bob")
    session = old_apps.get_model("agents", "Session").objects.create(
        id="s1", adk_id="s1", app_name="bank", user_id=str(alice.pk), owner=alice
    )
    Request = old_apps.get_model("agents", "Request")
    OldCall = old_apps.get_model("toolsets", "ToolCall")
    for call_id, status in (("adk-rejected", "rejected"), ("adk-waiting", "pending")):
        Request.objects.create(
            kind="approval",
            status=status,
            session=session,
            call_id=f"confirm-{call_id}",
            tool_call_id=call_id,
            tool_name="wire_money",
            answered_by=bob if status == "rejected" else None,
            answered_at=DECIDED if status == "rejected" else None,
        )
        OldCall.objects.create(
            user=alice,
            session_id="s1",
            agent="bank",
            call_id=call_id,
            tool_name="wire_money",
            status="awaiting_approval",
            decided_by=RULE,
            started_at=ASKED,
            finished_at=ASKED,
        )


def test_held_rows_take_their_decision_and_keep_their_rule(old_apps):
    _held_before(old_apps)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    rows = ToolCall.objects.order_by("call_id").values_list(
        "call_id", "status", "decided_by__username", "decided_at", "access_rule"
    )
    assert list(rows) == [
        ("adk-rejected", "rejected", "bob", DECIDED, RULE),
        ("adk-waiting", "awaiting_approval", None, None, RULE),
    ]
