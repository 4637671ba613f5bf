"""The Overview's aggregates again, on PostgreSQL: its percentiles and buckets are
SQL of their own (window functions, hour truncation), which SQLite and PostgreSQL
must answer alike.

A run of its own, like tests/agents/contracts/test_postgresql.py: pytest in a child
process with DATABASE_URL on the machine's PostgreSQL, in a database named for this
run (pytest-django creates its test database beside it and drops it at the end).
"""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.integration import services

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
RUN_TIMEOUT = 300
pytestmark = pytest.mark.django_db  # the toolsets conftest resets access


def test_the_overview_is_the_same_on_postgresql(tmp_path):
    if connection.vendor == "postgresql":
        pytest.skip("this run is on PostgreSQL already: test_overview.py ran on it")
    try:
        psycopg.connect(
            services.POSTGRES_URL, connect_timeout=services.CONNECT_TIMEOUT
        ).close()
    except psycopg.OperationalError as error:
        services.unavailable(f"PostgreSQL at {services.POSTGRES_URL}", error)
    env = {
        **os.environ,
        "DATABASE_URL": services._with_database(
            services.POSTGRES_URL, services.run_name()
        ),
        "TOOLCRIB_DATA_DIR": str(tmp_path / "data"),
    }
    env.pop("PYTEST_CURRENT_TEST", None)

    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--no-migrations",
            "--create-db",
            str(HERE / "test_overview.py"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )

    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
