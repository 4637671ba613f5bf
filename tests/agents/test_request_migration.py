"""The migration to one Request model keeps every call, credential request and approval.

From the schema before issue 15 (agents 0006, toolsets 0008), rows of the three old
models are stored, then the migrations run forward: each is a Request of its kind,
with what it said, who answered and when, and its creation time. Back again, each
is a row of its old model once more.
"""

from datetime import UTC, datetime
from uuid import uuid4

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.models import Request

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("agents", "0006_session_scoping"), ("toolsets", "0008_risky_granted_only")]
ASKED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ANSWERED = datetime(2026, 1, 2, 4, 0, 0, tzinfo=UTC)
EXPIRES = datetime(2026, 1, 3, 0, 0, 0, tzinfo=UTC)


@pytest.fixture
def old_apps():
    """The apps as they were before issue 15; the schema is the latest again after."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        yield executor.loader.project_state(BEFORE).apps
    finally:
        _migrate_to_latest()


def _migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _stored_before(old_apps) -> dict:
    """One row of each old model, in one session, answered or not."""
    User = old_apps.get_model("auth", "User")
    alice = User.objects.create(username="alice")
    carol = User.objects.create(username="carol")
    session = old_apps.get_model("agents", "Session").objects.create(
        id="s1", adk_id="s1", app_name="bank", user_id=str(alice.pk), owner=alice
    )
    Run = old_apps.get_model("agents", "Run")
    asked_in = Run.objects.create(session=session, user=alice, text="go")
    answer = Run.objects.create(session=session, user=carol)
    Call = old_apps.get_model("agents", "LongRunningCall")
    call = Call.objects.create(
        session=session,
        run=asked_in,
        call_id="adk-call",
        name="ask_for_approval",
        args={"amount": 500},
        agent="reimbursement",
        invocation_id="e-1",
        answered_by_group="managers",
        status="answered",
        response={"status": "approved"},
        answered_by=carol,
        answer_run=answer,
        answered_at=ANSWERED,
    )
    Asked = old_apps.get_model("agents", "CredentialRequest")
    asked = Asked.objects.create(
        session=session,
        run=asked_in,
        call_id="adk-credential",
        tool_call_id="adk-quote",
        tool_name="get_stock_quote",
        agent="quotes",
        invocation_id="e-1",
        credential_key="demo_quotes_api_key",
        scheme="apiKey",
        auth_config={"auth_scheme": {"type": "apiKey"}},
    )
    Approval = old_apps.get_model("toolsets", "Approval")
    approval = Approval.objects.create(
        session=session,
        owner=alice,
        run_id=asked_in.pk,
        invocation_id="e-1",
        agent="teller",
        call_id="adk-confirmation",
        tool_call_id="adk-wire",
        tool_name="wire_money",
        args={"amount": 100},
        hint="Send 100?",
        approver_group="auditors",
        status="rejected",
        decided_by=carol,
        decided_at=ANSWERED,
        answer_run_id=uuid4(),  # a run gone since: left out, not refused
        expires_at=EXPIRES,
    )
    for row in (call, asked, approval):
        type(row).objects.filter(pk=row.pk).update(created_at=ASKED)
    return {"alice": alice, "carol": carol, "run": asked_in, "answer": answer}


def test_each_old_row_becomes_a_request_of_its_kind(old_apps):
    before = _stored_before(old_apps)

    _migrate_to_latest()

    rows = {r.kind: r for r in Request.objects.select_related("session")}
    assert sorted(rows) == ["approval", "call", "credential"]
    call, asked, approval = rows["call"], rows["credential"], rows["approval"]
    assert {r.session_id for r in rows.values()} == {"s1"}
    assert {r.run_id for r in rows.values()} == {before["run"].pk}
    assert {r.created_at for r in rows.values()} == {ASKED}
    assert (call.call_id, call.tool_name, call.args, call.agent) == (
        "adk-call",
        "ask_for_approval",
        {"amount": 500},
        "reimbursement",
    )
    assert (call.status, call.answer_group, call.response) == (
        "answered",
        "managers",
        {"status": "approved"},
    )
    assert (call.answered_by_id, call.answered_at, call.answer_run_id) == (
        before["carol"].pk,
        ANSWERED,
        before["answer"].pk,
    )
    assert (asked.status, asked.call_id, asked.tool_call_id, asked.tool_name) == (
        "pending",
        "adk-credential",
        "adk-quote",
        "get_stock_quote",
    )
    assert (asked.credential_key, asked.scheme, asked.auth_config) == (
        "demo_quotes_api_key",
        "apiKey",
        {"auth_scheme": {"type": "apiKey"}},
    )
    assert (approval.status, approval.call_id, approval.tool_call_id) == (
        "rejected",
        "adk-confirmation",
        "adk-wire",
    )
    assert (approval.tool_name, approval.args, approval.hint) == (
        "wire_money",
        {"amount": 100},
        "Send 100?",
    )
    assert (approval.answer_group, approval.answered_by_id, approval.answered_at) == (
        "auditors",
        before["carol"].pk,
        ANSWERED,
    )
    assert (approval.expires_at, approval.answer_run_id) == (EXPIRES, None)
    assert approval.session.owner_id == before["alice"].pk


def test_back_again_each_request_is_a_row_of_its_old_model(old_apps):
    _stored_before(old_apps)
    _migrate_to_latest()

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    back = executor.loader.project_state(BEFORE).apps

    call = back.get_model("agents", "LongRunningCall").objects.get()
    asked = back.get_model("agents", "CredentialRequest").objects.get()
    approval = back.get_model("toolsets", "Approval").objects.get()
    assert (call.call_id, call.name, call.answered_by_group, call.created_at) == (
        "adk-call",
        "ask_for_approval",
        "managers",
        ASKED,
    )
    assert (asked.call_id, asked.credential_key, asked.status) == (
        "adk-credential",
        "demo_quotes_api_key",
        "pending",
    )
    assert (approval.call_id, approval.approver_group, approval.status) == (
        "adk-confirmation",
        "auditors",
        "rejected",
    )
    assert approval.owner.username == "alice"
