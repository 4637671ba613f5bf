"""DjangoMemoryService: one user's past sessions, searched by words, never another's."""

import pytest
from google.adk.events import Event as AdkEvent
from google.adk.memory.memory_entry import MemoryEntry as AdkMemoryEntry
from google.adk.sessions import Session as AdkSession
from google.genai import types

from agents.adk.memory import DjangoMemoryService
from agents.models import MemoryEntry

pytestmark = pytest.mark.django_db(transaction=True)

APP = "app"


def event(author: str, text: str | None = None, **kwargs) -> AdkEvent:
    content = None
    if text is not None:
        content = types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        )
    return AdkEvent(author=author, content=content, invocation_id="inv", **kwargs)


def session(
    user_id: str, session_id: str, *events: AdkEvent, app: str = APP
) -> AdkSession:
    return AdkSession(id=session_id, app_name=app, user_id=user_id, events=list(events))


async def search(
    service, query: str, user_id: str = "alice", app: str = APP
) -> list[str]:
    found = await service.search_memory(app_name=app, user_id=user_id, query=query)
    return [memory.content.parts[0].text for memory in found.memories]


@pytest.fixture
def service():
    return DjangoMemoryService()


async def test_a_search_finds_my_remembered_words(service):
    await service.add_session_to_memory(
        session(
            "alice",
            "s1",
            event("user", "My cat is named Turing"),
            event("agent", "What a fine name for a cat"),
            event("user", "I also like tea"),
        )
    )

    found = await service.search_memory(app_name=APP, user_id="alice", query="cat")

    texts = [m.content.parts[0].text for m in found.memories]
    assert sorted(texts) == ["My cat is named Turing", "What a fine name for a cat"]
    first = found.memories[0]
    assert first.author in {"user", "agent"}
    assert first.timestamp
    assert first.custom_metadata["session_id"] == "s1"


async def test_another_users_memory_is_never_found(service):
    await service.add_session_to_memory(
        session("alice", "s1", event("user", "secret plan"))
    )

    assert await search(service, "secret plan", user_id="bob") == []
    assert await search(service, "secret plan", app="other") == []
    assert await search(service, "secret plan") == ["secret plan"]


async def test_entries_matching_more_words_come_first(service):
    await service.add_session_to_memory(
        session(
            "alice",
            "s1",
            event("user", "the budget is tight"),
            event("user", "the revenue target and the budget are set"),
            event("user", "revenue grew"),
        )
    )

    found = await search(service, "revenue budget")

    assert found[0] == "the revenue target and the budget are set"
    assert set(found[1:]) == {"the budget is tight", "revenue grew"}


async def test_stop_words_alone_match_little(service):
    await service.add_session_to_memory(
        session("alice", "s1", event("user", "a note about the weather"))
    )

    assert await search(service, "Context for analyzing document about revenue") == []


async def test_results_are_capped(service, settings):
    settings.TOOLCRIB_MEMORY_MAX_RESULTS = 3
    events = [event("user", f"tea number {i}") for i in range(6)]
    await service.add_session_to_memory(session("alice", "s1", *events))

    assert len(await search(service, "tea")) == 3


async def test_adding_a_session_again_replaces_what_it_added(service):
    first = event("user", "draft idea")
    await service.add_session_to_memory(session("alice", "s1", first))
    await service.add_session_to_memory(
        session("alice", "s1", first, event("user", "second idea"))
    )

    assert sorted(await search(service, "idea")) == ["draft idea", "second idea"]
    assert await MemoryEntry.objects.acount() == 2


async def test_only_words_are_remembered(service):
    call = AdkEvent(
        author="agent",
        invocation_id="inv",
        content=types.Content(
            role="model",
            parts=[
                types.Part(function_call=types.FunctionCall(name="lookup", args={}))
            ],
        ),
    )
    await service.add_session_to_memory(session("alice", "s1", call, event("agent")))

    assert await MemoryEntry.objects.acount() == 0


async def test_a_forgotten_memory_stays_forgotten(service):
    kept, dropped = event("user", "keep this fact"), event("user", "drop this fact")
    await service.add_session_to_memory(session("alice", "s1", kept, dropped))

    await service.delete_memory(app_name=APP, user_id="alice", memory_id=dropped.id)
    await service.add_session_to_memory(session("alice", "s1", kept, dropped))

    assert await search(service, "fact") == ["keep this fact"]


async def test_events_are_added_once(service):
    note = event("user", "remember the milk")

    for _ in range(2):
        await service.add_events_to_memory(
            app_name=APP, user_id="alice", events=[note], session_id="s1"
        )

    assert await search(service, "milk") == ["remember the milk"]


async def test_explicit_memories_are_searchable(service):
    await service.add_memory(
        app_name=APP,
        user_id="alice",
        memories=[
            AdkMemoryEntry(
                content=types.Content(
                    role="user", parts=[types.Part(text="Prefers tea")]
                ),
                author="user",
            )
        ],
    )

    assert await search(service, "tea") == ["Prefers tea"]


async def test_words_are_matched_whatever_their_case_or_script(service):
    await service.add_session_to_memory(
        session("alice", "s1", event("user", "Ärger mit dem Übersetzer"))
    )

    assert await search(service, "übersetzer") == ["Ärger mit dem Übersetzer"]
