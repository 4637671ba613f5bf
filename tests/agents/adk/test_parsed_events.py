"""A session's stored events are parsed once per process, not every turn, and what
is kept is what is stored: never the turn's own objects."""

import gc
import tracemalloc

import pytest
from google.adk.events import Event as AdkEvent
from google.genai import types

from agents.adk import event_reads, event_writes, parsed_events
from agents.adk.parsed_events import ParsedEvents
from agents.adk.sessions import DjangoSessionService

pytestmark = pytest.mark.django_db(transaction=True)


def said(text: str, author: str = "user") -> AdkEvent:
    role = "user" if author == "user" else "model"
    return AdkEvent(
        author=author,
        invocation_id="inv",
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


@pytest.fixture
def validations(monkeypatch) -> list[str]:
    """Each stored event parsed from its data: its id."""
    seen: list[str] = []
    plain = AdkEvent.model_validate

    def counted(data, *args, **kwargs):
        event = plain(data, *args, **kwargs)
        seen.append(event.id)
        return event

    monkeypatch.setattr(event_reads.AdkEvent, "model_validate", counted)
    return seen


async def test_a_second_read_parses_only_what_is_new(validations):
    service = DjangoSessionService()
    session = await service.create_session(app_name="app", user_id="u")
    for n in range(3):
        await service.append_event(session, said(f"message {n}"))
    validations.clear()

    first = await service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    await service.append_event(first, said("answer", author="model"))
    parsed_before = len(validations)
    again = await service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )

    assert [e.content.parts[0].text for e in again.events] == [
        "message 0",
        "message 1",
        "message 2",
        "answer",
    ]
    # The appended event was parsed once, from its stored data, when it committed;
    # the second read parsed nothing.
    assert len(validations) == parsed_before


async def test_what_is_kept_is_the_stored_event_not_the_turns_object():
    service = DjangoSessionService()
    session = await service.create_session(app_name="app", user_id="u")
    mine = said("hello")
    await service.append_event(session, mine)
    mine.content.parts[0].text = "changed in memory after it was stored"

    read = await service.get_session(app_name="app", user_id="u", session_id=session.id)

    assert read.events[0].content.parts[0].text == "hello"
    assert read.events[0] is not mine


async def test_with_none_kept_every_read_parses_from_the_database(
    validations, monkeypatch
):
    none_kept = ParsedEvents(0)
    monkeypatch.setattr(event_reads, "PARSED", none_kept)
    monkeypatch.setattr(event_writes, "PARSED", none_kept)
    service = DjangoSessionService()
    session = await service.create_session(app_name="app", user_id="u")
    await service.append_event(session, said("hello"))
    validations.clear()

    for _ in range(2):
        await service.get_session(app_name="app", user_id="u", session_id=session.id)

    assert len(validations) == 2


def test_the_least_recently_used_entry_goes_first_past_the_bound():
    kept = ParsedEvents(2)
    events = [said(f"m{n}") for n in range(3)]
    kept.put(0, events[0])
    kept.put(1, events[1])
    kept.get_many([(0, events[0].id)])  # 0 used again: 1 is now the oldest

    kept.put(2, events[2])

    assert set(kept.get_many((pk, e.id) for pk, e in enumerate(events))) == {0, 2}


def test_a_row_id_holding_another_event_is_not_a_hit():
    kept = ParsedEvents(10)
    kept.put(7, said("first"))

    assert kept.get_many([(7, "another-event-id")]) == {}


def test_the_process_bound_comes_from_settings(settings):
    assert parsed_events.PARSED.size == settings.TOOLCRIB_PARSED_EVENTS


def turn_event(n: int) -> AdkEvent:
    """An event as a turn stores them: the model's words beside a tool call."""
    return AdkEvent(
        author="weather",
        invocation_id=f"e-{n}",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text=" ".join(f"word{n + i}" for i in range(20))),
                types.Part(
                    function_call=types.FunctionCall(
                        id=f"adk-{n}", name="get_weather_report", args={"city": "x"}
                    )
                ),
            ],
        ),
    )


def test_memory_levels_off_at_the_default_bound_within_a_few_mib(settings):
    """Past its bound the cache holds no more: five times the bound's events put
    take what the first bound's took, and the default's is a few MiB (issue 43:
    the old default, 10,000, grew a server by about 50 MiB)."""
    bound = settings.TOOLCRIB_PARSED_EVENTS
    kept = ParsedEvents(bound)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for pk in range(bound):
            kept.put(pk, turn_event(pk))
        gc.collect()
        full = tracemalloc.get_traced_memory()[0] - start
        for pk in range(bound, 5 * bound):
            kept.put(pk, turn_event(pk))
        gc.collect()
        later = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()

    assert later <= 1.1 * full
    assert full <= 16 * 1024 * 1024
