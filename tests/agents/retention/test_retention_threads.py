"""agents.retention under a worker's threads: runs of the job at once (a beat's, a
server thread's, a person's command) remove each row once, between them, and
none fails; the lease lets one work at a time."""

import pytest

from agents.models import Event, Session
from agents.retention.jobs import apply_retention
from tests.agents.retention.helpers import session_of
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)

SESSIONS = 12


def test_runs_at_once_remove_every_old_session_once(settings, alice, demo_agents):
    settings.TOOLCRIB_RETENTION_DAYS = 30
    settings.TOOLCRIB_RETENTION_BATCH = 25  # two sessions a batch: many batches
    weather = demo_agents["weather_sentiment"]
    old = [session_of(alice, weather, days_idle=40, events=5) for _ in range(SESSIONS)]
    recent = session_of(alice, weather, days_idle=1)

    reports = at_once(lambda _: apply_retention(), threads=4)

    removed = sum(report.total("sessions") for report in reports)
    assert removed == SESSIONS
    assert sum(report.total("events") for report in reports) == SESSIONS * 5
    assert not Session.objects.filter(pk__in=[s.pk for s in old]).exists()
    assert list(Session.objects.values_list("pk", flat=True)) == [recent.pk]
    assert Event.objects.filter(session=recent).count() == 3
