"""The SQL a turn and a replay cost today, pinned so a change to the hot path shows.

A turn runs off the request's thread (agents/turns/executors.py: the inline executor's
event loop, each turn with an ORM thread of its own), where
`django_assert_num_queries` cannot see: it reads one thread's connection. The
`every_query` fixture counts at Django's cursor instead, on every thread, and
passes each query through unchanged. The request thread's queries and the turn's
are pinned apart, so a change says which side it is on. A sweep on a timer
(timers.later: an approval's expiry, say, set by an earlier test) is no part of
what is measured, and is left out.

The counts are SQLite's (the suite's database), where `BEGIN IMMEDIATE` is a query
of its own, and PostgreSQL's (test_event_writes_postgresql.py), where an event is
stored in one statement.
"""

import threading
from collections.abc import Iterator, Sequence

import pytest
from asgiref.sync import SyncToAsync
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.db.backends.utils import CursorWrapper

from project.asgi import application
from tests.agents.test_consumers import auth
from toolsets import access
from toolsets.catalog import sync_catalog

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor not in ("sqlite", "postgresql"),
        reason="the counts are pinned for SQLite and PostgreSQL",
    ),
]

TIMEOUT = 10
AGENT = "weather_sentiment"
QUESTION = "weather in london?"  # one get_weather_report call, then an answer
EVENTS_OF_A_TURN = 6  # run_started … run_finished, as tests/agents/api/test_turns.py
REQUEST_THREAD = "MainThread"
TURN_THREAD = "toolcrib-turns"  # the process's own turn loop: no socket bound one

# A turn, read in order, is the request's 9 and the turn's 39:
# - request: the token (2), the session, BEGIN IMMEDIATE, the user, the session
#   again (one UPDATE that locks it and, on the first message, names it: no query
#   of its own for the title), the session's and the user's unfinished runs
#   counted in one query, INSERT the Run; after the wait, the Run. The search
#   index costs none either: SQLite triggers keep it.
# - turn: the Run, then claim it at the head of its session's queue (1: one
#   conditional UPDATE); record run_started (3: BEGIN, one UPDATE ... RETURNING
#   that takes the seq, INSERT); load the agent, the session, its events and its
#   app's and user's state (4: both states in one UNION ALL); the budgets, once a
#   turn, handed to the budget plugin (1: a user with no budget costs nothing more
#   per model call); model grants' version, once a model step (2: ModelGrantPlugin
#   asks agents.model_grants, which keeps the grants while the stamp is unchanged,
#   and reads a user's groups only when a group grant exists); store each of ADK's 4
#   events (3 each: BEGIN, one UPDATE ... RETURNING that checks the session is
#   fresh and takes the seq and revision, INSERT); the Run's invocation id (1: the
#   token counts are written with the Run's end when no budget applies); access's
#   versions, once a model step (2: toolsets.access keeps them in the database, so
#   no lost doorbell or cache leaves a decision stale), the catalog and the user's
#   grants (2) and the session's toolset choices (1), read again only when their
#   versions say something changed; the audit row and its count in the Overview's
#   totals, in one transaction (3: BEGIN IMMEDIATE, the INSERT, whose session, Run
#   and tool come from the turn's Run and the catalog snapshot access keeps, and
#   the totals' INSERT ... ON CONFLICT DO UPDATE: toolsets.call_totals); the end,
#   in one transaction (BEGIN IMMEDIATE: 1): the turn's trace spans, one INSERT
#   for all (1, none with TOOLCRIB_TRACES off: project.patches.rows), finish the Run (1),
#   add it to the usage totals (1: agents.usage) and record run_finished (2: the
#   seq's UPDATE, INSERT).
#   The session's events
#   are one query; on a later turn, one more for those not parsed yet in this
#   process (agents.adk.parsed_events).
# On PostgreSQL (test_event_writes_postgresql.py runs this file there) the request
# has no BEGIN IMMEDIATE (nor the audit row's), and each event is one statement: the UPDATE that takes
# its seq and its INSERT together (agents.adk.event_rows: outside any transaction,
# or Toolcrib's own inside the turn end's), so the turn's 6 events cost 6
# statements instead of 18.
# The turn's hops to its ORM thread, each a wake-up of that thread and of the turn's
# loop (about 0.17 ms of CPU on a busy 2-core server, bench/README.md): the Run
# claimed and its run_started stored (1); the agent tree, the budgets and the
# session read ahead for ADK's Runner (1); each of ADK's 4 events (4; the Run's
# invocation id is stored in the first one's, DjangoSessionService's on_stored);
# model grants: each model step's version (2); access: each model step's versions
# (2; the first step's, cold here, with the catalog and the user's grants), the
# session's toolset choices (1; none once warm); the audit row (1); the end, with
# its spans and run_finished, in one transaction (1).
TURN_HOPS = 13
TURN_QUERIES = {
    "sqlite": {"request": 9, "turn": 39},
    "postgresql": {"request": 8, "turn": 26},
}[connection.vendor]
REST_REPLAY_QUERIES = 4  # the token (2), the session, its events after seq
REST_PAGE_QUERIES = 4  # the token (2), the session, its events before seq (?before=)
SOCKET_BACKLOG_QUERIES = 4  # the token (2), the session, its events after seq


@pytest.fixture
def every_query(monkeypatch) -> list[tuple[str, str]]:
    """Each statement sent from now on, on any thread but a timer's: (thread, sql)."""
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()
    plain = CursorWrapper._execute_with_wrappers

    def counted(self, sql, params, many, executor):
        thread = threading.current_thread()
        if not isinstance(thread, threading.Timer):
            with lock:
                seen.append((thread.name, sql))
        return plain(self, sql, params, many, executor)

    monkeypatch.setattr(CursorWrapper, "_execute_with_wrappers", counted)
    return seen


@pytest.fixture
def weather_session(demo_agents, alice, start_session) -> Iterator[str]:
    """A session of the demo weather agent, its tools catalogued, no access cached."""
    sync_catalog()
    access.invalidate()
    yield start_session(alice, AGENT)
    access.invalidate()


def listing(queries: Sequence[tuple[str, str]]) -> str:
    return "\n".join(
        f"{n:>3} {thread}: {sql}" for n, (thread, sql) in enumerate(queries)
    )


def by_side(queries: Sequence[tuple[str, str]]) -> dict[str, int]:
    request = sum(1 for thread, _ in queries if thread == REQUEST_THREAD)
    return {"request": request, "turn": len(queries) - request}


@pytest.fixture
def turn_hops(monkeypatch) -> list[str]:
    """Each thread-sensitive hop the turn's loop makes to its ORM thread, by name."""
    seen: list[str] = []
    plain = SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        if self._thread_sensitive and threading.current_thread().name == TURN_THREAD:
            seen.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await plain(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    return seen


def test_a_turn_with_one_tool_call_makes_its_pinned_thread_hops(
    alice, api_for, weather_session, turn_hops
):
    response = api_for(alice).post(
        f"/api/sessions/{weather_session}/messages/?wait=1",
        {"text": QUESTION},
        format="json",
    )

    assert response.json()["status"] == "succeeded", response.content
    assert len(turn_hops) == TURN_HOPS, "\n".join(turn_hops)


def test_a_turn_with_one_tool_call_costs_its_pinned_queries(
    alice, api_for, weather_session, every_query
):
    client = api_for(alice)
    client.get("/api/sessions/")  # the token's first use is not the turn's cost
    every_query.clear()

    response = client.post(
        f"/api/sessions/{weather_session}/messages/?wait=1",
        {"text": QUESTION},
        format="json",
    )

    assert response.json()["status"] == "succeeded", response.content
    assert by_side(every_query) == TURN_QUERIES, listing(every_query)


@pytest.mark.parametrize("after", [0, 3], ids=["the whole turn", "its last half"])
def test_a_rest_replay_costs_the_same_queries_however_many_events(
    alice, api_for, say, weather_session, django_assert_num_queries, after
):
    say(alice, weather_session, QUESTION)
    client = api_for(alice)
    client.get("/api/sessions/")

    with django_assert_num_queries(REST_REPLAY_QUERIES):
        response = client.get(f"/api/sessions/{weather_session}/events/?after={after}")

    assert [frame["seq"] for frame in response.json()] == list(
        range(after + 1, EVENTS_OF_A_TURN + 1)
    )


@pytest.mark.parametrize(
    "query", ["before=end&limit=2", "before=5&limit=2", "before=end"]
)
def test_a_page_back_costs_the_same_queries_however_many_events(
    alice, api_for, say, weather_session, django_assert_num_queries, query
):
    say(alice, weather_session, QUESTION)
    client = api_for(alice)
    client.get("/api/sessions/")

    with django_assert_num_queries(REST_PAGE_QUERIES):
        response = client.get(f"/api/sessions/{weather_session}/events/?{query}")

    assert response.status_code == 200
    assert response.json()[-1]["seq"] in (4, EVENTS_OF_A_TURN)


@pytest.mark.parametrize("after", [0, 3], ids=["the whole turn", "its last half"])
async def test_a_socket_backlog_costs_the_same_queries_however_many_events(
    alice, say, weather_session, every_query, after
):
    await sync(say)(alice, weather_session, QUESTION)
    headers = await sync(auth)(alice)
    every_query.clear()

    socket = WebsocketCommunicator(
        application, f"/ws/sessions/{weather_session}/?after={after}", headers
    )
    connected, _ = await socket.connect(timeout=TIMEOUT)
    replayed = [
        (await socket.receive_json_from(timeout=TIMEOUT))["seq"]
        for _ in range(after, EVENTS_OF_A_TURN)
    ]
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()

    assert connected
    assert replayed == list(range(after + 1, EVENTS_OF_A_TURN + 1))
    assert len(every_query) == SOCKET_BACKLOG_QUERIES, listing(every_query)
