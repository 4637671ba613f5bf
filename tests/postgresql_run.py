"""Test files again on PostgreSQL, where the suite's own database is SQLite.

`pytest_on_postgresql` runs pytest in a child process with DATABASE_URL on the
machine's PostgreSQL (tests/integration/services.py's POSTGRES_URL), in a database
named for this run: pytest-django creates its test database beside it and drops it
at the end, so two runs on one machine never meet. Skipped when PostgreSQL does not
answer; on CI (TOOLCRIB_REQUIRE_SERVICES=1) that is an error. A failure names the
child's failing tests with their first line.
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

ROOT = Path(__file__).parents[1]


def failures(report: Path) -> list[str]:
    """The tests a JUnit report names as failed or in error, with their message."""
    found = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        for problem in [*case.iter("failure"), *case.iter("error")]:
            message = (problem.get("message") or "").splitlines()[:1]
            found.append(f"{case.get('name')}: {' '.join(message)}")
    return found


def pytest_on_postgresql(tmp_path: Path, *args: str, timeout: int = 900) -> str:
    """Run `pytest -q <args>` on PostgreSQL; assert it passed; its summary line."""
    if connection.vendor == "postgresql":
        pytest.skip("this run is on PostgreSQL already: the files ran on it")
    # A test file moved and its old path left here would run nothing, and say
    # only "no tests ran": name it.
    files = [arg for arg in args if arg.endswith(".py") and not arg.startswith("-")]
    missing = [path for path in files if not Path(path).exists()]
    assert missing == [], f"no such test file: {missing}"
    try:
        psycopg.connect(
            services.POSTGRES_URL, connect_timeout=services.CONNECT_TIMEOUT
        ).close()
    except psycopg.OperationalError as error:
        services.unavailable(f"PostgreSQL at {services.POSTGRES_URL}", error)
    report = tmp_path / "report.xml"
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
            "--create-db",
            f"--junitxml={report}",
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )

    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, "\n".join(
        [*failures(report), summary]
        if report.exists()
        else [run.stdout[-3000:], run.stderr[-2000:]]
    )
    assert " passed" in summary, summary
    return summary
