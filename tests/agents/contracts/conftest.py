"""Contract tests: Toolcrib's Django services owe what ADK's own services owe.

Each test states a behaviour ADK's own service test suites check (sessions,
artifacts, memory, credentials), written here from those suites, and runs against
ADK's reference service (`adk`, the in-memory one, which proves the test states
ADK's behaviour) and the Django service (`django`). The Django services run on
the configured database: SQLite in a plain run, and PostgreSQL in the run
test_postgresql.py starts (DATABASE_URL pointed at the machine's PostgreSQL).

A difference that is a documented choice (docs/architecture.md, "Where the Django
services differ from ADK's") is listed in DIVERGENCES with its reason; its test is
then xfail(strict=True) for the Django service only, so fixing the difference
fails the test until the entry goes.
"""

from collections.abc import AsyncIterator, Mapping

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

BACKENDS = ["adk", "django"]

DIVERGENCES: Mapping[str, str] = {}


def prepare(request: pytest.FixtureRequest, backend: str) -> None:
    """Give the Django service its database, and xfail (strict) its documented
    differences; ADK's in-memory service needs neither."""
    if backend != "django":
        return
    # The services reach the ORM from another thread (sync_to_async): only a
    # transactional test database lets it see and keep what a test wrote.
    # pytest-django reads the mark, not the fixture's name, once it is dynamic.
    request.node.add_marker(pytest.mark.django_db(transaction=True))
    request.getfixturevalue("transactional_db")
    reason = DIVERGENCES.get(request.node.originalname)
    if reason is not None:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.fixture(autouse=True)
async def _close_orm_thread_connection() -> AsyncIterator[None]:
    """Close the ORM thread's connection, or PostgreSQL cannot drop the test DB."""
    yield
    await sync_to_async(_close_connection)()


def _close_connection() -> None:
    # Looked up inside the calling thread: connections are per thread.
    connection.close()
