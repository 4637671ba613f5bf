"""A token given to an imported OpenAPI operation is a Credential like any other.

Issue 14, High #2: an imported spec with a bearer security scheme asks the user for
the token, and the token then sat in session state, in the event's `state_delta`
(REST and socket, owner and staff), in `GET /api/sessions/{id}/state/` and in the
stored rows. Driven end to end: an admin imports a spec a loopback server serves,
the offline model calls the operation, the owner answers the credential request
over REST or the socket, the operation reaches the API with the token.
"""

import io
import json

import pytest
from asgiref.sync import sync_to_async as sync
from django.core.management import call_command
from django.db import connection

from agents.adk.credentials import unseal
from agents.models import AgentSpec, Credential, Event, Request, Session
from tests.agents.test_long_running import (
    drain_backlog,
    frames_until_finished,
    open_socket,
)
from tests.toolsets.builtin import servers
from tests.toolsets.builtin.servers import Reply, json_reply
from toolsets import access, grants
from toolsets.models import Toolset

pytestmark = pytest.mark.django_db(transaction=True)

TOKEN = "vault-bearer-Zq81Xw5Lk0Pm2Rt7"
ASK = "list the notes"
NOTES = {"notes": ["pay rent", "call mum"]}
TIMEOUT = 10


def vault_spec() -> dict:
    """One operation, behind a bearer token (a spec-wide security requirement)."""
    return {
        "openapi": "3.0.3",
        "info": {"title": "Vault", "version": "1"},
        "servers": [{"url": "/api"}],
        "components": {
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}}
        },
        "security": [{"bearerAuth": []}],
        "paths": {
            "/notes": {
                "get": {
                    "operationId": "listNotes",
                    "summary": "List the notes.",
                    "responses": {"200": {"description": "The notes."}},
                }
            }
        },
    }


def notes_or_401(handler) -> Reply:
    if handler.headers.get("Authorization") != f"Bearer {TOKEN}":
        return Reply(401, b'{"error": "no token"}', {"WWW-Authenticate": "Bearer"})
    return json_reply(NOTES)


@pytest.fixture
def vault():
    """The spec at /openapi.json; its API under /api answers only the token."""
    server = servers.serve()
    server.routes["/openapi.json"] = json_reply(vault_spec())
    server.routes["/api/notes"] = notes_or_401
    yield server
    servers.stop(server)


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


def agent_of(admin, apis: dict, instruction: str, user) -> str:
    """An admin imports each spec and grants it to `user`; an offline agent uses them."""
    access.invalidate()
    for name, server in apis.items():
        registered = admin.post(
            "/api/imports/",
            {
                "kind": "openapi",
                "name": name,
                "url": server.url("/openapi.json"),
                "allow_private_network": True,
                "approve_tools": True,
            },
            format="json",
        )
        assert registered.status_code == 201, registered.content
        toolset = Toolset.objects.get(name=name)
        grants.update_toolset(toolset=toolset, default_policy="granted_only")
        grants.grant_tool(target=toolset, effect="allow", user=user)
    spec = AgentSpec.objects.create(
        name="-".join([*apis, "agent"]),
        model="offline/demo",
        instruction=instruction,
        toolsets=list(apis),
    )
    return spec.name


@pytest.fixture
def agent(vault, staff, alice, api_for) -> str:
    """The vault spec imported by an admin, granted to alice, on an offline agent."""
    yield agent_of(
        api_for(staff),
        {"vault": vault},
        "To list the notes, use vault_list_notes.",
        alice,
    )
    access.invalidate()


@pytest.fixture
def asked(agent, start_session, say):
    """A session whose call to the operation waits for alice's token."""

    def make(user) -> tuple[str, Request]:
        session = start_session(user, agent)
        assert say(user, session, ASK)["status"] == "waiting"
        return session, Request.objects.get(
            kind=Request.Kind.CREDENTIAL, session_id=session
        )

    return make


@pytest.fixture
def answer(api_for):
    """The owner answers a credential request over REST with the token."""

    def post(user, request: Request):
        return api_for(user).post(
            f"/api/auth-requests/{request.id}/answer/?wait=1",
            {"token": TOKEN},
            format="json",
        )

    return post


def sent_tokens(server) -> list[str | None]:
    """The Authorization header of each call the API received."""
    return [
        headers.get("Authorization")
        for _, path, headers in server.seen
        if path.startswith("/api/")
    ]


def notes_said(frames: list[dict]) -> bool:
    """True if the operation's answer reached the session."""
    return any(
        response["name"] == "vault_list_notes" and response["response"] == NOTES
        for frame in frames
        for response in frame["event"]["function_responses"]
    )


def stored_rows(session: str) -> str:
    """Every stored Event row and the Session row of a session, read raw."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT data FROM agents_event WHERE session_id = %s", [session])
        events = [str(row[0]) for row in cursor.fetchall()]
        cursor.execute("SELECT state FROM agents_session WHERE id = %s", [session])
        states = [str(row[0]) for row in cursor.fetchall()]
        cursor.execute("SELECT key, value FROM agents_userstate")
        users = [str(row) for row in cursor.fetchall()]
    return "\n".join([*events, *states, *users])


def stored_credentials() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM agents_credential")
        return "\n".join(str(row) for row in cursor.fetchall())


def shown_over_rest(user, session: str, api_for) -> str:
    client = api_for(user)
    return "\n".join(
        client.get(path).content.decode()
        for path in (
            f"/api/sessions/{session}/events/",
            f"/api/sessions/{session}/state/",
            f"/api/sessions/{session}/runs/",
        )
    )


def test_the_token_answered_over_rest_reaches_the_api_and_shows_nowhere(
    alice, staff, asked, answer, events_of, api_for, vault
):
    session, request = asked(alice)

    answered = answer(alice, request)

    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded"
    assert notes_said(events_of(alice, session))
    assert f"Bearer {TOKEN}" in sent_tokens(vault)
    assert TOKEN not in shown_over_rest(alice, session, api_for)
    assert TOKEN not in shown_over_rest(staff, session, api_for)
    assert TOKEN not in stored_rows(session)
    row = Credential.objects.get()
    assert (row.owner, row.scheme, row.tool_name) == (alice, "http", "vault_list_notes")
    assert unseal(row.sealed).http.credentials.token == TOKEN
    assert TOKEN not in stored_credentials()
    assert [c["id"] for c in api_for(alice).get("/api/credentials/").json()] == [row.id]


def test_a_later_session_of_the_owner_calls_the_operation_without_asking(
    alice, asked, answer, api_for, start_session, say, events_of, agent, vault
):
    _, request = asked(alice)
    answer(alice, request)
    vault.seen.clear()

    later = start_session(alice, agent)
    said = say(alice, later, ASK)

    assert said["status"] == "succeeded"
    assert notes_said(events_of(alice, later))
    assert not Request.objects.filter(
        kind=Request.Kind.CREDENTIAL, session_id=later
    ).exists()
    assert sent_tokens(vault) == [f"Bearer {TOKEN}"]
    assert TOKEN not in stored_rows(later)
    assert TOKEN not in shown_over_rest(alice, later, api_for)


def test_a_token_given_for_one_import_is_never_sent_to_another(
    alice, staff, api_for, start_session, say, answer, vault
):
    """Two imports with the same kind of scheme, in one session: each its own token."""
    journal = servers.serve()
    journal.routes["/openapi.json"] = json_reply(vault_spec())
    journal.routes["/api/notes"] = notes_or_401
    try:
        both = agent_of(
            api_for(staff),
            {"vault": vault, "journal": journal},
            "To list the vault notes, use vault_list_notes. "
            "To list the journal notes, use journal_list_notes.",
            alice,
        )
        session = start_session(alice, both)
        say(alice, session, "list the vault notes")
        answer(
            alice, Request.objects.get(kind=Request.Kind.CREDENTIAL, session_id=session)
        )
        journal.seen.clear()
        say(alice, session, "list the journal notes")
    finally:
        servers.stop(journal)

    asked = Request.objects.filter(kind=Request.Kind.CREDENTIAL, session_id=session)
    assert [r.tool_name for r in asked.order_by("id")] == [
        "vault_list_notes",
        "journal_list_notes",
    ]
    assert f"Bearer {TOKEN}" not in sent_tokens(journal)


def test_a_token_stored_in_clear_before_is_shown_nowhere_and_can_be_scrubbed(
    alice, staff, asked, api_for
):
    """State and events the old code stored are redacted on read, and scrubbed."""
    session, _ = asked(alice)
    leaked = {
        "http_178204f758fb78d5__existing_exchanged_credential": {
            "auth_type": "http",
            "http": {"scheme": "bearer", "credentials": {"token": TOKEN}},
        }
    }
    Session.objects.filter(pk=session).update(state=leaked)
    row = Event.objects.filter(session_id=session, is_adk=True).order_by("seq").last()
    row.data = {**row.data, "actions": {**row.data["actions"], "state_delta": leaked}}
    row.save(update_fields=["data"])

    shown = [
        shown_over_rest(alice, session, api_for),
        shown_over_rest(staff, session, api_for),
    ]
    call_command("scrub_credentials", stdout=io.StringIO())

    assert all(TOKEN not in text for text in shown)
    assert TOKEN not in stored_rows(session)


async def test_the_token_answered_over_the_socket_shows_in_no_frame(
    alice, staff, asked
):
    session, request = await sync(asked)(alice)
    owner = await open_socket(alice, session)
    watcher = await open_socket(staff, session)
    await drain_backlog(owner)
    await drain_backlog(watcher)

    await owner.send_json_to(
        {
            "type": "credential",
            "call_id": request.call_id,
            "credential": {"token": TOKEN},
        }
    )

    ack = await owner.receive_json_from(timeout=TIMEOUT)
    assert ack["type"] == "ack", ack
    seen_by_owner = await frames_until_finished(owner)
    seen_by_staff = await frames_until_finished(watcher)
    assert notes_said(seen_by_owner)
    assert TOKEN not in json.dumps(seen_by_owner)
    assert TOKEN not in json.dumps(seen_by_staff)
    assert TOKEN not in await sync(stored_rows)(session)
    await owner.disconnect()
    await watcher.disconnect()
