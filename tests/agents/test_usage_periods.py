"""Staff's usage by day, agent and model reads every user's runs in the fewest
periods (whole weeks, days, six hours, hours at the window's ends; by day, each
day's own: project.periods.cover), and answers exactly what every user's hours gave,
for windows of days in TIME_ZONE (whole-hour, half-hour and DST zones), open-ended
or not, on runs spread over hours, days, users, agents, models and outcomes."""

import random
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Run, RunTotal, Session
from agents.usage import (
    Totals,
    count_ended_run,
    count_ended_runs,
    usage_totals,
    visible_totals,
)
from project.periods import EVERYONE_HOURS

pytestmark = pytest.mark.django_db
WINDOWS = [  # since, until: days before today (None: open)
    (30, None),
    (7, None),
    (1, None),
    (0, None),
    (30, 0),
    (12, 3),
    (45, 20),
    (9, 9),
    (-1, None),  # tomorrow on: the runs "ahead" of now
    (3, 5),  # until before since: nothing
]


@pytest.fixture
def history(alice, bob):
    """Ended runs over 40 days and the next three hours: two users, two agents, two
    models, three endings; half counted by value as a turn's end, half by SQL."""
    rng = random.Random(43)
    now = timezone.now()
    sessions = [
        Session.objects.create(
            app_name=agent, user_id=str(user.pk), adk_id=f"{agent}{user.pk}", owner=user
        )
        for user in (alice, bob)
        for agent in ("calculator", "weather")
    ]
    by_sql = []
    for index in range(300):
        session = rng.choice(sessions)
        run = Run.objects.create(
            session=session,
            user=session.owner,
            model=rng.choice(["gemini/flash", "offline/echo"]),
            status=rng.choice(["succeeded", "failed", "cancelled"]),
            prompt_tokens=index,
            completion_tokens=3,
            total_tokens=index + 3,
            cost_micros=index * 7,
        )
        created = now + timedelta(hours=3) - timedelta(minutes=rng.randrange(40 * 1440))
        Run.objects.filter(pk=run.pk).update(created_at=created)
        run.created_at = created
        if index % 2:
            count_ended_run(run)
        else:
            by_sql.append(run.pk)
    count_ended_runs(Run.objects.filter(pk__in=by_sql))
    return now


@pytest.mark.parametrize(
    "zone", ["UTC", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe"]
)
def test_staffs_usage_in_periods_is_what_every_users_hours_gave(
    history, make_user, settings, zone
):
    settings.TIME_ZONE = zone
    staff = make_user(is_staff=True)
    today = timezone.localdate()
    hours = Totals(RunTotal.objects.filter(user_id=EVERYONE_HOURS))
    for back, ahead in WINDOWS:
        since = today - timedelta(days=back)
        until = None if ahead is None else today - timedelta(days=ahead)
        for group_by in ("day", "agent", "model"):
            new = usage_totals(
                totals=visible_totals(user=staff, group_by=group_by),
                group_by=group_by,
                since=since,
                until=until,
            )
            old = usage_totals(
                totals=hours, group_by=group_by, since=since, until=until
            )
            assert new == old, (zone, back, ahead, group_by)
    month = usage_totals(
        totals=visible_totals(user=staff, group_by="day"),
        group_by="day",
        since=today - timedelta(days=30),
    )
    assert 29 <= len(month) <= 32  # a run nearly every day


def test_a_month_by_day_reads_a_row_a_day_not_an_hour(alice, make_user):
    session = Session.objects.create(
        app_name="weather", user_id=str(alice.pk), adk_id="s", owner=alice
    )
    now = timezone.now()
    for hours_ago in range(0, 30 * 24, 1):  # a run every hour for a month
        run = Run.objects.create(session=session, user=alice, status="succeeded")
        Run.objects.filter(pk=run.pk).update(
            created_at=now - timedelta(hours=hours_ago)
        )
    count_ended_runs(Run.objects.all())
    staff = make_user(is_staff=True)

    with CaptureQueriesContext(connection) as queries:
        days = usage_totals(
            totals=visible_totals(user=staff, group_by="day"),
            group_by="day",
            since=timezone.localdate() - timedelta(days=30),
        )

    assert sum(day["runs"] for day in days) == 30 * 24
    [totals] = queries.captured_queries
    with connection.cursor() as cursor:
        cursor.execute(totals["sql"])
        # Whole days' rows, today's six hours and hours: not 720 hours.
        assert len(cursor.fetchall()) <= 31 + 3 + 6
