"""Finding sessions again, on PostgreSQL: its full-text search, its GIN index and
migration 0013, where the suite's own database is SQLite.

A run of its own, as tests/agents/contracts/test_postgresql.py does it: pytest in
a child process with DATABASE_URL pointed at the machine's PostgreSQL, with the
migrations (they make the index). Skipped when PostgreSQL does not answer; on CI
(TOOLCRIB_REQUIRE_SERVICES=1) that is an error.
"""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.agents.contracts.test_postgresql import failures
from tests.integration import services

TESTS = Path(__file__).parents[1]
ROOT = TESTS.parent
FILES = [
    TESTS / "agents" / "api" / "test_find_sessions.py",
    TESTS / "agents" / "test_search.py",
    TESTS / "agents" / "test_session_titles_migration.py",
    TESTS / "security" / "test_session_ownership.py",
]
RUN_TIMEOUT = 900


def test_finding_sessions_holds_on_postgresql(tmp_path):
    if connection.vendor == "postgresql":
        pytest.skip("this run is on PostgreSQL already: the files ran on it")
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
            *map(str, FILES),
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
    assert " skipped" not in summary[0], summary  # the index test ran, on PostgreSQL
