"""Day 100 (issue 43): the queries a person or a sweep runs often take the index
made for them on SQLite, and SQLite has its statistics; its search reads one
user's rows. (PostgreSQL's search plan: tests/agents/test_search.py.)"""

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Event, Request, Run, Session
from agents.requests.inbox import addressed, inbox_of
from agents.requests.kinds import APPROVAL
from agents.search import OWNER_SPAN
from agents.session_list import _last_runs, add_status
from agents.sessions import create_session

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner"),
]


def plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
        return "\n".join(row[-1] for row in cursor.fetchall())


def test_the_sessions_list_is_a_range_of_its_index_with_no_sort(alice):
    mine = Session.objects.filter(owner=alice, archived_at__isnull=True)
    archived = Session.objects.filter(owner=alice, archived_at__isnull=False)

    listed = plan(mine.order_by("-updated_at", "-pk")[:21])
    shown = plan(archived.order_by("-updated_at", "-pk")[:21])

    assert "USING INDEX session_list" in listed, listed
    assert "USING INDEX session_archive" in shown, shown
    assert "TEMP B-TREE" not in listed + shown


def test_the_sweep_and_metrics_read_their_runs_on_their_partial_indexes():
    unfinished = Run.objects.extra(where=[Run.UNFINISHED_SQL]).order_by("created_at")
    queued = Run.objects.filter(status="queued").values("pk")  # `=`: prepared again
    # What a plain filter does: a bound parameter never proves the index's condition.
    by_parameter = Run.objects.filter(status__in=["queued", "running"])

    assert "USING INDEX run_unfinished" in plan(unfinished)
    assert "USING INDEX run_queued" in plan(queued)
    assert "SCAN agents_run" in plan(by_parameter)


def test_the_inbox_reads_only_the_pending_requests_whatever_the_statistics(
    alice, demo_agents
):
    session = create_session(user=alice, agent=demo_agents["bank"])
    statuses = ["answered", "expired", "rejected", "approved"] * 1000 + ["pending"]
    Request.objects.bulk_create(
        Request(session=session, kind="call", call_id=f"c{n}", status=status)
        for n, status in enumerate(statuses)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # a status now looks like a fifth of the table

    waiting = plan(inbox_of(user=alice)).splitlines()

    assert "SCAN agents_request" not in waiting, waiting
    assert any("request_pending" in line for line in waiting), waiting


def test_a_kinds_history_is_read_newest_first_from_its_index(alice, demo_agents):
    """A team's history of approvals (every status) is listed from the newest
    until the page is full: never every approval of the team, sorted."""
    session = create_session(user=alice, agent=demo_agents["bank"])
    Request.objects.bulk_create(
        Request(session=session, kind="approval", call_id=f"c{n}", status="approved")
        for n in range(3000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    approvals = plan(addressed(user=alice, kind=APPROVAL)[:200])
    history = plan(inbox_of(user=alice, status="all").filter(kind="approval")[:50])

    for listing in (approvals, history):
        assert "USING INDEX request_kind_newest" in listing, listing
        assert "TEMP B-TREE FOR ORDER BY" not in listing, listing


def test_sqlite_has_its_statistics_after_migrate():
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sqlite_stat1")
        (rows,) = cursor.fetchone()

    assert rows > 0


def test_a_search_row_is_kept_in_its_owners_rowid_range(alice, bob, demo_agents):
    sessions = {
        user: create_session(user=user, agent=demo_agents["bank"])
        for user in (alice, bob)
    }
    for user, session in sessions.items():
        Event.objects.create(
            session=session,
            seq=1,
            event_id=f"e-{user.pk}",
            author="user",
            kind="user_message",
            timestamp=time.time(),
            data={"content": {"role": "user", "parts": [{"text": "payroll"}]}},
        )
        Session.objects.filter(pk=session.pk).update(title="payroll")

    with connection.cursor() as cursor:
        cursor.execute("SELECT rowid, session_id FROM agents_search_text")
        texts = cursor.fetchall()
        cursor.execute("SELECT rowid, session_id FROM agents_search_title")
        titles = cursor.fetchall()

    for user, session in sessions.items():
        for rows in (texts, titles):
            (rowid,) = [rowid for rowid, pk in rows if pk == session.pk]
            assert rowid // OWNER_SPAN == user.pk


def test_a_session_deleted_before_its_events_takes_its_search_rows(alice, demo_agents):
    # A flush or a hand-made cleanup deletes the session first (foreign keys
    # are checked at commit); the event trigger then cannot find its owner.
    kept, gone = (create_session(user=alice, agent=demo_agents["bank"]) for _ in "ab")
    for session in (kept, gone):
        Event.objects.create(
            session=session,
            seq=1,
            event_id=f"e-{session.pk}",
            author="user",
            kind="user_message",
            timestamp=time.time(),
            data={"content": {"role": "user", "parts": [{"text": "payroll"}]}},
        )

    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM agents_session WHERE id = %s", [gone.pk])
        cursor.execute("DELETE FROM agents_event WHERE session_id = %s", [gone.pk])
        cursor.execute("SELECT session_id FROM agents_search_text")
        left = [pk for (pk,) in cursor.fetchall()]

    assert left == [kept.pk]


SEARCH_TRIGGERS = [
    "agents_search_event_insert",
    "agents_search_event_delete",
    "agents_search_event_update",
    "agents_search_session_insert",
    "agents_search_session_title",
    "agents_search_session_delete",
    "agents_search_session_owner",
]


def test_sqlite_keeps_its_search_tables_by_triggers():
    # A migration that remakes agents_event or agents_session drops their
    # triggers: it must make them again (migration 0024's docstring).
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        triggers = {row[0] for row in cursor.fetchall()}

    assert set(SEARCH_TRIGGERS) <= triggers


def test_a_sessions_latest_run_is_one_step_down_its_index(alice, demo_agents):
    session = create_session(user=alice, agent=demo_agents["bank"])
    start = timezone.now() - timedelta(days=30)
    Run.objects.bulk_create(
        Run(session=session, user=alice, status="succeeded") for _ in range(3000)
    )
    for n, run in enumerate(Run.objects.filter(session=session)):
        Run.objects.filter(pk=run.pk).update(created_at=start + timedelta(minutes=n))
    newest = Run.objects.create(session=session, user=alice, status="queued")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    [shown] = add_status([Session.objects.get(pk=session.pk)])

    assert shown.last_run_id == newest.pk
    assert shown.has_unfinished_run
    steps = "\n".join(_plans_of(lambda: _last_runs([session.pk])))
    assert "run_session_latest" in steps, steps
    assert "SCAN agents_run" not in steps, steps


def _plans_of(call) -> list[str]:
    """The query plans of every query `call` runs."""
    with CaptureQueriesContext(connection) as queries:
        call()
    found = []
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
            found.extend(row[-1] for row in cursor.fetchall())
    return found
