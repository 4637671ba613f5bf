"""agents.retention under a worker's threads: runs of the job at once (a beat's, a
server thread's, a person's command) remove each row once, between them, and
none fails; the lease lets one work at a time."""

import threading
import time

import pytest
from django.db import transaction

from agents.models import Event, Run, Session
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


def test_a_turn_started_while_the_job_waits_for_its_session_keeps_it(
    settings, alice, demo_agents
):
    """A turn's start locks the session and queues a run; the job, waiting on that
    lock, judges the session after the start committed: in use, kept."""
    settings.TOOLCRIB_RETENTION_DAYS = 30
    session = session_of(alice, demo_agents["weather_sentiment"], days_idle=40)
    locked, done = threading.Event(), threading.Event()

    def start_a_turn() -> None:
        with transaction.atomic():
            Session.objects.filter(pk=session.pk).update(title="back again")
            Run.objects.create(session=session, user=alice, status=Run.Status.QUEUED)
            locked.set()
            time.sleep(0.5)  # the job is waiting on the session's lock by now
        done.set()

    turn = threading.Thread(target=start_a_turn)
    turn.start()
    assert locked.wait(10)
    report = apply_retention()
    turn.join(10)

    assert done.is_set()
    assert report.total("sessions") == 0
    assert Session.objects.filter(pk=session.pk).exists()
    assert Run.objects.filter(session=session, status=Run.Status.QUEUED).exists()
