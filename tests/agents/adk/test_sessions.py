"""DjangoSessionService: ADK's session contract, then what only the database adds.

The parity scenarios run against InMemorySessionService too: whatever ADK's reference
service answers, DjangoSessionService must answer the same.
"""

import asyncio
import json
import re
import uuid
from collections.abc import AsyncGenerator, Awaitable
from typing import Any, TypeVar

import pytest
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.db import connection
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event, EventActions
from google.adk.models import BaseLlm, LlmCapabilities, LlmRequest, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService, Session
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools import ToolContext
from google.genai import types

from agents.adk.own_events import record_event
from agents.adk.session_state import session_state
from agents.adk.sessions import DjangoSessionService
from agents.models import AppState, UserState
from agents.models import Event as EventRow
from agents.models import Session as SessionRow

pytestmark = pytest.mark.django_db(transaction=True)

APP = "parity"
T = TypeVar("T")
USAGE = types.GenerateContentResponseUsageMetadata(
    prompt_token_count=10, candidates_token_count=5, total_token_count=15
)


@pytest.fixture(
    params=[InMemorySessionService, DjangoSessionService], ids=["memory", "django"]
)
def service(request) -> BaseSessionService:
    return request.param()


@pytest.fixture
def django_service() -> DjangoSessionService:
    return DjangoSessionService()


@pytest.fixture(autouse=True)
async def _close_orm_thread_connection() -> AsyncGenerator[None, None]:
    """Close the ORM thread's connection, or PostgreSQL cannot drop the test DB."""
    yield
    await sync_to_async(close_connection)()


def close_connection() -> None:
    # Looked up inside the calling thread: connections are per thread.
    connection.close()


def make_event(text: str, *, author: str = "user", **fields: Any) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, invocation_id="inv-1", content=content, **fields)


def delta_event(text: str, delta: dict[str, Any], **fields: Any) -> Event:
    return make_event(text, actions=EventActions(state_delta=delta), **fields)


def texts(session: Session) -> list[str]:
    return [event.content.parts[0].text for event in session.events]


async def get(
    service: BaseSessionService, session_id: str, user_id: str = "alice", **config
):
    return await service.get_session(
        app_name=APP,
        user_id=user_id,
        session_id=session_id,
        config=GetSessionConfig(**config),
    )


async def create(
    service: BaseSessionService, session_id: str, user_id: str = "alice", **kw
):
    return await service.create_session(
        app_name=APP, user_id=user_id, session_id=session_id, **kw
    )


# Parity: InMemorySessionService and DjangoSessionService answer alike.


async def test_create_splits_state_by_scope(service):
    state = {"plain": 1, "app:brand": "Acme", "user:tz": "UTC", "temp:draft": "x"}

    created = await create(service, "s1", state=state)
    bobs = await create(service, "s2", user_id="bob")

    expected = {"plain": 1, "app:brand": "Acme", "user:tz": "UTC"}
    assert (created.id, created.app_name, created.user_id) == ("s1", APP, "alice")
    assert created.state == expected
    assert created.events == []
    assert (await get(service, "s1")).state == expected
    assert bobs.state == {"app:brand": "Acme"}
    assert await service.get_user_state(app_name=APP, user_id="alice") == {"tz": "UTC"}
    assert await service.get_user_state(app_name=APP, user_id="bob") == {}


async def test_app_and_user_state_of_one_key_name_stay_apart(service):
    state = {"app:theme": "dark", "user:theme": "light", "user:lang": "fr"}

    await create(service, "s1", state=state)
    await create(service, "s2", user_id="bob", state={"user:theme": "blue"})

    assert (await get(service, "s1")).state == state
    assert (await get(service, "s2", user_id="bob")).state == {
        "app:theme": "dark",
        "user:theme": "blue",
    }


async def test_create_generates_a_uuid_when_no_id_is_given(service):
    created = await service.create_session(app_name=APP, user_id="alice")

    assert str(uuid.UUID(created.id)) == created.id
    assert (await get(service, created.id)).id == created.id


async def test_duplicate_session_id_raises_already_exists(service):
    await create(service, "s1")

    with pytest.raises(AlreadyExistsError):
        await create(service, "s1")


async def test_unknown_and_foreign_sessions_are_not_found(service):
    await create(service, "s1")

    assert await get(service, "nope") is None
    assert await get(service, "s1", user_id="bob") is None
    assert (
        await service.get_session(app_name="other", user_id="alice", session_id="s1")
        is None
    )


async def test_list_sessions_orders_by_update_merges_state_and_drops_events(service):
    await create(service, "s1", state={"app:brand": "Acme", "user:tz": "UTC"})
    await create(service, "s2", user_id="bob", state={"user:tz": "CET"})
    await create(service, "s3")
    for session_id, user_id, timestamp in [
        ("s1", "alice", 300.0),
        ("s2", "bob", 100.0),
        ("s3", "alice", 200.0),
    ]:
        session = await get(service, session_id, user_id=user_id)
        await service.append_event(session, make_event("hi", timestamp=timestamp))

    everyone = (await service.list_sessions(app_name=APP)).sessions
    alices = (await service.list_sessions(app_name=APP, user_id="alice")).sessions

    assert [s.id for s in everyone] == ["s2", "s3", "s1"]
    assert [s.last_update_time for s in everyone] == [100.0, 200.0, 300.0]
    assert [s.events for s in everyone] == [[], [], []]
    assert [s.state for s in everyone] == [
        {"app:brand": "Acme", "user:tz": "CET"},
        {"app:brand": "Acme", "user:tz": "UTC"},
        {"app:brand": "Acme", "user:tz": "UTC"},
    ]
    assert [s.id for s in alices] == ["s3", "s1"]
    assert (await service.list_sessions(app_name="other")).sessions == []


async def test_delete_session_forgets_it_but_not_shared_state(service):
    await create(service, "s1", state={"user:tz": "UTC"})
    await create(service, "s2")

    await service.delete_session(app_name=APP, user_id="alice", session_id="s1")
    await service.delete_session(app_name=APP, user_id="alice", session_id="nope")
    await service.delete_session(app_name=APP, user_id="bob", session_id="s2")

    assert await get(service, "s1") is None
    assert await get(service, "s2") is not None
    listed = (await service.list_sessions(app_name=APP, user_id="alice")).sessions
    assert [s.id for s in listed] == ["s2"]
    assert await service.get_user_state(app_name=APP, user_id="alice") == {"tz": "UTC"}


async def test_state_deltas_reach_their_scopes(service):
    s1 = await create(service, "s1")
    await create(service, "s2")
    await create(service, "s3", user_id="bob")
    delta = {"plain": 2, "user:u": 1, "app:a": 1, "temp:t": 1}

    appended = await service.append_event(s1, delta_event("hi", delta))

    assert appended.actions.state_delta == {"plain": 2, "user:u": 1, "app:a": 1}
    assert s1.state == {"plain": 2, "user:u": 1, "app:a": 1, "temp:t": 1}
    assert (await get(service, "s1")).state == {"plain": 2, "user:u": 1, "app:a": 1}
    assert (await get(service, "s2")).state == {"user:u": 1, "app:a": 1}
    assert (await get(service, "s3", user_id="bob")).state == {"app:a": 1}
    assert await service.get_user_state(app_name=APP, user_id="alice") == {"u": 1}
    stored = (await get(service, "s1")).events[0]
    assert stored.actions.state_delta == {"plain": 2, "user:u": 1, "app:a": 1}


async def test_later_deltas_overwrite_earlier_values(service):
    s1 = await create(service, "s1", state={"plain": 0, "user:u": 0, "app:a": 0})

    await service.append_event(s1, delta_event("one", {"plain": 1, "user:u": 1}))
    await service.append_event(s1, delta_event("two", {"app:a": None, "user:u": 2}))

    assert (await get(service, "s1")).state == {"plain": 1, "user:u": 2, "app:a": None}


async def test_partial_events_are_not_stored(service):
    session = await create(service, "s1")
    partial = delta_event("draft", {"plain": 1}, partial=True)

    returned = await service.append_event(session, partial)

    assert returned is partial
    assert session.events == []
    assert (await get(service, "s1")).events == []


async def test_appending_to_an_unknown_session_raises(service):
    ghost = Session(id="ghost", app_name=APP, user_id="alice")

    with pytest.raises(SessionNotFoundError):
        await service.append_event(ghost, make_event("hi"))


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, ["e10", "e20", "e30", "e40", "e50"]),
        ({"num_recent_events": 2}, ["e40", "e50"]),
        ({"num_recent_events": 0}, []),
        ({"num_recent_events": 9}, ["e10", "e20", "e30", "e40", "e50"]),
        ({"after_timestamp": 30.0}, ["e30", "e40", "e50"]),
        ({"after_timestamp": 30.0, "num_recent_events": 2}, ["e40", "e50"]),
        ({"after_timestamp": 30.0, "num_recent_events": 4}, ["e30", "e40", "e50"]),
        ({"after_timestamp": 0.0}, ["e10", "e20", "e30", "e40", "e50"]),
        ({"after_timestamp": 99.0}, []),
    ],
)
async def test_get_session_config_filters_events(service, config, expected):
    session = await create(service, "s1")
    for timestamp in [10.0, 20.0, 30.0, 40.0, 50.0]:
        await service.append_event(
            session, make_event(f"e{timestamp:.0f}", timestamp=timestamp)
        )

    assert texts(await get(service, "s1", **config)) == expected


async def test_after_timestamp_keeps_what_follows_the_newest_older_event(service):
    session = await create(service, "s1")
    for timestamp in [10.0, 40.0, 20.0, 50.0]:
        await service.append_event(
            session, make_event(f"e{timestamp:.0f}", timestamp=timestamp)
        )

    assert texts(await get(service, "s1", after_timestamp=30.0)) == ["e50"]
    assert texts(await get(service, "s1", after_timestamp=15.0)) == [
        "e40",
        "e20",
        "e50",
    ]


def conversation() -> list[Event]:
    """A user question, a function call and its response with actions, an escalation."""
    call = types.FunctionCall(id="call-1", name="lookup", args={"q": "invoice"})
    answer = types.FunctionResponse(id="call-1", name="lookup", response={"total": 42})
    handoff = EventActions(
        transfer_to_agent="billing",
        artifact_delta={"report.txt": 1},
        state_delta={"owed": 42},
    )
    return [
        make_event("what do I owe?"),
        Event(
            author="router",
            invocation_id="inv-1",
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            usage_metadata=USAGE,
        ),
        Event(
            author="router",
            invocation_id="inv-1",
            content=types.Content(
                role="user", parts=[types.Part(function_response=answer)]
            ),
            actions=handoff,
        ),
        make_event(
            "You owe 42.", author="billing", actions=EventActions(escalate=True)
        ),
    ]


async def test_calls_responses_and_actions_round_trip(service):
    session = await create(service, "s1")
    sent = conversation()
    for event in sent:
        await service.append_event(session, event)

    stored = (await get(service, "s1")).events

    assert [e.model_dump() for e in stored] == [e.model_dump() for e in sent]
    assert [e.author for e in stored] == ["user", "router", "router", "billing"]
    assert stored[1].get_function_calls() == sent[1].get_function_calls()
    assert stored[2].get_function_responses() == sent[2].get_function_responses()
    assert [e.actions for e in stored] == [e.actions for e in sent]
    assert stored[2].actions.transfer_to_agent == "billing"
    assert stored[3].actions.escalate is True


# A real Runner turn, compared across both services.


class ScriptedLlm(BaseLlm):
    """Calls `remember` first; once the tool has answered, replies with text."""

    model: str = "scripted"

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=False)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        latest = llm_request.contents[-1].parts or []
        answered = any(part.function_response for part in latest)
        call = types.FunctionCall(name="remember", args={"fact": "sky is blue"})
        part = (
            types.Part(text="Remembered.")
            if answered
            else types.Part(function_call=call)
        )
        yield LlmResponse(
            content=types.Content(role="model", parts=[part]), usage_metadata=USAGE
        )


def remember(fact: str, tool_context: ToolContext) -> dict[str, str]:
    """Remember a fact in every state scope.

    Args:
        fact: The fact to remember.
    """
    tool_context.state["last_fact"] = fact
    tool_context.state["user:facts"] = tool_context.state.get("user:facts", 0) + 1
    tool_context.state["app:facts"] = tool_context.state.get("app:facts", 0) + 1
    tool_context.state["temp:scratch"] = fact
    return {"stored": fact}


async def run_turn(service: BaseSessionService) -> tuple[list[Event], Session]:
    """Run one turn on a fresh session; return the events yielded and the session."""
    state = {"plain": 0, "app:facts": 5, "user:tz": "UTC"}
    await create(service, "turn", state=state)
    agent = LlmAgent(name="keeper", model=ScriptedLlm(), tools=[remember])
    runner = Runner(app=App(name=APP, root_agent=agent), session_service=service)
    message = types.Content(role="user", parts=[types.Part(text="remember the sky")])
    yielded = [
        event
        async for event in runner.run_async(
            user_id="alice", session_id="turn", new_message=message
        )
    ]
    await runner.close()
    return yielded, await get(service, "turn")


def shape(session: Session) -> dict[str, Any]:
    """The session with ids and timestamps replaced by placeholders."""
    events = [
        e.model_dump(mode="json", exclude={"id", "timestamp", "invocation_id"})
        for e in session.events
    ]
    text = json.dumps({"state": session.state, "events": events}, sort_keys=True)
    call_ids = list(dict.fromkeys(re.findall(r"adk-[0-9a-f-]{36}", text)))
    for index, call_id in enumerate(call_ids):
        text = text.replace(call_id, f"call-{index}")
    return json.loads(text)


async def test_runner_turn_is_stored_alike():
    memory_events, memory = await run_turn(InMemorySessionService())
    django_events, stored = await run_turn(DjangoSessionService())

    assert shape(stored) == shape(memory)
    assert [e.author for e in stored.events] == ["user", "keeper", "keeper", "keeper"]
    assert stored.state == {
        "plain": 0,
        "last_fact": "sky is blue",
        "app:facts": 6,
        "user:tz": "UTC",
        "user:facts": 1,
    }
    assert [e.model_dump() for e in django_events] == [
        e.model_dump() for e in stored.events[1:]
    ]
    assert len(memory_events) == len(django_events) == 3
    assert stored.events[2].actions.state_delta == {
        "last_fact": "sky is blue",
        "user:facts": 1,
        "app:facts": 6,
    }


# Only the database: seqs, locking, staleness, Toolcrib's own records.


async def stored_rows(session_id: str) -> list[EventRow]:
    return [row async for row in EventRow.objects.filter(session_id=session_id)]


async def test_runner_turn_events_have_seqs_in_order(django_service):
    yielded, stored = await run_turn(django_service)

    rows = await stored_rows("turn")
    assert [row.seq for row in rows] == [1, 2, 3, 4]
    assert [row.event_id for row in rows] == [e.id for e in stored.events]
    assert [django_service.seq_of(e.id) for e in yielded] == [2, 3, 4]
    assert [row.kind for row in rows] == [
        "user_message",
        "function_call",
        "function_response",
        "text",
    ]


async def test_seqs_count_one_to_n_and_the_marker_follows_the_revision(django_service):
    session = await create(django_service, "s1")
    sent = conversation()
    for event in sent:
        await django_service.append_event(session, event)

    rows = await stored_rows("s1")
    row = await SessionRow.objects.aget(pk="s1")
    assert [r.seq for r in rows] == [1, 2, 3, 4]
    assert [r.event_id for r in rows] == [e.id for e in sent]
    assert [r.data for r in rows] == [
        e.model_dump(mode="json", exclude_none=True) for e in sent
    ]
    assert [r.is_adk for r in rows] == [True] * 4
    assert [django_service.seq_of(e.id) for e in sent] == [1, 2, 3, 4]
    assert django_service.seq_of("unknown") is None
    assert (row.last_seq, row.revision) == (4, 4)
    assert row.last_update_time == sent[-1].timestamp
    assert session._storage_update_marker == "4"
    assert (await get(django_service, "s1"))._storage_update_marker == "4"


async def test_a_stale_copy_cannot_append_but_retries_are_idempotent(django_service):
    created = await create(django_service, "s1")
    copy_a = await get(django_service, "s1")
    copy_b = await get(django_service, "s1")
    first = make_event("first")

    await django_service.append_event(copy_a, first)

    assert created._storage_update_marker == "0"
    with pytest.raises(StaleSessionError):
        await django_service.append_event(copy_b, make_event("second"))
    assert await django_service.append_event(copy_b, first) is first
    assert await django_service.append_event(copy_a, first) is first
    assert texts(copy_a) == ["first"]
    assert texts(await get(django_service, "s1")) == ["first"]
    fresh = await get(django_service, "s1")
    await django_service.append_event(fresh, make_event("second"))
    assert [row.seq for row in await stored_rows("s1")] == [1, 2]


async def in_own_thread(work: Awaitable[T]) -> T:
    """Await `work` with its own ORM thread, hence its own database connection."""
    async with ThreadSensitiveContext():
        try:
            return await work
        finally:
            await sync_to_async(close_connection)()


async def append_many(session_id: str, tag: str, count: int) -> list[int | None]:
    service = DjangoSessionService()
    session = await get(service, session_id)
    events = [make_event(f"{tag}{i}") for i in range(count)]
    for event in events:
        # Both writers share one session on purpose: this test is about seqs, and
        # staleness has its own test.
        session._storage_update_marker = None
        await service.append_event(session, event)
    return [service.seq_of(event.id) for event in events]


async def record_many(session_id: str, count: int) -> list[int]:
    rows = [
        await record_event(
            session_id=session_id,
            kind="run_started",
            author="system",
            invocation_id="inv-1",
            data={},
        )
        for _ in range(count)
    ]
    return [row.seq for row in rows]


async def test_concurrent_writers_never_share_a_seq(django_service):
    await create(django_service, "s1")

    a, b, records = await asyncio.gather(
        in_own_thread(append_many("s1", "a", 20)),
        in_own_thread(append_many("s1", "b", 20)),
        in_own_thread(record_many("s1", 20)),
    )

    assert sorted(a + b + records) == list(range(1, 61))
    assert [row.seq for row in await stored_rows("s1")] == list(range(1, 61))
    row = await SessionRow.objects.aget(pk="s1")
    assert (row.last_seq, row.revision) == (60, 40)
    assert len((await get(django_service, "s1")).events) == 40


async def write_user_key(session_id: str, key: str, count: int) -> None:
    service = DjangoSessionService()
    session = await get(service, session_id)
    for value in range(count):
        await service.append_event(session, delta_event(key, {f"user:{key}": value}))


async def test_sessions_of_one_user_keep_each_others_user_keys(django_service):
    await create(django_service, "s1", state={"user:seen": True})
    await create(django_service, "s2")

    await asyncio.gather(
        in_own_thread(write_user_key("s1", "a", 10)),
        in_own_thread(write_user_key("s2", "b", 10)),
    )

    user_state = await django_service.get_user_state(app_name=APP, user_id="alice")
    assert user_state == {"seen": True, "a": 9, "b": 9}
    assert (await get(django_service, "s1")).state == {
        "user:seen": True,
        "user:a": 9,
        "user:b": 9,
    }


async def test_recorded_events_share_seqs_but_not_the_revision(django_service):
    session = await create(django_service, "s1")
    await django_service.append_event(session, make_event("a"))
    started = await record_event(
        session_id="s1",
        kind="run_started",
        author="system",
        invocation_id="inv-1",
        data={"run": {"id": "r1"}},
        timestamp=123.0,
    )
    await django_service.append_event(session, make_event("b"))
    finished = await record_event(
        session_id="s1",
        kind="run_finished",
        author="system",
        invocation_id="inv-1",
        data={},
    )

    rows = await stored_rows("s1")
    assert [(r.seq, r.is_adk, r.kind) for r in rows] == [
        (1, True, "user_message"),
        (2, False, "run_started"),
        (3, True, "user_message"),
        (4, False, "run_finished"),
    ]
    assert (started.seq, started.data, started.timestamp) == (
        2,
        {"run": {"id": "r1"}},
        123.0,
    )
    assert str(uuid.UUID(started.event_id)) == started.event_id
    assert finished.seq == 4
    assert texts(await get(django_service, "s1")) == ["a", "b"]
    assert texts(await get(django_service, "s1", num_recent_events=2)) == ["a", "b"]
    assert session._storage_update_marker == "2"


async def test_recording_for_an_unknown_session_raises():
    with pytest.raises(SessionNotFoundError):
        await record_event(
            session_id="ghost", kind="error", author="system", invocation_id="", data={}
        )


async def dump_tables() -> str:
    rows = [
        [row async for row in model.objects.values()]
        for model in (SessionRow, EventRow, AppState, UserState)
    ]
    return json.dumps(rows, default=str)


async def test_temp_keys_never_reach_the_database(django_service):
    session = await create(django_service, "s1", state={"temp:a": "secret-1", "k": 1})
    delta = {"temp:b": "secret-2", "user:u": 1, "app:x": 1}

    await django_service.append_event(session, delta_event("hi", delta))

    tables = await dump_tables()
    assert "temp:" not in tables
    assert "secret-" not in tables
    assert '"user:u"' in tables
    assert session.state["temp:b"] == "secret-2"


async def test_session_state_lists_scopes_without_prefixes(django_service):
    state = {"plain": 1, "app:brand": "Acme", "user:tz": "UTC", "temp:t": 1}
    await create(django_service, "s1", state=state)
    row = await SessionRow.objects.aget(pk="s1")

    assert await sync_to_async(session_state)(session=row) == {
        "session": {"plain": 1},
        "user": {"tz": "UTC"},
        "app": {"brand": "Acme"},
    }
