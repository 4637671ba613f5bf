"""Turns started at once from many threads, as Daphne runs sync views on a thread
pool: each request waits for its own turn (agents.turns.executors keeps a future
per run), which ends as it would alone.

This drives a turn's process-global state together (the turn loop, its ORM
threads, prepared statements, parsed events, access decisions) with real turns of
a demo agent. tests/project/test_threads_postgresql.py runs this file on
PostgreSQL too.
"""

import sys

import pytest
from django.db import close_old_connections, connection

from project.patches.prepared import Prepared, PreparedUpdate
from project.patches.rows import Insert
from tests.threads import at_once

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 4  # a worker's --concurrency=4; each a real turn, so few


@pytest.fixture
def first_turns_of_a_process():
    """Every statement compiled, and every value kept by a function's cache, in the
    apps' modules forgotten: the turns below are the first of a process."""
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in {"project", "agents", "toolsets"}:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Prepared):
                value._select.clear()
            elif isinstance(value, PreparedUpdate):
                value._compiled.clear()
            elif callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
    Insert._statement.cache_clear()


def in_thread(call):
    """`call` on a request's thread, whose connection is closed as it ends."""

    def run(index: int):
        try:
            return call(index)
        finally:
            close_old_connections()
            connection.close()

    return run


def test_messages_sent_at_once_each_wait_for_their_own_turn(
    make_user, demo_agents, api_for, start_session, first_turns_of_a_process
):
    users = [make_user(f"user{n}") for n in range(THREADS)]
    clients = [api_for(user) for user in users]
    sessions = [start_session(user, "weather_sentiment") for user in users]
    cities = ["london", "paris", "oslo", "rome"]

    def send(index: int) -> dict:
        response = clients[index].post(
            f"/api/sessions/{sessions[index]}/messages/?wait=1",
            {"text": f"weather in {cities[index]}?"},
            format="json",
        )
        assert response.status_code == 200, response.content
        return response.json()

    runs = at_once(in_thread(send), threads=THREADS)

    assert [run["status"] for run in runs] == ["succeeded"] * THREADS
    assert [run["session"] for run in runs] == sessions
    for client, session, city in zip(clients, sessions, cities, strict=True):
        events = client.get(f"/api/sessions/{session}/events/").json()
        answers = [e["event"]["text"] for e in events if e["event"]["kind"] == "text"]
        assert city in answers[-1].lower()  # its own turn's answer
