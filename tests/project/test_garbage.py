"""A server process sets its garbage collector up once its code is loaded
(project/garbage.py): larger thresholds, and start-up's objects frozen out of
every collection. Each case is a fresh Python process, started as a server starts,
since both settings are process-wide.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What a process reports of its collector, as JSON, after `setup` has run.
REPORT = """
import gc, json
{setup}
print(json.dumps({{
    "thresholds": gc.get_threshold(),
    "frozen": gc.get_freeze_count(),
    "tracked": len(gc.get_objects()),
}}))
"""
DAPHNE = "import project.asgi"  # what `daphne project.asgi:application` imports
# What a Celery worker does once it has imported its tasks (celery/worker/worker.py).
WORKER = """
from celery.signals import worker_init
from project.celery import app
app.loader.import_default_modules()
worker_init.send(sender=None)
"""
PYTHONS_OWN = [700, 10, 10]


def python(tmp_path: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    """`python -c code` in a fresh process with the project's settings."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "project.settings",
            "TOOLCRIB_DATA_DIR": str(tmp_path),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def collector_of(tmp_path: Path, setup: str, **env: str) -> dict:
    done = python(tmp_path, REPORT.format(setup=setup), **env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("setup", [DAPHNE, WORKER], ids=["daphne", "celery worker"])
def test_a_server_process_freezes_its_start_up_and_collects_less_often(tmp_path, setup):
    collector = collector_of(tmp_path, setup)

    assert collector["thresholds"] == [20000, 20, 10]
    # What start-up loaded is most of the heap, and no collection walks it again.
    assert collector["frozen"] > collector["tracked"]


def test_an_operator_may_keep_pythons_own_collector(tmp_path):
    collector = collector_of(
        tmp_path, DAPHNE, TOOLCRIB_GC_THRESHOLDS="python", TOOLCRIB_GC_FREEZE="off"
    )

    assert collector["thresholds"] == PYTHONS_OWN
    assert collector["frozen"] == 0


def test_thresholds_of_an_operators_own_are_used(tmp_path):
    collector = collector_of(tmp_path, DAPHNE, TOOLCRIB_GC_THRESHOLDS="5000")

    assert collector["thresholds"] == [5000, 10, 10]


@pytest.mark.parametrize("value", ["lots", "1,2,3,4", "-5", "100,,2"])
def test_thresholds_that_are_not_whole_numbers_stop_the_server_at_start(
    tmp_path, value
):
    done = python(tmp_path, DAPHNE, TOOLCRIB_GC_THRESHOLDS=value)

    assert done.returncode != 0
    assert "TOOLCRIB_GC_THRESHOLDS must be one to three whole numbers" in done.stderr
