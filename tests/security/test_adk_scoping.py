"""ADK's scoping: a session id is unique per (app, user), a credential per (app, user, key).

Before, a session id was global (another user's id gave AlreadyExistsError) and a
credential saved in one app loaded in every other app of the same user. The
contract scenarios run against ADK's own in-memory services and Toolcrib's Django
ones: whatever ADK answers, Toolcrib must answer the same.
"""

from collections.abc import AsyncGenerator

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection
from google.adk.agents import LlmAgent
from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.apps import App
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from google.adk.auth.credential_service.base_credential_service import (
    BaseCredentialService,
)
from google.adk.auth.credential_service.in_memory_credential_service import (
    InMemoryCredentialService,
)
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events import Event, EventActions
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.adk.sessions import Session as AdkSession
from google.genai import types

from agents.adk.builder import sync_code_agents
from agents.adk.credentials import DjangoCredentialService
from agents.adk.sessions import DjangoSessionService
from agents.models import AgentSpec, Request
from agents.models import Session as SessionRow
from demo.quotes import get_stock_quote, quotes_api

pytestmark = pytest.mark.django_db(transaction=True)

APP = "scoping"
OTHER_APP = "scoping_other"
SHARED_ID = "shared-session"
SECRET = "sk-live-4Hq8Tw1Ze6Rc2Yp9"
ASK = "quote for ACME"
QUOTED = "ACME is at 123.45 (key ****2Yp9)."


@pytest.fixture(
    params=[InMemorySessionService, DjangoSessionService], ids=["memory", "django"]
)
def sessions(request) -> BaseSessionService:
    return request.param()


@pytest.fixture(
    params=[InMemoryCredentialService, DjangoCredentialService],
    ids=["memory", "django"],
)
def credentials(request) -> BaseCredentialService:
    return request.param()


@pytest.fixture(autouse=True)
async def _close_orm_thread_connection() -> AsyncGenerator[None, None]:
    """Close the ORM thread's connection, or PostgreSQL cannot drop the test DB."""
    yield
    await sync_to_async(close_connection)()


def close_connection() -> None:
    # Looked up inside the calling thread: connections are per thread.
    connection.close()


def said(text: str, *, author: str = "user", **fields) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, invocation_id="inv-1", content=content, **fields)


def texts(session: AdkSession) -> list[str]:
    return [event.content.parts[0].text for event in session.events]


async def create(service, user_id: str, *, app: str = APP, **kw) -> AdkSession:
    return await service.create_session(
        app_name=app, user_id=user_id, session_id=SHARED_ID, **kw
    )


async def get(service, user_id: str, *, app: str = APP) -> AdkSession | None:
    return await service.get_session(
        app_name=app, user_id=user_id, session_id=SHARED_ID
    )


# Sessions: the id is unique per (app, user), as in ADK.


async def test_another_user_may_take_the_same_session_id(sessions):
    alices = await create(sessions, "alice", state={"owner": "alice"})
    await sessions.append_event(alices, said("alice's secret"))

    bobs = await create(sessions, "bob", state={"owner": "bob"})

    assert (bobs.id, bobs.user_id, bobs.events) == (SHARED_ID, "bob", [])
    fetched = await get(sessions, "bob")
    assert (fetched.id, fetched.user_id) == (SHARED_ID, "bob")
    assert (fetched.state, fetched.events) == ({"owner": "bob"}, [])
    assert texts(await get(sessions, "alice")) == ["alice's secret"]
    assert (await get(sessions, "alice")).state == {"owner": "alice"}


async def test_the_same_user_may_use_the_same_id_in_another_app(sessions):
    first = await create(sessions, "alice")
    await sessions.append_event(first, said("in the first app"))

    second = await create(sessions, "alice", app=OTHER_APP)

    assert (second.id, second.app_name, second.events) == (SHARED_ID, OTHER_APP, [])
    assert (await get(sessions, "alice", app=OTHER_APP)).events == []
    assert texts(await get(sessions, "alice")) == ["in the first app"]


async def test_the_same_id_twice_for_one_user_of_one_app_still_raises(sessions):
    await create(sessions, "alice")
    await create(sessions, "bob")

    with pytest.raises(AlreadyExistsError):
        await create(sessions, "bob")


async def test_each_user_appends_to_their_own_session(sessions):
    alices = await create(sessions, "alice")
    bobs = await create(sessions, "bob")

    await sessions.append_event(bobs, said("bob's", actions=_delta({"seen": "bob"})))
    await sessions.append_event(alices, said("alice's"))

    assert texts(await get(sessions, "bob")) == ["bob's"]
    assert texts(await get(sessions, "alice")) == ["alice's"]
    assert (await get(sessions, "alice")).state == {}
    assert (await get(sessions, "bob")).state == {"seen": "bob"}


async def test_deleting_one_users_session_keeps_the_others(sessions):
    alices = await create(sessions, "alice")
    await sessions.append_event(alices, said("kept"))
    await create(sessions, "bob")

    await sessions.delete_session(app_name=APP, user_id="bob", session_id=SHARED_ID)

    assert await get(sessions, "bob") is None
    assert texts(await get(sessions, "alice")) == ["kept"]


async def test_listing_shows_each_users_session_under_the_shared_id(sessions):
    await create(sessions, "alice", state={"owner": "alice"})
    await create(sessions, "bob", state={"owner": "bob"})

    everyone = (await sessions.list_sessions(app_name=APP)).sessions
    bobs = (await sessions.list_sessions(app_name=APP, user_id="bob")).sessions

    assert sorted((s.id, s.user_id, s.state["owner"]) for s in everyone) == [
        (SHARED_ID, "alice", "alice"),
        (SHARED_ID, "bob", "bob"),
    ]
    assert [(s.id, s.user_id) for s in bobs] == [(SHARED_ID, "bob")]


async def test_a_runner_turn_stays_in_its_users_session(sessions):
    alices = await create(sessions, "alice")
    await sessions.append_event(alices, said("alice's secret"))
    await create(sessions, "bob")
    runner = Runner(
        app=App(name=APP, root_agent=LlmAgent(name="echo")), session_service=sessions
    )
    message = types.Content(role="user", parts=[types.Part(text="hello")])

    yielded = [
        event
        async for event in runner.run_async(
            user_id="bob", session_id=SHARED_ID, new_message=message
        )
    ]
    await runner.close()

    assert [e.content.parts[0].text for e in yielded] == ["You said: hello"]
    assert texts(await get(sessions, "bob")) == ["hello", "You said: hello"]
    assert texts(await get(sessions, "alice")) == ["alice's secret"]


def _delta(delta: dict) -> EventActions:
    return EventActions(state_delta=delta)


# Credentials: keyed by (app, user, credential key), as in ADK.


def context_for(*, app: str, user_id: str) -> Context:
    """A tool's context in a session of `user_id` in `app`, as ADK builds it."""
    session = AdkSession(id="s1", app_name=app, user_id=user_id)
    invocation = InvocationContext(
        session_service=InMemorySessionService(),
        invocation_id="e-1",
        agent=LlmAgent(name="quotes"),
        session=session,
    )
    return Context(invocation)


def saved(key: str):
    config = quotes_api()
    config.exchanged_auth_credential = AuthCredential(
        auth_type=AuthCredentialTypes.API_KEY, api_key=key
    )
    return config


async def test_a_credential_saved_in_one_app_does_not_load_in_another(
    credentials, alice, bob
):
    mine = context_for(app=APP, user_id=str(alice.pk))

    await credentials.save_credential(saved(SECRET), mine)

    loaded = await credentials.load_credential(quotes_api(), mine)
    elsewhere = await credentials.load_credential(
        quotes_api(), context_for(app=OTHER_APP, user_id=str(alice.pk))
    )
    theirs = await credentials.load_credential(
        quotes_api(), context_for(app=APP, user_id=str(bob.pk))
    )
    assert loaded.api_key == SECRET
    assert (elsewhere, theirs) == (None, None)


async def test_each_app_keeps_its_own_credential_for_one_key(credentials, alice):
    first = context_for(app=APP, user_id=str(alice.pk))
    second = context_for(app=OTHER_APP, user_id=str(alice.pk))

    await credentials.save_credential(saved("first-app-key"), first)
    await credentials.save_credential(saved("second-app-key"), second)

    assert (await credentials.load_credential(quotes_api(), first)).api_key == (
        "first-app-key"
    )
    assert (await credentials.load_credential(quotes_api(), second)).api_key == (
        "second-app-key"
    )


# Over REST: the second user's same-id session never shows the first user's.


def quotes_desk() -> LlmAgent:
    """Another app whose tool needs the same credential key as the demo quotes."""
    return LlmAgent(
        name="quotes_desk",
        instruction="When the user asks for a stock quote, use 'get_stock_quote'.",
        tools=[get_stock_quote],
    )


@pytest.fixture
def apps(db, settings):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.security.test_adk_scoping.quotes_desk",
    ]
    return {spec.name: spec for spec in sync_code_agents()}


def adk_session_for(user, *, app: AgentSpec, session_id: str) -> str:
    """A session ADK creates for `user` with a chosen id, given to them over REST.

    ADK's create_session records no Toolcrib owner; giving it one (and its agent)
    lets the user reach it over REST like any session of theirs. Returns its REST id.
    """
    async_to_sync(DjangoSessionService().create_session)(
        app_name=app.name, user_id=str(user.pk), session_id=session_id
    )
    rows = SessionRow.objects.filter(app_name=app.name, user_id=str(user.pk))
    assert rows.update(owner=user, agent=app) == 1
    return rows.get().pk


def event_texts(frames: list[dict]) -> list[str]:
    return [f["event"].get("text") or "" for f in frames]


def test_a_same_id_session_of_another_user_shows_only_its_own_events(
    alice, bob, apps, start_session, say, events_of, api_for
):
    alices = start_session(alice, "quotes")
    say(alice, alices, "hello from alice")
    bobs = adk_session_for(bob, app=apps["quotes"], session_id=alices)

    assert say(bob, bobs, ASK)["status"] == "waiting"

    bob_sees = events_of(bob, bobs)
    alice_sees = events_of(alice, alices)
    assert bobs != alices
    assert not any("alice" in text for text in event_texts(bob_sees))
    assert not any(ASK in text for text in event_texts(alice_sees))
    assert ASK in event_texts(bob_sees)
    assert {f["session"] for f in bob_sees} == {bobs}
    state = api_for(bob).get(f"/api/sessions/{bobs}/state/")
    assert state.status_code == 200
    asked = Request.objects.get(
        kind=Request.Kind.CREDENTIAL, credential_key="demo_quotes_api_key"
    )
    assert asked.session_id == bobs
    audited = api_for(bob).get("/api/tool-calls/").json()
    assert [(c["tool_name"], c["session_id"]) for c in _results(audited)] == [
        ("get_stock_quote", bobs)
    ]
    assert api_for(alice).get(f"/api/sessions/{bobs}/events/").status_code == 404


def _results(body) -> list[dict]:
    return body["results"] if isinstance(body, dict) else body


def test_a_credential_answered_in_one_app_is_asked_again_in_another(
    alice, apps, start_session, say, events_of, api_for
):
    first = start_session(alice, "quotes")
    say(alice, first, ASK)
    request = Request.objects.get(kind=Request.Kind.CREDENTIAL, session_id=first)
    answered = api_for(alice).post(
        f"/api/auth-requests/{request.id}/answer/?wait=1",
        {"api_key": SECRET},
        format="json",
    )
    assert answered.json()["status"] == "succeeded", answered.content
    assert QUOTED in event_texts(events_of(alice, first))

    other = start_session(alice, "quotes_desk")
    say(alice, other, ASK)
    again = start_session(alice, "quotes")
    say(alice, again, ASK)

    assert (
        Request.objects.filter(kind=Request.Kind.CREDENTIAL, session_id=other).count()
        == 1
    )
    assert not any("2Yp9" in text for text in event_texts(events_of(alice, other)))
    assert QUOTED in event_texts(events_of(alice, again))
    listed = api_for(alice).get("/api/credentials/").json()
    assert [(c["key"], c["app"]) for c in _results(listed)] == [
        ("demo_quotes_api_key", "quotes")
    ]
