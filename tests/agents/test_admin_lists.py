"""Day 100 (issue 43): the Django admin's lists of tables that grow with use open
at the cost of a page, whatever the history (project.admin_lists): newest first,
along an index, with no query a row and no filter choices read from every row."""

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Event, Request, Run, Session
from agents.sessions import create_session
from project import admin_lists
from tests.agents.retention.helpers import add_events, tool_call
from toolsets.call_totals import create_call
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db

LISTS = {
    "sessions": "/admin/agents/session/",
    "events": "/admin/agents/event/",
    "runs": "/admin/agents/run/",
    "requests": "/admin/agents/request/",
    "tool calls": "/admin/toolsets/toolcall/",
}

TABLES = {
    "sessions": "agents_session",
    "events": "agents_event",
    "runs": "agents_run",
    "requests": "agents_request",
    "tool calls": "toolsets_toolcall",
}


def history(users, agent, sessions: int) -> None:
    """`sessions` sessions a user, each with events, a run, an answered request
    and an audit row: who answered, who owns, which session, each a row of its own."""
    for user in users:
        for n in range(sessions):
            session = create_session(user=user, agent=agent)
            add_events(session, 3)
            run = Run.objects.create(
                session=session, user=user, status=Run.Status.SUCCEEDED
            )
            Request.objects.create(
                kind=Request.Kind.APPROVAL,
                status=Request.Status.APPROVED,
                session=session,
                run=run,
                call_id=f"c{n}",
                tool_name="bank.wire_money",
                answered_by=user,
            )
            tool_call(user, days_ago=n, agent=agent.name)


def bulk(session: Session, *, rows: int) -> None:
    """`rows` more events, runs, requests and audit rows, in a few statements."""
    add_events(session, rows)
    runs = Run.objects.bulk_create(
        Run(session=session, user=session.owner, status=Run.Status.SUCCEEDED)
        for _ in range(rows)
    )
    Request.objects.bulk_create(
        Request(session=session, run=run, kind="approval", call_id=f"b{n}")
        for n, run in enumerate(runs)
    )
    ToolCall.objects.bulk_create(
        ToolCall(
            user=session.owner,
            tool_name="launch",
            started_at=run.created_at,
            finished_at=run.created_at,
        )
        for run in runs
    )


def queries_of(client, path: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200, path
    return [query["sql"] for query in captured.captured_queries]


def test_a_list_costs_the_same_queries_however_many_rows_it_shows(
    superuser_client, make_user, demo_agents
):
    agent = demo_agents["bank"]
    history([make_user()], agent, sessions=2)
    few = {
        name: len(queries_of(superuser_client, path)) for name, path in LISTS.items()
    }

    history([make_user() for _ in range(4)], agent, sessions=5)
    many = {
        name: len(queries_of(superuser_client, path)) for name, path in LISTS.items()
    }

    assert Session.objects.count() == 22
    assert many == few


def test_each_list_pages_along_an_index_and_reads_no_rows_for_its_filters(
    superuser_client, make_user, demo_agents, monkeypatch
):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's planner")
    history([make_user() for _ in range(3)], demo_agents["bank"], sessions=10)
    bulk(Session.objects.first(), rows=3000)  # enough for the planner to weigh
    for model_admin in admin.site._registry.values():
        monkeypatch.setattr(model_admin, "list_per_page", 5)  # 30 rows: pages
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    for name, path in LISTS.items():
        for sql in queries_of(superuser_client, path):
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
                plan = " / ".join(row[-1] for row in cursor.fetchall())
            # A sort of every row ("FOR RIGHT PART OF ORDER BY", the ties of
            # equal times within a page, is not), or a filter's choices read as
            # distinct values of every row (a field filter, a date drill-down);
            # the audit's agents come from the weekly totals, a few rows a week.
            assert "TEMP B-TREE FOR ORDER BY" not in plan, (name, sql, plan)
            every_row = f'FROM "{TABLES[name]}"' in sql
            assert not (every_row and "FOR DISTINCT" in plan), (name, sql, plan)
            assert "django_datetime" not in sql, (name, sql)


def test_the_events_list_shows_the_newest_first_and_filters_by_kind(
    superuser_client, alice, demo_agents
):
    session = create_session(user=alice, agent=demo_agents["bank"])
    add_events(session, 3)
    newest = Event.objects.order_by("-id").first()

    page = superuser_client.get(LISTS["events"]).content.decode()
    texts = superuser_client.get(LISTS["events"], {"kind": "text"}).content.decode()

    assert page.index(f"/admin/agents/event/{newest.pk}/") < page.index(
        f"/admin/agents/event/{newest.pk - 1}/"
    )
    assert "?kind=user_message" in page  # the filter offers every kind
    assert "?kind=function_call" in page
    assert f"/admin/agents/event/{newest.pk}/" not in texts  # a user's message
    # No "Show counts": it would count every row once a choice.
    assert "_facets" not in page


def test_the_audit_filters_by_the_agents_that_called(superuser_client, alice):
    for agent in ("bank", "weather_sentiment", "bank"):
        create_call(
            user=alice,
            agent=agent,
            tool_name="launch",
            started_at=timezone.now(),
            finished_at=timezone.now(),
        )

    page = superuser_client.get(LISTS["tool calls"])
    banks = superuser_client.get(LISTS["tool calls"], {"agent": "bank"})

    assert "?agent=bank" in page.content.decode()
    assert "?agent=weather_sentiment" in page.content.decode()
    assert page.context["cl"].result_count == 3
    assert banks.context["cl"].result_count == 2


def test_an_unfiltered_list_on_postgresql_is_counted_by_its_estimate(
    superuser_client, alice, demo_agents, monkeypatch
):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's estimate (SQLite counts its smallest index)")
    monkeypatch.setattr(admin_lists, "ESTIMATED_FROM", 5)
    session = create_session(user=alice, agent=demo_agents["bank"])
    add_events(session, 40)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agents_event")

    every = queries_of(superuser_client, LISTS["events"])
    mine = queries_of(superuser_client, LISTS["events"] + "?kind=user_message")

    counts = [sql for sql in every if sql.startswith("SELECT COUNT(*)")]
    assert counts == []  # the estimate: 40, as ANALYZE found
    assert any(sql.startswith("SELECT COUNT(*)") for sql in mine)  # exact
    listed = superuser_client.get(LISTS["events"])
    assert listed.context["cl"].result_count == 40

    # Rows added since ANALYZE move the estimate (it scales with the table's
    # pages), and its last page is never cut at the estimate: what is there shows.
    add_events(session, 400)
    monkeypatch.setattr(admin.site._registry[Event], "list_per_page", 100)
    counted = superuser_client.get(LISTS["events"]).context["cl"].result_count
    pages = -(-counted // 100)
    last = superuser_client.get(LISTS["events"], {"p": pages}).context["cl"]
    assert counted > 40
    assert len(last.result_list) == min(100, 440 - (pages - 1) * 100)


def test_the_sessions_list_filters_by_agent(superuser_client, alice, demo_agents):
    for name in ("bank", "bank", "weather_sentiment"):
        create_session(user=alice, agent=demo_agents[name])

    page = superuser_client.get(LISTS["sessions"])
    banks = superuser_client.get(LISTS["sessions"], {"app_name": "bank"})

    assert "?app_name=weather_sentiment" in page.content.decode()
    assert banks.context["cl"].result_count == 2
