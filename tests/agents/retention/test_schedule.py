"""When the retention job runs: Celery beat's schedule with a broker, a thread of
the server without one, never when its period is 0; its settings refuse days no
date can hold."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.retention import schedule
from agents.retention.tasks import APPLY_RETENTION, apply_retention_task
from tests.agents.retention.helpers import exists, session_of

ROOT = Path(__file__).resolve().parents[3]


def settings_in_a_new_process(script: str, **variables: str):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "project.settings", **variables}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            f"import django, json; django.setup(); from django.conf import settings; {script}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_beat_sends_the_job_every_period_with_a_broker():
    done = settings_in_a_new_process(
        "print(json.dumps(settings.CELERY_BEAT_SCHEDULE))",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/1",
        REDIS_URL="redis://127.0.0.1:6379/0",
        TOOLCRIB_RETENTION_SECONDS="600",
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "retention": {"task": APPLY_RETENTION, "schedule": 600.0}
    }


@pytest.mark.parametrize("days", ["-1", "36501"])
def test_days_no_date_can_hold_are_refused_at_start(days):
    done = settings_in_a_new_process("", TOOLCRIB_RETENTION_DAYS=days)

    assert done.returncode != 0
    assert "TOOLCRIB_RETENTION_DAYS must be 0 (keep forever) to 36500" in done.stderr


def test_a_worker_knows_the_task_beat_sends():
    done = settings_in_a_new_process(
        "from project.celery import app; app.loader.import_default_modules();"
        f" print({APPLY_RETENTION!r} in app.tasks)"
    )

    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.django_db(transaction=True)
def test_the_task_runs_the_job(settings, alice, demo_agents):
    settings.TOOLCRIB_RETENTION_DAYS = 30
    old = session_of(alice, demo_agents["weather_sentiment"], days_idle=40, events=2)

    removed = apply_retention_task.apply().get()

    assert not exists(old)
    assert removed == 1 + 2 + 1 + 1  # the session, its events, its run, its span


def test_no_thread_runs_it_when_its_period_is_0(settings):
    settings.TOOLCRIB_RETENTION_SECONDS = 0

    schedule.start()

    assert schedule._thread is None
