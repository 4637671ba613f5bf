"""Token usage totals, and daily budgets: refused before a turn, stopped mid-turn."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Budget, Run, RunTotal, Session
from agents.usage import count_ended_runs, count_late_tokens
from project.periods import EVERYONE_BY_PERIOD

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def spent(demo_agents, start_session):
    """Record a finished run of `user` that used `tokens`, `days_ago` days back."""

    def record(
        user, tokens: int, *, agent="weather_sentiment", days_ago: int = 0, at=None
    ):
        session = Session.objects.get(pk=start_session(user, agent))
        run = Run.objects.create(
            session=session,
            user=user,
            text="earlier",
            status=Run.Status.SUCCEEDED,
            prompt_tokens=tokens - tokens // 4,
            completion_tokens=tokens // 4,
            total_tokens=tokens,
        )
        created = at or timezone.now() - timedelta(days=days_ago)
        Run.objects.filter(pk=run.pk).update(created_at=created)
        count_ended_runs(Run.objects.filter(pk=run.pk))  # as its end counts it
        return run

    return record


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def system_error(frames: list[dict]) -> dict:
    return next(
        f["event"]["error"]
        for f in frames
        if f["event"]["kind"] == "error" and f["event"]["author"] == "system"
    )


def test_turn_over_the_users_budget_is_refused_before_it_starts(
    alice, demo_agents, start_session, say, events_of, spent
):
    Budget.objects.create(user=alice, daily_tokens=500)
    spent(alice, 500)
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "failed"
    assert run["total_tokens"] == 0
    frames = events_of(alice, session)
    assert kinds(frames) == ["run_started", "error", "run_finished"]
    error = system_error(frames)
    assert error["code"] == "BUDGET_EXCEEDED"
    assert "daily token budget (500) is used up" in error["message"]


def test_yesterdays_usage_does_not_count(alice, demo_agents, start_session, say, spent):
    Budget.objects.create(user=alice, daily_tokens=500)
    spent(alice, 5000, days_ago=1)
    session = start_session(alice, "weather_sentiment")

    assert say(alice, session, "weather in london?")["status"] == "succeeded"


def test_group_budget_is_shared_by_its_members(
    alice, bob, demo_agents, start_session, say, events_of, spent
):
    team = Group.objects.create(name="team")
    team.user_set.add(alice, bob)
    Budget.objects.create(group=team, daily_tokens=1000)
    spent(bob, 1000)
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "failed"
    error = system_error(events_of(alice, session))
    assert error["code"] == "BUDGET_EXCEEDED"
    assert "group team" in error["message"]


def test_turn_that_crosses_the_budget_stops_before_the_next_model_call(
    alice, demo_agents, start_session, say, events_of
):
    # The first model call (a long instruction) alone costs more than this.
    Budget.objects.create(user=alice, daily_tokens=50)
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "failed"
    assert run["total_tokens"] > 50  # the call that crossed it counts
    frames = events_of(alice, session)
    assert kinds(frames)[:4] == [
        "run_started",
        "user_message",
        "function_call",
        "function_response",
    ]
    assert "text" not in kinds(frames)
    stopped = [f["event"] for f in frames if f["event"]["kind"] == "error"]
    assert all(e["error"]["code"] == "BUDGET_EXCEEDED" for e in stopped)
    assert kinds(frames)[-1] == "run_finished"


def test_turn_within_budget_runs_and_is_counted(
    alice, demo_agents, start_session, say, api_for
):
    Budget.objects.create(user=alice, daily_tokens=100_000)
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    assert run["status"] == "succeeded"
    assert run["total_tokens"] == run["prompt_tokens"] + run["completion_tokens"] > 0
    budgets = api_for(alice).get("/api/budgets/").json()
    assert budgets[0]["used_today"] == run["total_tokens"]
    assert budgets[0]["remaining_today"] == 100_000 - run["total_tokens"]


def test_usage_totals_per_user_agent_and_day(alice, bob, make_user, api_for, spent):
    spent(alice, 100, agent="weather_sentiment")
    spent(alice, 40, agent="calculator")
    spent(alice, 7, agent="calculator", days_ago=3)
    spent(bob, 1000, agent="calculator")
    staff = make_user(is_staff=True)

    mine = api_for(alice).get("/api/usage/?group_by=agent").json()
    everyone = api_for(staff).get("/api/usage/?group_by=user").json()
    days = api_for(alice).get("/api/usage/?group_by=day").json()

    assert [(r["key"], r["runs"], r["total_tokens"]) for r in mine["rows"]] == [
        ("calculator", 2, 47),
        ("weather_sentiment", 1, 100),
    ]
    assert mine["total"]["total_tokens"] == 147
    assert [(r["key"], r["total_tokens"]) for r in everyone["rows"]] == [
        ("alice", 147),
        ("bob", 1000),
    ]
    today = timezone.localdate()
    assert [(r["key"], r["total_tokens"]) for r in days["rows"]] == [
        ((today - timedelta(days=3)).isoformat(), 7),
        (today.isoformat(), 140),
    ]
    row = days["rows"][1]
    assert row["prompt_tokens"] + row["completion_tokens"] == row["total_tokens"]
    # Staff's by day, agent and model read the hours for everyone: the users' sums.
    for group in ("day", "agent", "model"):
        staffs = api_for(staff).get(f"/api/usage/?group_by={group}").json()
        users = [
            api_for(u).get(f"/api/usage/?group_by={group}").json() for u in (alice, bob)
        ]
        summed: dict = {}
        for answer in users:
            for r in answer["rows"]:
                summed[r["key"]] = summed.get(r["key"], 0) + r["total_tokens"]
        assert {r["key"]: r["total_tokens"] for r in staffs["rows"]} == summed, group
    assert everyone["total"]["total_tokens"] == 1147


def test_usage_between_days(alice, api_for, spent):
    spent(alice, 1, days_ago=5)
    spent(alice, 10, days_ago=2)
    spent(alice, 100)
    today = timezone.localdate()
    since = (today - timedelta(days=2)).isoformat()
    until = (today - timedelta(days=1)).isoformat()

    only = api_for(alice).get(f"/api/usage/?since={since}&until={until}").json()

    assert only["group_by"] == "day"
    assert only["total"]["total_tokens"] == 10


@pytest.mark.parametrize(
    "query", ["group_by=tool", "since=yesterday", "since=2026-02-02&until=2026-02-01"]
)
def test_usage_rejects_bad_queries(alice, api_for, query):
    response = api_for(alice).get(f"/api/usage/?{query}")

    assert response.status_code == 400


def test_staff_set_budgets_for_a_user_or_a_group(alice, make_user, api_for):
    Group.objects.create(name="interns")
    client = api_for(make_user(is_staff=True))

    mine = client.post(
        "/api/budgets/", {"user": "alice", "daily_tokens": 1000}, format="json"
    )
    group = client.post(
        "/api/budgets/", {"group": "interns", "daily_tokens": 5000}, format="json"
    )
    both = client.post(
        "/api/budgets/",
        {"user": "alice", "group": "interns", "daily_tokens": 1},
        format="json",
    )
    neither = client.post("/api/budgets/", {"daily_tokens": 1}, format="json")
    again = client.post(
        "/api/budgets/", {"user": "alice", "daily_tokens": 1}, format="json"
    )
    changed = client.patch(
        f"/api/budgets/{mine.json()['id']}/", {"daily_tokens": 2000}, format="json"
    )

    assert mine.status_code == 201, mine.content
    assert mine.json()["used_today"] == 0
    assert group.status_code == 201 and group.json()["group"] == "interns"
    assert both.status_code == neither.status_code == again.status_code == 400
    assert "already has a budget" in str(again.json())
    assert changed.status_code == 200 and changed.json()["daily_tokens"] == 2000


def test_users_see_only_the_budgets_that_apply_to_them(alice, bob, api_for):
    team = Group.objects.create(name="team")
    team.user_set.add(alice)
    Budget.objects.create(user=alice, daily_tokens=10)
    Budget.objects.create(group=team, daily_tokens=20)
    Budget.objects.create(user=bob, daily_tokens=30)
    client = api_for(alice)

    seen = client.get("/api/budgets/").json()
    refused = client.post(
        "/api/budgets/", {"user": "alice", "daily_tokens": 10**9}, format="json"
    )

    assert sorted(b["daily_tokens"] for b in seen) == [10, 20]
    assert refused.status_code == 403


def test_admin_sets_a_budget_for_a_user_or_a_group_only(alice, client):
    admin = type(alice).objects.create_superuser("root", password="pw")
    interns = Group.objects.create(name="interns")
    client.force_login(admin)

    both = client.post(
        "/admin/agents/budget/add/",
        {"user": alice.pk, "group": interns.pk, "daily_tokens": 10},
    )
    one = client.post(
        "/admin/agents/budget/add/", {"group": interns.pk, "daily_tokens": 10}
    )

    assert both.status_code == 200  # the form again, with the error
    assert one.status_code == 302
    assert list(Budget.objects.values_list("group__name", "daily_tokens")) == [
        ("interns", 10)
    ]
    assert client.get("/admin/agents/budget/").status_code == 200


@pytest.mark.parametrize("runs", [2, 60])
def test_usage_costs_the_same_queries_whatever_the_number_of_runs(
    alice, bob, make_user, api_for, spent, django_assert_num_queries, runs
):
    for index in range(runs):
        spent((alice, bob)[index % 2], 10 + index, days_ago=index % 30)
    client = api_for(make_user(is_staff=True))
    since = (timezone.localdate() - timedelta(days=30)).isoformat()

    # The token (2), the totals (1); by user, the usernames (1).
    with django_assert_num_queries(3):
        days = client.get(f"/api/usage/?group_by=day&since={since}").json()
    with django_assert_num_queries(3):
        agents = client.get("/api/usage/?group_by=agent").json()
    with django_assert_num_queries(4):
        users = client.get("/api/usage/?group_by=user").json()

    expected = sum(10 + index for index in range(runs))
    assert days["total"]["total_tokens"] == expected
    assert agents["total"]["runs"] == users["total"]["runs"] == runs
    assert [row["key"] for row in users["rows"]] == ["alice", "bob"]


def test_a_turns_tool_call_and_tokens_show_as_soon_as_it_ends(
    alice, demo_agents, start_session, say, api_for
):
    session = start_session(alice, "weather_sentiment")

    run = say(alice, session, "weather in london?")

    client = api_for(alice)
    usage = client.get("/api/usage/?group_by=agent").json()
    overview = client.get("/api/tool-calls/summary/").json()
    assert run["status"] == "succeeded" and run["total_tokens"] > 0
    assert usage["rows"] == [
        {
            "key": "weather_sentiment",
            "runs": 1,
            "prompt_tokens": run["prompt_tokens"],
            "completion_tokens": run["completion_tokens"],
            "total_tokens": run["total_tokens"],
            "cost": "0.000000",  # the offline model has no price
        }
    ]
    assert (overview["kpis"]["calls"], overview["kpis"]["ran"]) == (1, 1)
    assert [row["tool"] for row in overview["slowest"]] == [
        "weather_sentiment.get_weather_report"
    ]


def test_a_stopped_turns_tokens_count_once_with_its_run(alice, spent):
    run = spent(alice, 0)
    RunTotal.objects.all().delete()
    # Who stopped it ended the run and counted it (agents.turns.cancel).
    Run.objects.filter(pk=run.pk).update(status=Run.Status.CANCELLED)
    count_ended_runs(Run.objects.filter(pk=run.pk))
    run.prompt_tokens, run.completion_tokens, run.total_tokens = 30, 10, 40

    count_late_tokens(run)  # the stopped turn stores what it counted after
    Run.objects.filter(pk=run.pk).update(
        prompt_tokens=30, completion_tokens=10, total_tokens=40
    )
    count_late_tokens(run)  # nothing more is late: counted once

    total = RunTotal.objects.get(user_id=alice.pk)
    assert (total.runs, total.prompt_tokens, total.total_tokens) == (1, 30, 40)
    for user_id in EVERYONE_BY_PERIOD.values():  # staff's periods, alike
        everyone = RunTotal.objects.get(user_id=user_id)
        assert (everyone.runs, everyone.prompt_tokens, everyone.total_tokens) == (
            1,
            30,
            40,
        )


def test_usage_days_are_cut_in_the_time_zone(alice, api_for, spent, settings):
    settings.TIME_ZONE = "America/New_York"  # UTC-4 in March 2026
    spent(alice, 5, at=datetime(2026, 3, 10, 3, 30, tzinfo=UTC))  # 23:30 the 9th
    spent(alice, 7, at=datetime(2026, 3, 10, 6, 0, tzinfo=UTC))  # 02:00 the 10th
    client = api_for(alice)

    days = client.get("/api/usage/?group_by=day").json()
    tenth = client.get("/api/usage/?since=2026-03-10&until=2026-03-10").json()

    assert [(r["key"], r["total_tokens"]) for r in days["rows"]] == [
        ("2026-03-09", 5),
        ("2026-03-10", 7),
    ]
    assert tenth["total"]["total_tokens"] == 7


def test_a_month_by_day_fetches_a_row_a_day_on_postgresql(
    alice, make_user, api_for, spent
):
    # Staff's month by day: one row a day from the database on PostgreSQL (its
    # hours summed by their day in TIME_ZONE there), not one an hour for Python.
    for hours_ago in (0, 1, 2, 3, 50, 51):
        spent(alice, 10, at=timezone.now() - timedelta(hours=hours_ago))
    client = api_for(make_user(is_staff=True))
    since = (timezone.localdate() - timedelta(days=30)).isoformat()

    with CaptureQueriesContext(connection) as queries:
        days = client.get(f"/api/usage/?group_by=day&since={since}").json()

    assert days["total"]["runs"] == 6
    (totals,) = [q["sql"] for q in queries if "agents_runtotal" in q["sql"]]
    if connection.vendor != "postgresql":
        return  # SQLite: a date function per row would be a Python call
    assert "AT TIME ZONE" in totals, totals
    with connection.cursor() as cursor:
        cursor.execute(totals)
        assert len(cursor.fetchall()) == len(days["rows"]) <= 4
