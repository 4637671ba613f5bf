"""The contract tests again, with the Django services on PostgreSQL.

A run of its own (pytest in a child process with DATABASE_URL pointed at the
machine's PostgreSQL, tests/integration/services.py's POSTGRES_URL): the suite's
own database is SQLite, and the services read the configured one. pytest-django
creates the child's test database on that server and drops it at the end.
Skipped when PostgreSQL does not answer; on CI (TOOLCRIB_REQUIRE_SERVICES=1) that
is an error.
"""

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.integration import services

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
RUN_TIMEOUT = 900


def failures(report: Path) -> list[str]:
    """The tests a JUnit report names as failed or in error, with their message."""
    found = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        for problem in [*case.iter("failure"), *case.iter("error")]:
            message = (problem.get("message") or "").splitlines()[:1]
            found.append(f"{case.get('name')}: {' '.join(message)}")
    return found


def test_the_contracts_hold_on_postgresql(tmp_path):
    if connection.vendor == "postgresql":
        pytest.skip("this run is on PostgreSQL already: the contracts ran on it")
    try:
        psycopg.connect(
            services.POSTGRES_URL, connect_timeout=services.CONNECT_TIMEOUT
        ).close()
    except psycopg.OperationalError as error:
        services.unavailable(f"PostgreSQL at {services.POSTGRES_URL}", error)
    report = tmp_path / "report.xml"
    env = {
        **os.environ,
        "DATABASE_URL": services.POSTGRES_URL,
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
            f"--junitxml={report}",
            # Tables from the models, as the migrations leave a fresh database
            # (their RunPython steps only move old rows): half the run's time.
            "--no-migrations",
            f"--ignore={__file__}",
            str(HERE),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )

    summary = run.stdout.strip().splitlines()[-1:] if run.stdout else []
    assert run.returncode == 0, "\n".join(
        [*failures(report), *summary] if report.exists() else [run.stdout[-3000:]]
    )
