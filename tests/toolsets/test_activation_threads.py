"""toolsets.activation under a worker's threads: the sessions' choices this
process keeps (by each session's token) are each session's own, however many
turns of several sessions read them at once. tests/project/test_threads_postgresql.py
runs this file on PostgreSQL too."""

import asyncio

import pytest
from django.db import close_old_connections, connection
from google.adk.sessions import Session as AdkSession

from agents.models import Session
from tests.threads import at_once
from toolsets import access, activation

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ["inventory_query", "inventory_admin"]
STEPS = 20  # model steps each thread's turn takes


@pytest.fixture(autouse=True)
def _agents(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        "tests.toolsets.activated.restocker",
    ]


def in_thread(call):
    """`call` on a worker thread, whose connection is closed as the thread ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


def test_turns_of_several_sessions_at_once_each_read_their_sessions_choices(
    catalog, alice, start_session, monkeypatch
):
    monkeypatch.setattr(activation, "_choices", {})  # none read yet
    rows = [Session.objects.get(pk=start_session(alice, "restocker")) for _ in range(2)]
    activation.set_toolsets_active(
        session=rows[0], names=["inventory_admin"], active=True, changed_by=alice
    )
    expected = [set(), {"inventory_admin"}]
    loops = [asyncio.new_event_loop() for _ in range(8)]  # one a thread, made ahead

    async def steps(row: Session) -> list[set[str]]:
        session = AdkSession(id=row.adk_id, app_name=row.app_name, user_id=row.user_id)
        found = []
        for _ in range(STEPS):
            snapshot = await access.asnapshot(keys=[activation.version_key(row)])
            found.append(
                await activation.ainactive_toolsets(
                    session=session, names=NAMES, snapshot=snapshot
                )
            )
        return found

    try:
        seen = at_once(
            in_thread(lambda i: loops[i].run_until_complete(steps(rows[i % 2])))
        )
    finally:
        for loop in loops:
            loop.close()

    assert seen == [[expected[i % 2]] * STEPS for i in range(8)]
