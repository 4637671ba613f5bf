"""DjangoMemoryService against ADK's memory contract (tests/unittests/memory).

The behaviours ADK's in-memory memory service suite checks, on ADK's
InMemoryMemoryService and on DjangoMemoryService: what is remembered, how a
search matches words in any script (Chinese and Japanese are written without
spaces), how it ranks, and that it never reaches another user's memory.
"""

import unicodedata
from collections.abc import Iterator

import pytest
from google.adk.events import Event
from google.adk.memory import BaseMemoryService, InMemoryMemoryService
from google.adk.sessions import Session
from google.genai import types

from agents.adk.memory import DjangoMemoryService
from tests.agents.contracts.conftest import BACKENDS, prepare

APP = "test-app"
USER = "test-user"


@pytest.fixture(params=BACKENDS)
def service(request) -> Iterator[BaseMemoryService]:
    prepare(request, request.param)
    if request.param == "adk":
        yield InMemoryMemoryService()
    else:
        yield DjangoMemoryService()


def said(event_id: str, text: str | None, *, author: str = "user", at: float = 1.0):
    content = types.Content(parts=[types.Part(text=text)]) if text is not None else None
    return Event(
        id=event_id,
        invocation_id=f"inv-{event_id}",
        author=author,
        timestamp=at,
        content=content,
    )


def session(session_id: str, *events: Event, user_id: str = USER, app: str = APP):
    return Session(
        id=session_id,
        app_name=app,
        user_id=user_id,
        last_update_time=1000,
        events=list(events),
    )


async def found(
    service: BaseMemoryService, query: str, *, user_id: str = USER, app: str = APP
) -> list[str]:
    response = await service.search_memory(app_name=app, user_id=user_id, query=query)
    return [memory.content.parts[0].text for memory in response.memories]


TOOLKIT = session(
    "session-1",
    said("event-1a", "The ADK is a great toolkit.", at=12345),
    said("event-1b", None, at=12346),
    said("event-1c", "I agree. The Agent Development Kit (ADK) rocks!", author="model"),
)
PYTHON = session("session-2", said("event-2a", "I like to code in Python.", at=54321))


async def test_a_search_finds_the_event_with_its_author(service):
    await service.add_session_to_memory(TOOLKIT)
    await service.add_session_to_memory(PYTHON)

    response = await service.search_memory(app_name=APP, user_id=USER, query="Python")

    [memory] = response.memories
    assert (memory.content.parts[0].text, memory.author) == (
        "I like to code in Python.",
        "user",
    )


async def test_a_search_ignores_case(service):
    await service.add_session_to_memory(TOOLKIT)

    assert await found(service, "development") == [
        "I agree. The Agent Development Kit (ADK) rocks!"
    ]


async def test_a_search_finds_every_matching_event(service):
    await service.add_session_to_memory(TOOLKIT)

    assert set(await found(service, "How about ADK?")) == {
        "The ADK is a great toolkit.",
        "I agree. The Agent Development Kit (ADK) rocks!",
    }


async def test_a_search_without_a_match_finds_nothing(service):
    await service.add_session_to_memory(TOOLKIT)

    assert await found(service, "nonexistent") == []


async def test_a_session_without_events_adds_nothing(service):
    await service.add_session_to_memory(session("session-4"))

    assert await found(service, "anything") == []


async def test_a_search_reads_only_the_users_own_memory(service):
    await service.add_session_to_memory(TOOLKIT)
    await service.add_session_to_memory(
        session("session-3", said("event-3a", "This is a secret."), user_id="another")
    )

    assert await found(service, "secret") == []
    assert await found(service, "secret", user_id="another") == ["This is a secret."]


async def test_a_slash_in_an_app_name_reaches_no_other_user(service):
    await service.add_session_to_memory(
        session(
            "s", said("e", "This is a secret."), app="app/other-user", user_id="user"
        )
    )

    assert await found(service, "secret", app="app", user_id="other-user/user") == []


async def test_events_added_explicitly_are_searchable(service):
    await service.add_events_to_memory(
        app_name=APP, user_id=USER, session_id="session-1", events=[TOOLKIT.events[0]]
    )
    await service.add_events_to_memory(
        app_name=APP, user_id=USER, events=[PYTHON.events[0]]
    )

    assert await found(service, "toolkit") == ["The ADK is a great toolkit."]
    assert await found(service, "python") == ["I like to code in Python."]


async def test_added_events_join_the_session_and_repeated_ids_do_not(service):
    await service.add_session_to_memory(TOOLKIT)

    await service.add_events_to_memory(
        app_name=APP,
        user_id=USER,
        session_id="session-1",
        events=[
            said("event-1d", "A new fact about ADK."),
            said("event-1a", "Updated duplicate ADK text."),
        ],
    )

    assert await found(service, "ADK") == [
        "The ADK is a great toolkit.",
        "I agree. The Agent Development Kit (ADK) rocks!",
        "A new fact about ADK.",
    ]


async def test_adding_a_session_again_replaces_what_it_added(service):
    await service.add_session_to_memory(session("s1", said("e1", "draft idea")))

    await service.add_session_to_memory(session("s1", said("e2", "final idea")))

    assert await found(service, "idea") == ["final idea"]


async def test_a_deleted_memory_stays_deleted(service):
    await service.add_session_to_memory(TOOLKIT)

    await service.delete_memory(app_name=APP, user_id=USER, memory_id="event-1a")
    await service.add_session_to_memory(TOOLKIT)

    assert await found(service, "ADK") == [
        "I agree. The Agent Development Kit (ADK) rocks!"
    ]


@pytest.mark.parametrize(
    ("text", "query", "count"),
    [
        # Japanese and Chinese are written without spaces: a word is a substring.
        ("私の名前は太郎です", "太郎", 1),
        ("私の名前は太郎です", "天気", 0),
        ("我喜欢机器学习", "机器学习", 1),
        ("我喜欢机器学习", "天气预报", 0),
        # Korean and Cyrillic are written with spaces: a word is a token.
        ("제 이름은 민수입니다", "민수입니다", 1),
        ("Меня зовут Алексей", "Алексей", 1),
        ("太郎 works at ABC Corp", "太郎", 1),
        ("太郎 works at ABC Corp", "ABC", 1),
        # A Latin word inside unspaced text is a word of its own.
        ("私はPythonでADKを使っています", "Python", 1),
        ("私はPythonでADKを使っています", "adk", 1),
        ("我用Python写代码", "python", 1),
        ("私はPythonでADKを使っています", "使って", 1),
        ("私はPythonでADKを使っています", "Java", 0),
        # Part of a Latin word is no match.
        ("I like to code in Python.", "thon", 0),
        ("私はPythonでADKを使っています", "thon", 0),
        # Decomposed (NFD) text or queries match their composed form.
        (unicodedata.normalize("NFD", "私はCaféでADKを使っています"), "Café", 1),
        (unicodedata.normalize("NFD", "私はCaféでADKを使っています"), "café", 1),
        (unicodedata.normalize("NFD", "私はCaféでADKを使っています"), "Ruby", 0),
        (unicodedata.normalize("NFD", "Meet at the Café"), "Café", 1),
        ("Meet at the Café", unicodedata.normalize("NFD", "Café"), 1),
        (unicodedata.normalize("NFD", "プログラミングを学ぶ"), "プログラミング", 1),
        (unicodedata.normalize("NFD", "제 이름은 민수입니다"), "민수입니다", 1),
    ],
)
async def test_words_are_found_in_any_script(service, text, query, count):
    await service.add_session_to_memory(session("i18n", said("i18n", text)))

    assert len(await found(service, query)) == count


async def test_events_matching_more_words_come_first(service):
    await service.add_session_to_memory(
        session(
            "ranked",
            said("a", "The deploy is ready."),
            said("b", "Ready."),
            said("c", "The deploy status is ready."),
        )
    )

    assert await found(service, "deploy status ready") == [
        "The deploy status is ready.",
        "The deploy is ready.",
        "Ready.",
    ]


async def test_at_most_ten_come_back_and_ties_keep_the_order_they_were_stored(service):
    events = [said(f"note-{i}", f"note {i} about work") for i in range(20)]
    events.append(said("backlog", "the backlog note about work"))
    await service.add_session_to_memory(session("many", *events))

    assert await found(service, "work backlog note") == [
        "the backlog note about work"
    ] + [f"note {i} about work" for i in range(9)]


async def test_ties_across_sessions_keep_the_order_they_were_stored(service):
    for n in range(3):
        await service.add_session_to_memory(
            # Each newer than the one before: stored order wins, not time.
            session(f"s{n}", said(f"e{n}", f"meeting number {n}", at=1000 + n))
        )

    assert await found(service, "meeting") == [
        "meeting number 0",
        "meeting number 1",
        "meeting number 2",
    ]


@pytest.mark.parametrize("whole_session", [True, False])
async def test_what_is_remembered_does_not_follow_the_callers_event(
    service, whole_session
):
    event = said("event", "I prefer jasmine tea.", at=12345)
    if whole_session:
        await service.add_session_to_memory(session("s", event))
    else:
        await service.add_events_to_memory(
            app_name=APP, user_id=USER, session_id="s", events=[event]
        )

    event.author = "changed"
    event.content.parts[0].text = "I prefer coffee."
    response = await service.search_memory(app_name=APP, user_id=USER, query="jasmine")

    [memory] = response.memories
    assert (memory.author, memory.content.parts[0].text) == (
        "user",
        "I prefer jasmine tea.",
    )


async def test_editing_a_result_changes_neither_memory_nor_the_session(service):
    remembered = session("s", said("event", "I prefer jasmine tea.", at=12345))
    await service.add_session_to_memory(remembered)

    first = await service.search_memory(app_name=APP, user_id=USER, query="jasmine")
    first.memories[0].content.parts.clear()

    assert await found(service, "jasmine") == ["I prefer jasmine tea."]
    assert remembered.events[0].content.parts[0].text == "I prefer jasmine tea."
