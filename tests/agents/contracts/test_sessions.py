"""DjangoSessionService against ADK's session contract (tests/unittests/sessions).

The behaviours of ADK's session service suite and its conformance list, on ADK's
InMemorySessionService and on DjangoSessionService; the last tests hold only
for services that persist (ADK's DatabaseSessionService and Django's).
"""

import asyncio
import time
from collections.abc import Iterator

import pytest
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event, EventActions
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from agents.adk.sessions import DjangoSessionService
from tests.agents.contracts.conftest import BACKENDS, prepare

APP = "my_app"


@pytest.fixture(params=BACKENDS)
def service(request) -> Iterator[BaseSessionService]:
    prepare(request, request.param)
    if request.param == "adk":
        yield InMemorySessionService()
    else:
        yield DjangoSessionService()


def delta(values: dict, **fields) -> Event:
    return Event(
        invocation_id="inv",
        author="user",
        actions=EventActions(state_delta=values),
        **fields,
    )


async def test_an_unknown_session_is_none(service):
    assert (
        await service.get_session(app_name=APP, user_id="u", session_id="123") is None
    )


async def test_create_get_and_delete_round_trip(service):
    session = await service.create_session(
        app_name=APP, user_id="u", state={"key": "value"}
    )

    assert (session.app_name, session.user_id, session.state) == (
        APP,
        "u",
        {"key": "value"},
    )
    assert session.id
    assert session.last_update_time <= time.time()
    got = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert got == session
    await service.delete_session(app_name=APP, user_id="u", session_id=session.id)
    assert (
        await service.get_session(app_name=APP, user_id="u", session_id=session.id)
        is None
    )


async def test_list_sessions_of_a_user_with_their_state(service):
    ids = [f"session{i}" for i in range(5)]
    for session_id in ids:
        await service.create_session(
            app_name=APP, user_id="u", session_id=session_id, state={"k": session_id}
        )

    sessions = (await service.list_sessions(app_name=APP, user_id="u")).sessions

    assert {s.id for s in sessions} == set(ids)
    assert all(s.state == {"k": s.id} for s in sessions)
    assert all(s.events == [] for s in sessions)


async def test_list_sessions_of_every_user_when_no_user_is_given(service):
    for user, session_id in [("u1", "a"), ("u1", "b"), ("u2", "c")]:
        await service.create_session(
            app_name=APP, user_id=user, session_id=session_id, state={"k": session_id}
        )

    mine = (await service.list_sessions(app_name=APP, user_id="u1")).sessions
    everyone = (await service.list_sessions(app_name=APP, user_id=None)).sessions

    assert sorted(s.id for s in mine) == ["a", "b"]
    assert {(s.user_id, s.id, s.state["k"]) for s in everyone} == {
        ("u1", "a", "a"),
        ("u1", "b", "b"),
        ("u2", "c", "c"),
    }


async def test_list_sessions_is_ordered_by_last_update_oldest_first(service):
    for session_id in ["first", "second", "third"]:
        await service.create_session(app_name=APP, user_id="u", session_id=session_id)
    second = await service.get_session(app_name=APP, user_id="u", session_id="second")
    await service.append_event(second, Event(author="user", timestamp=time.time() + 60))

    sessions = (await service.list_sessions(app_name=APP, user_id="u")).sessions

    assert [s.id for s in sessions] == ["first", "third", "second"]


async def test_app_state_is_shared_by_every_user_of_the_app(service):
    first = await service.create_session(
        app_name=APP, user_id="u1", session_id="s1", state={"app:k1": "v1"}
    )
    await service.append_event(first, delta({"app:k2": "v2"}))

    other = await service.create_session(app_name=APP, user_id="u2", session_id="s2")
    again = await service.get_session(app_name=APP, user_id="u1", session_id="s1")

    assert other.state == {"app:k1": "v1", "app:k2": "v2"}
    assert (again.state["app:k1"], again.state["app:k2"]) == ("v1", "v2")


async def test_user_state_is_shared_by_the_users_sessions_only(service):
    first = await service.create_session(
        app_name=APP, user_id="u1", session_id="s1", state={"user:k1": "v1"}
    )
    await service.append_event(first, delta({"user:k2": "v2"}))

    mine = await service.create_session(app_name=APP, user_id="u1", session_id="s1b")
    theirs = await service.create_session(app_name=APP, user_id="u2", session_id="s2")

    assert mine.state == {"user:k1": "v1", "user:k2": "v2"}
    assert theirs.state == {}


async def test_session_state_is_the_sessions_own(service):
    first = await service.create_session(
        app_name=APP, user_id="u1", session_id="s1", state={"sk1": "v1"}
    )
    await service.append_event(first, delta({"sk2": "v2"}))

    got = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
    other = await service.create_session(app_name=APP, user_id="u1", session_id="s1b")

    assert (got.state["sk1"], got.state["sk2"]) == ("v1", "v2")
    assert other.state == {}


async def test_temp_state_stays_in_memory_and_out_of_the_event(service):
    session = await service.create_session(app_name=APP, user_id="u", session_id="s1")
    event = delta({"temp:k1": "v1", "sk": "v2"})

    await service.append_event(session, event)
    got = await service.get_session(app_name=APP, user_id="u", session_id="s1")

    assert (session.state["temp:k1"], session.state["sk"]) == ("v1", "v2")
    assert event.actions.state_delta == {"sk": "v2"}
    assert "temp:k1" not in got.state
    assert got.events[0].actions.state_delta == {"sk": "v2"}


async def test_temp_state_is_readable_by_the_next_event_of_the_invocation(service):
    session = await service.create_session(app_name=APP, user_id="u", session_id="seq")

    await service.append_event(session, delta({"temp:output": "from agent one"}))

    assert session.state["temp:output"] == "from agent one"


async def test_a_session_id_belongs_to_its_user(service):
    first = await service.create_session(app_name=APP, user_id="u1", session_id="s1")
    await service.append_event(first, Event(invocation_id="inv", author="user"))
    await service.create_session(app_name=APP, user_id="u2", session_id="s1")

    got = await service.get_session(app_name=APP, user_id="u2", session_id="s1")

    assert (got.user_id, got.events) == ("u2", [])


async def test_creating_an_existing_id_raises_already_exists(service):
    await service.create_session(app_name=APP, user_id="u", session_id="taken")

    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=APP, user_id="u", session_id="taken")


async def test_padded_session_ids_read_and_delete_the_trimmed_session(service):
    created = await service.create_session(
        app_name=APP, user_id="u", session_id=" s1\n"
    )

    got = await service.get_session(app_name=APP, user_id="u", session_id="s1 ")
    await service.delete_session(app_name=APP, user_id="u", session_id="\ts1")

    assert (created.id, got.id) == ("s1", "s1")
    assert await service.get_session(app_name=APP, user_id="u", session_id="s1") is None


async def test_bytes_in_an_event_round_trip(service):
    session = await service.create_session(app_name=APP, user_id="u")
    content = types.Content(
        role="user",
        parts=[types.Part.from_bytes(data=b"image bytes", mime_type="image/png")],
    )
    grounding = types.GroundingMetadata(
        search_entry_point=types.SearchEntryPoint(sdk_blob=b"sdk blob")
    )

    await service.append_event(
        session,
        Event(
            invocation_id="inv",
            author="user",
            content=content,
            grounding_metadata=grounding,
        ),
    )
    got = await service.get_session(app_name=APP, user_id="u", session_id=session.id)

    assert session.events[0].content == content
    assert (got.events[0].content, got.events[0].grounding_metadata) == (
        content,
        grounding,
    )


async def test_every_event_field_round_trips(service):
    session = await service.create_session(app_name=APP, user_id="u")
    event = Event(
        invocation_id="invocation",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="test_text")]),
        turn_complete=True,
        partial=False,
        actions=EventActions(
            artifact_delta={"file": 0}, transfer_to_agent="agent", escalate=True
        ),
        long_running_tool_ids={"tool1"},
        error_code="error_code",
        error_message="error_message",
        interrupted=True,
        grounding_metadata=types.GroundingMetadata(web_search_queries=["query1"]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1, total_token_count=2
        ),
        citation_metadata=types.CitationMetadata(),
        custom_metadata={"custom_key": "custom_value"},
        timestamp=1700000000.123,
        input_transcription=types.Transcription(text="in", finished=True),
        output_transcription=types.Transcription(text="out", finished=True),
    )

    await service.append_event(session, event)

    assert (
        await service.get_session(app_name=APP, user_id="u", session_id=session.id)
        == session
    )


async def test_an_event_moves_last_update_time_to_its_timestamp(service):
    session = await service.create_session(app_name=APP, user_id="u")
    later = session.last_update_time + 10

    await service.append_event(
        session, Event(invocation_id="inv", author="user", timestamp=later)
    )
    got = await service.get_session(app_name=APP, user_id="u", session_id=session.id)

    assert session.last_update_time == pytest.approx(later, abs=1e-6)
    assert got.last_update_time == pytest.approx(later, abs=1e-6)


@pytest.mark.parametrize(
    ("config", "timestamps"),
    [
        ({}, [1, 2, 3, 4, 5]),
        ({"num_recent_events": 0}, []),
        ({"num_recent_events": 3}, [3, 4, 5]),
        ({"after_timestamp": 4.0}, [4, 5]),
        ({"after_timestamp": 50.0}, []),
        ({"after_timestamp": 4.0, "num_recent_events": 3}, [4, 5]),
    ],
)
async def test_get_session_config_picks_the_events(service, config, timestamps):
    session = await service.create_session(app_name=APP, user_id="u")
    for second in range(1, 6):
        await service.append_event(session, Event(author="user", timestamp=second))

    got = await service.get_session(
        app_name=APP,
        user_id="u",
        session_id=session.id,
        config=GetSessionConfig(**config),
    )

    assert [event.timestamp for event in got.events] == timestamps


async def test_partial_events_are_not_kept(service):
    session = await service.create_session(app_name=APP, user_id="u")

    await service.append_event(session, Event(author="user", partial=True))
    got = await service.get_session(app_name=APP, user_id="u", session_id=session.id)

    assert (session.events, got.events) == ([], [])


async def test_user_state_is_empty_before_anything_is_written(service):
    assert await service.get_user_state(app_name=APP, user_id="u1") == {}


async def test_user_state_holds_user_keys_without_their_prefix(service):
    session = await service.create_session(app_name=APP, user_id="u1")

    await service.append_event(
        session, delta({"user:profile": {"name": "Alice"}, "session_key": 1})
    )

    assert await service.get_user_state(app_name=APP, user_id="u1") == {
        "profile": {"name": "Alice"}
    }


async def test_user_state_is_not_another_users_or_another_apps(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    await service.append_event(session, delta({"user:secret": "only for u1"}))

    assert await service.get_user_state(app_name=APP, user_id="u2") == {}
    assert await service.get_user_state(app_name="other_app", user_id="u1") == {}


async def test_user_state_reflects_the_latest_write(service):
    session = await service.create_session(app_name=APP, user_id="u1")
    await service.append_event(session, delta({"user:counter": 1}))
    await service.append_event(session, delta({"user:counter": 2}))

    assert await service.get_user_state(app_name=APP, user_id="u1") == {"counter": 2}


# What only a service that persists owes (ADK's DatabaseSessionService tests).


@pytest.fixture
def stored(transactional_db) -> DjangoSessionService:
    return DjangoSessionService()


async def test_a_stale_copy_cannot_append(stored):
    original = await stored.create_session(app_name=APP, user_id="u")
    now = time.time()
    await stored.append_event(original, delta({"sk1": "v1"}, timestamp=now + 1))
    fresh = await stored.get_session(app_name=APP, user_id="u", session_id=original.id)
    await stored.append_event(fresh, delta({"sk2": "v2"}, timestamp=now + 2))

    with pytest.raises(StaleSessionError, match="modified in storage"):
        await stored.append_event(original, delta({"sk3": "v3"}, timestamp=now + 3))

    final = await stored.get_session(app_name=APP, user_id="u", session_id=original.id)
    assert [e.actions.state_delta for e in final.events] == [
        {"sk1": "v1"},
        {"sk2": "v2"},
    ]
    assert "sk3" not in final.state


async def test_of_two_concurrent_writers_with_one_copy_exactly_one_wins(stored):
    session = await stored.create_session(app_name=APP, user_id="u")
    for i in range(4):
        latest = await stored.get_session(
            app_name=APP, user_id="u", session_id=session.id
        )
        copies = [latest.model_copy(deep=True) for _ in range(2)]
        results = await asyncio.gather(
            *(
                stored.append_event(copy, delta({f"sk{i}-{n}": n}))
                for n, copy in enumerate(copies)
            ),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, Exception)]
        assert len(errors) == 1
        assert isinstance(errors[0], StaleSessionError)

    final = await stored.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert len(final.events) == 4


async def test_a_copy_without_a_marker_may_append(stored):
    session = await stored.create_session(app_name=APP, user_id="u", session_id="s1")
    await stored.append_event(session, Event(invocation_id="inv1", author="user"))
    session._storage_update_marker = None

    await stored.append_event(session, Event(invocation_id="inv2", author="user"))

    got = await stored.get_session(app_name=APP, user_id="u", session_id="s1")
    assert [e.invocation_id for e in got.events] == ["inv1", "inv2"]


async def test_a_current_copy_may_append_whatever_its_clock_says(stored):
    session = await stored.create_session(app_name=APP, user_id="u", session_id="s1")
    first = Event(invocation_id="inv1", author="user", timestamp=time.time() + 10)
    await stored.append_event(session, first)
    session.last_update_time -= 0.0001  # a float's round trip, not another writer

    await stored.append_event(
        session,
        Event(invocation_id="inv2", author="user", timestamp=first.timestamp + 10),
    )

    got = await stored.get_session(app_name=APP, user_id="u", session_id="s1")
    assert [e.invocation_id for e in got.events] == ["inv1", "inv2"]
