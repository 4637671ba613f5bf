"""Credentials a tool asks for: answered once by the owner, sealed, never shown."""

import io
import json
import logging

import pytest
from asgiref.sync import sync_to_async as sync
from google.adk.auth.auth_credential import AuthCredential, AuthCredentialTypes
from google.adk.sessions import Session as AdkSession

from agents.adk.credentials import DjangoCredentialService, unseal
from agents.credentials import build_credential
from agents.models import Credential, Event, Request, Run
from demo.quotes import quotes_api
from tests.agents.test_consumers import ack_and_turn
from tests.agents.test_long_running import (
    drain_backlog,
    open_socket,
)
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
SECRET = "sk-live-7Qx9Zr2Lm4Np8Vb3"
ASK = "quote for ACME"
QUOTED = "ACME is at 123.45 (key ****8Vb3)."


@pytest.fixture(autouse=True)
def agents(demo_agents):
    return demo_agents


@pytest.fixture
def asked(start_session, say):
    """A quotes session whose tool waits for the user's API key."""

    def make(user) -> tuple[str, Request]:
        session = start_session(user, "quotes")
        run = say(user, session, ASK)
        assert (run["status"], run["waiting_for"]) == ("waiting", "credential")
        return session, credential_request(session_id=session)

    return make


@pytest.fixture
def answer(api_for):
    def post(user, request_id, body, wait: bool = True):
        suffix = "?wait=1" if wait else ""
        return api_for(user).post(
            f"/api/auth-requests/{request_id}/answer/{suffix}", body, format="json"
        )

    return post


@pytest.fixture
def quote(start_session, say, events_of):
    """Ask for a quote in a new session: what the agent said, and if the tool asked."""

    def ask(user) -> tuple[list[str], bool]:
        session = start_session(user, "quotes")
        say(user, session, ASK)
        asked = credential_requests().filter(session_id=session).exists()
        return texts(events_of(user, session)), asked

    return ask


@pytest.fixture
def console_log(settings):
    """What the configured console handler writes, everything at DEBUG."""
    handler = next(h for h in logging.getLogger().handlers if h.name == "console")
    stream = io.StringIO()
    old_stream = handler.setStream(stream)
    loggers = [logging.getLogger(), logging.getLogger("google_adk")]
    old_levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    yield stream
    handler.setStream(old_stream)
    for logger, level in zip(loggers, old_levels, strict=True):
        logger.setLevel(level)


def credential_requests():
    return Request.objects.filter(kind=Request.Kind.CREDENTIAL)


def credential_request(**where) -> Request:
    """The one credential request that matches `where`."""
    return credential_requests().get(**where)


def kinds(frames: list[dict]) -> list[str]:
    return [frame["event"]["kind"] for frame in frames]


def texts(frames: list[dict]) -> list[str]:
    return [f["event"]["text"] for f in frames if f["event"]["kind"] == "text"]


def test_the_tool_waits_for_a_credential(alice, asked, events_of, api_for):
    session, request = asked(alice)

    frames = events_of(alice, session)
    inbox = api_for(alice).get("/api/auth-requests/?status=pending").json()

    assert "auth_request" in kinds(frames)
    asked_event = next(
        f["event"]
        for f in frames
        if any(
            c["name"] == "adk_request_credential" for c in f["event"]["function_calls"]
        )
    )
    assert request.call_id in asked_event["long_running_tool_ids"]
    assert (request.status, request.tool_name, request.scheme, request.agent) == (
        "pending",
        "get_stock_quote",
        "apiKey",
        "quotes",
    )
    assert request.credential_key == "demo_quotes_api_key"
    assert [(r["id"], r["session"], r["call_id"], r["scheme"]) for r in inbox] == [
        (request.id, session, request.call_id, "apiKey")
    ]
    assert texts(frames) == []  # paused: the model is not asked to go on


def test_answered_the_tool_runs_with_the_key_and_the_key_shows_nowhere(
    alice, asked, answer, events_of, api_for, console_log
):
    session, request = asked(alice)
    before = events_of(alice, session)[-1]["seq"]

    answered = answer(alice, request.id, {"api_key": SECRET})

    assert answered.status_code == 200, answered.content
    assert answered.json()["status"] == "succeeded"
    assert answered.json()["invocation_id"] == request.invocation_id
    assert texts(events_of(alice, session, after=before)) == [QUOTED]
    request.refresh_from_db()
    assert (request.status, str(request.answer_run_id)) == (
        "answered",
        answered.json()["id"],
    )
    client = api_for(alice)
    outputs = [
        answered.content,
        client.get(f"/api/sessions/{session}/events/").content,
        client.get(f"/api/sessions/{session}/runs/").content,
        client.get("/api/auth-requests/").content,
        client.get("/api/credentials/").content,
        client.get("/api/tool-calls/").content,
    ]
    assert all(SECRET.encode() not in output for output in outputs)
    stored = [
        *Event.objects.filter(session_id=session).values_list("data", flat=True),
        *Run.objects.values("message", "text", "error"),
        *ToolCall.objects.values("args", "result_summary"),
        *Request.objects.values(),
        *Credential.objects.values(),
    ]
    assert SECRET not in json.dumps(stored, default=str)
    logged = console_log.getvalue()
    assert "rehydrated resume_inputs" in logged  # ADK's DEBUG line with the answer
    assert SECRET not in logged


def test_the_key_is_stored_sealed_for_its_owner(alice, asked, answer, api_for):
    _, request = asked(alice)

    answer(alice, request.id, {"api_key": SECRET})

    row = Credential.objects.get()
    assert (row.owner, row.key, row.auth_type, row.tool_name) == (
        alice,
        "demo_quotes_api_key",
        "apiKey",
        "get_stock_quote",
    )
    assert unseal(row.sealed).api_key == SECRET
    listed = api_for(alice).get("/api/credentials/").json()
    assert [(c["id"], c["key"], c["agent"]) for c in listed] == [
        (row.id, "demo_quotes_api_key", "quotes")
    ]
    assert "sealed" not in listed[0]


def test_a_later_session_reuses_the_key_without_asking(alice, asked, answer, quote):
    _, request = asked(alice)
    answer(alice, request.id, {"api_key": SECRET})

    answered = quote(alice)

    assert answered == ([QUOTED], False)
    assert credential_requests().count() == 1
    assert Credential.objects.get().last_used_at is not None


def test_a_revoked_key_is_asked_for_again(alice, asked, answer, quote, api_for):
    _, request = asked(alice)
    answer(alice, request.id, {"api_key": SECRET})
    row = Credential.objects.get()

    revoked = api_for(alice).delete(f"/api/credentials/{row.id}/")

    assert revoked.status_code == 204
    assert api_for(alice).get("/api/credentials/").json() == []
    assert quote(alice) == ([], True)


def test_a_key_sealed_under_another_secret_is_asked_for_again(
    alice, asked, answer, quote, settings
):
    _, request = asked(alice)
    answer(alice, request.id, {"api_key": SECRET})

    settings.TOOLCRIB_CREDENTIAL_KEY = "a-rotated-key"

    assert quote(alice) == ([], True)


def test_another_users_key_is_not_used(alice, bob, asked, answer, quote):
    _, request = asked(alice)
    answer(alice, request.id, {"api_key": SECRET})

    assert quote(bob) == ([], True)


def test_another_user_can_neither_answer_nor_see_nor_revoke(
    alice, bob, asked, answer, api_for, make_user
):
    session, request = asked(alice)
    staff = make_user("root", is_staff=True)

    refused = answer(bob, request.id, {"api_key": "bobs-key"})
    by_staff = answer(staff, request.id, {"api_key": "staff-key"})

    assert refused.status_code == 404
    assert by_staff.status_code == 404
    assert api_for(bob).get(f"/api/auth-requests/{request.id}/").status_code == 404
    assert api_for(bob).get("/api/auth-requests/").json() == []
    assert answer(bob, 999999, {"api_key": "x"}).status_code == 404
    answer(alice, request.id, {"api_key": SECRET})
    row = Credential.objects.get()
    assert api_for(bob).get("/api/credentials/").json() == []
    assert api_for(bob).delete(f"/api/credentials/{row.id}/").status_code == 404
    assert api_for(bob).delete("/api/credentials/abc/").status_code == 404
    assert Credential.objects.filter(pk=row.pk).exists()
    assert Run.objects.filter(session_id=session).count() == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "api_key"),
        ({"api_key": ""}, "api_key"),
        ({"token": SECRET}, "api_key"),
        ({"api_key": SECRET, "apikey": SECRET}, "apikey"),
        ({"api_key": "x" * 5000}, "api_key"),
    ],
)
def test_malformed_answers_are_refused(alice, asked, answer, body, field):
    _, request = asked(alice)

    refused = answer(alice, request.id, body)

    assert refused.status_code == 400
    assert field in refused.json()
    assert SECRET.encode() not in refused.content
    request.refresh_from_db()
    assert request.status == "pending"
    assert not Credential.objects.exists()


def test_a_request_is_answered_once(alice, asked, answer):
    session, request = asked(alice)

    first = answer(alice, request.id, {"api_key": SECRET})
    again = answer(alice, request.id, {"api_key": "another"})

    assert first.status_code == 200
    assert again.status_code == 400
    assert unseal(Credential.objects.get().sealed).api_key == SECRET
    assert Run.objects.filter(session_id=session).count() == 2


def test_an_unknown_status_filter_is_refused(alice, api_for):
    assert api_for(alice).get("/api/auth-requests/?status=maybe").status_code == 400


def test_the_answer_fields_follow_the_scheme():
    bearer = Request(
        kind=Request.Kind.CREDENTIAL,
        scheme="http",
        auth_config={"auth_scheme": {"type": "http", "scheme": "bearer"}},
    )
    basic = Request(
        kind=Request.Kind.CREDENTIAL,
        scheme="http",
        auth_config={"auth_scheme": {"type": "http", "scheme": "basic"}},
    )
    oauth = Request(kind=Request.Kind.CREDENTIAL, scheme="oauth2")

    token = build_credential(bearer, {"token": "t0k"})
    login = build_credential(basic, {"username": "ann", "password": "pw"})
    tokens = build_credential(oauth, {"access_token": "at", "refresh_token": "rt"})

    assert (token.auth_type, token.http.scheme) == (AuthCredentialTypes.HTTP, "bearer")
    assert token.http.credentials.token == "t0k"
    assert (login.http.credentials.username, login.http.credentials.password) == (
        "ann",
        "pw",
    )
    assert (tokens.oauth2.access_token, tokens.oauth2.refresh_token) == ("at", "rt")


def test_the_demo_quotes_agent_is_registered(demo_agents):
    assert "quotes" in demo_agents


async def test_the_owner_answers_over_the_socket_and_no_frame_shows_the_key(alice):
    session, request = await sync(_asked_now)(alice)
    socket = await open_socket(alice, session)
    await drain_backlog(socket)

    await socket.send_json_to(
        {
            "type": "credential",
            "call_id": request.call_id,
            "credential": {"api_key": SECRET},
        }
    )

    ack, frames = await ack_and_turn(socket)
    assert ack["run"]["id"]
    assert SECRET not in json.dumps(frames)
    assert QUOTED in texts([f for f in frames if f["seq"] is not None])
    await socket.disconnect()


async def test_the_socket_refuses_unknown_foreign_and_malformed_answers(alice, bob):
    session, request = await sync(_asked_now)(alice)
    other, _ = await sync(_asked_now)(bob)
    socket = await open_socket(bob, other)
    await drain_backlog(socket)

    async def send(frame: dict) -> dict:
        await socket.send_json_to(frame)
        return await socket.receive_json_from(timeout=TIMEOUT)

    malformed = await send(
        {"type": "credential", "call_id": "x", "credential": {"api_key": 12345678}}
    )
    unknown_field = await send(
        {"type": "credential", "call_id": "x", "credential": {"key": SECRET}}
    )
    unknown = await send(
        {"type": "credential", "call_id": "nope", "credential": {"api_key": "k"}}
    )
    foreign = await send(
        {
            "type": "credential",
            "call_id": request.call_id,
            "credential": {"api_key": "k"},
        }
    )
    missing = await send(
        {
            "type": "credential",
            "call_id": (await sync(_call_of)(other)),
            "credential": {"token": "k"},
        }
    )

    assert malformed["error"]["code"] == "bad_frame"
    assert "12345678" not in json.dumps(malformed)
    assert unknown_field["error"]["code"] == "bad_frame"
    assert SECRET not in json.dumps(unknown_field)
    assert unknown["error"]["code"] == "not_found"
    assert foreign["error"]["code"] == "not_found"
    assert missing["error"]["code"] == "missing_field"
    statuses = await sync(
        lambda: sorted(credential_requests().values_list("status", flat=True))
    )()
    assert statuses == ["pending", "pending"]
    assert not await Credential.objects.aexists()
    await socket.disconnect()


def _call_of(session: str) -> str:
    return credential_request(session_id=session).call_id


def _asked_now(user) -> tuple[str, Request]:
    """asked(), for async tests (fixtures that call the API are sync)."""
    from rest_framework.test import APIClient

    from agents.tokens import issue_token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user=user)}")
    session = client.post("/api/sessions/", {"agent": "quotes"}, format="json").json()[
        "id"
    ]
    said = client.post(
        f"/api/sessions/{session}/messages/?wait=1", {"text": ASK}, format="json"
    )
    assert said.json()["status"] == "waiting", said.content
    return session, credential_request(session_id=session)


async def test_the_credential_service_keeps_what_a_tool_saves_per_user(alice, bob):
    service = DjangoCredentialService()
    config = quotes_api()
    config.exchanged_auth_credential = AuthCredential(
        auth_type=AuthCredentialTypes.API_KEY, api_key=SECRET
    )

    await service.save_credential(config, _Caller(alice.pk))
    mine = await service.load_credential(quotes_api(), _Caller(alice.pk))
    theirs = await service.load_credential(quotes_api(), _Caller(bob.pk))

    assert mine.api_key == SECRET
    assert theirs is None
    row = await Credential.objects.aget()
    assert (row.owner_id, row.key, row.agent) == (
        alice.pk,
        config.credential_key,
        "quotes",
    )


class _Caller:
    """What ADK's credential service reads of a callback context."""

    agent_name = "quotes"

    def __init__(self, user_pk: int) -> None:
        self.user_id = str(user_pk)
        self.session = AdkSession(id="s1", app_name="quotes", user_id=self.user_id)
