"""What a client sends, on REST and the socket alike (issue 14: 4, 6, 9).

One rule for every text that will be stored: lone surrogates ("\\ud800", half of a
UTF-16 pair, which no UTF-8 encoder accepts) and NUL are refused with a 400 and
field errors, or an error frame with the socket kept open, and nothing is stored.
JSON nested deeper than TOOLCRIB_MAX_JSON_DEPTH is refused the same way. Rows
stored before the rule existed still read, with U+FFFD for what cannot be encoded.
"""

import json

import pytest
from asgiref.sync import sync_to_async as sync
from channels.testing import WebsocketCommunicator
from django.db import connection
from rest_framework.test import APIClient

from agents.adk.builder import sync_code_agents
from agents.models import Event, Request, Run, Session
from project.asgi import application
from toolsets.models import Tool, Toolset

pytestmark = pytest.mark.django_db(transaction=True)

# Rows written as the code before the rule let in: only SQLite ever stored them
# (PostgreSQL's json refuses a lone surrogate and a NUL, and so do these writes).
stored_before_the_rule = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="PostgreSQL never stored such rows"
)

TIMEOUT = 10
SURROGATE = "\ud800"
NUL = "\x00"
# 1,000 levels in 2 KB: enough to blow Python's recursion limit while parsing.
DEEP_ARRAY = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000
REPLACEMENT = "\ufffd"


@pytest.fixture
def agents(db, settings):
    settings.TOOLCRIB_AGENTS = [
        *settings.TOOLCRIB_AGENTS,
        "tests.agents.test_long_running.exporter",
    ]
    return {spec.name: spec for spec in sync_code_agents()}


@pytest.fixture
def staff(make_user):
    return make_user("root", is_staff=True)


@pytest.fixture
def tool(db) -> Tool:
    toolset = Toolset.objects.create(name="x")
    return Tool.objects.create(toolset=toolset, name="y", full_name="x.y")


@pytest.fixture
def pending(agents, start_session, say):
    """A session of alice's exporter whose turn left one long-running call waiting."""

    def make(user) -> tuple[str, str]:
        session = start_session(user, "exporter")
        assert say(user, session, "export sales")["status"] == "waiting"
        return session, Request.objects.get(
            kind=Request.Kind.CALL, session_id=session
        ).call_id

    return make


def send_raw(client: APIClient, method: str, path: str, body: str):
    """Send a JSON body as written, the way an attacker's client does.

    json.dumps escapes a lone surrogate as the six characters \\ud800, which is
    valid JSON; APIClient's own encoder cannot write one at all.
    """
    return client.generic(method.upper(), path, body, content_type="application/json")


def token_of(user) -> str:
    """A token through the API's own contract (the make_user password is "pw")."""
    response = APIClient().post(
        "/api/auth/token/", {"username": user.username, "password": "pw"}
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


async def open_socket(user, session: str) -> WebsocketCommunicator:
    token = await sync(token_of)(user)
    socket = WebsocketCommunicator(
        application,
        f"/ws/sessions/{session}/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    assert (await socket.connect(timeout=TIMEOUT))[0]
    return socket


async def read_backlog(socket: WebsocketCommunicator) -> list[dict]:
    """Every frame the server sends on connect, up to the end of the last turn."""
    frames = []
    while True:
        frame = await socket.receive_json_from(timeout=TIMEOUT)
        frames.append(frame)
        if frame["type"] == "event" and frame["event"]["kind"] == "run_finished":
            return frames


async def refused_and_still_open(socket: WebsocketCommunicator, raw: str) -> dict:
    """Send one raw frame; return its error, after checking the socket still pongs."""
    await socket.send_to(text_data=raw)
    error = await socket.receive_json_from(timeout=TIMEOUT)
    await socket.send_json_to({"type": "ping"})
    assert await socket.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    return error


def stored_counts(session: str) -> tuple[int, int, list]:
    """Runs, events and call answers of a session: what an accepted input adds."""
    return (
        Run.objects.filter(session_id=session).count(),
        Event.objects.filter(session_id=session).count(),
        list(
            Request.objects.filter(
                kind=Request.Kind.CALL, session_id=session
            ).values_list("status")
        ),
    )


def reads_fine(client: APIClient, session: str) -> None:
    for path in ["events/", "runs/", "calls/"]:
        response = client.get(f"/api/sessions/{session}/{path}")
        assert response.status_code == 200, (path, response.content[:200])
    assert client.get("/api/calls/").status_code == 200


# 4. Lone surrogates and NUL in what will be stored

BAD_RESPONSES = {
    "surrogate value": {"note": SURROGATE},
    "NUL value": {"note": f"ok{NUL}"},
    "surrogate key": {SURROGATE: "ok"},
    "NUL deep inside": {"rows": [{"cells": ["a", {"b": NUL}]}]},
}


@pytest.mark.parametrize("response", BAD_RESPONSES.values(), ids=BAD_RESPONSES)
def test_a_bad_text_in_a_rest_answer_is_refused_and_nothing_is_stored(
    alice, pending, api_for, response
):
    session, call_id = pending(alice)
    before = stored_counts(session)
    client = api_for(alice)

    refused = send_raw(
        client,
        "post",
        f"/api/sessions/{session}/function-responses/?wait=1",
        json.dumps({"call_id": call_id, "response": response}),
    )

    assert refused.status_code == 400, refused.content[:300]
    assert list(refused.json()) == ["response"]
    assert stored_counts(session) == before
    reads_fine(client, session)


@pytest.mark.parametrize("response", BAD_RESPONSES.values(), ids=BAD_RESPONSES)
async def test_a_bad_text_in_a_socket_answer_is_refused_and_nothing_is_stored(
    alice, pending, api_for, response
):
    session, call_id = await sync(pending)(alice)
    before = await sync(stored_counts)(session)
    socket = await open_socket(alice, session)
    await read_backlog(socket)

    error = await refused_and_still_open(
        socket,
        json.dumps(
            {"type": "function_response", "call_id": call_id, "response": response}
        ),
    )

    assert error["type"] == "error" and error["error"]["code"] == "bad_frame"
    assert error["error"]["message"].startswith("response")
    assert await sync(stored_counts)(session) == before
    await socket.disconnect()
    await sync(reads_fine)(await sync(api_for)(alice), session)


@pytest.mark.parametrize("text", [f"hi{NUL}there", f"hi{SURROGATE}"])
async def test_a_message_with_a_bad_text_is_refused_alike_on_both_edges(
    alice, pending, api_for, text
):
    session, _ = await sync(pending)(alice)
    before = await sync(stored_counts)(session)
    client = await sync(api_for)(alice)
    socket = await open_socket(alice, session)
    await read_backlog(socket)

    error = await refused_and_still_open(
        socket, json.dumps({"type": "message", "text": text})
    )
    refused = await sync(send_raw)(
        client,
        "post",
        f"/api/sessions/{session}/messages/",
        json.dumps({"text": text}),
    )

    assert error["error"]["code"] == "bad_frame"
    assert error["error"]["message"].startswith("text")
    assert refused.status_code == 400 and list(refused.json()) == ["text"]
    assert await sync(stored_counts)(session) == before
    await socket.disconnect()


FRAMES_WITH_TEXT = {
    "credential": lambda bad: {
        "type": "credential",
        "call_id": "adk-1",
        "credential": {"api_key": bad},
    },
    "call-id": lambda bad: {
        "type": "function_response",
        "call_id": f"adk-{bad}",
        "response": {},
    },
}


@pytest.mark.parametrize("make", FRAMES_WITH_TEXT.values(), ids=FRAMES_WITH_TEXT)
async def test_every_frame_that_stores_text_follows_the_rule(alice, pending, make):
    session, _ = await sync(pending)(alice)
    socket = await open_socket(alice, session)
    await read_backlog(socket)

    errors = [
        await refused_and_still_open(socket, json.dumps(make(bad)))
        for bad in (NUL, SURROGATE)
    ]

    assert [error["error"]["code"] for error in errors] == ["bad_frame"] * 2
    assert all(SURROGATE not in error["error"]["message"] for error in errors)
    await socket.disconnect()


def rest_attacks(session: str, call_id: str) -> list[tuple[str, str, str, dict]]:
    """(who, method, path, body): a bad text in each JSON input that is stored."""
    return [
        ("alice", "post", "/api/sessions/", {"agent": f"exporter{NUL}"}),
        ("alice", "post", "/api/auth-requests/1/answer/", {"api_key": SURROGATE}),
        ("root", "patch", "/api/agents/exporter/", {"toolsets": [SURROGATE]}),
        ("root", "post", "/api/agents/", {"name": "a", "toolsets": [f"x{NUL}"]}),
        ("root", "patch", "/api/tools/x.y/", {"policy": {SURROGATE: 1}}),
        ("root", "post", "/api/grants/", {"user": SURROGATE, "effect": "allow"}),
        (
            "root",
            "post",
            "/api/imports/",
            {
                "kind": "mcp",
                "name": "m",
                "url": "https://mcp.example/mcp",
                "headers": {f"X-{SURROGATE}": "v"},
            },
        ),
        (
            "root",
            "post",
            "/api/imports/",
            {"kind": "openapi", "name": "o", "spec": f"openapi: 3.0.0{NUL}"},
        ),
        (
            "alice",
            "post",
            f"/api/sessions/{session}/function-responses/",
            {"call_id": call_id, "response": {"ok": [SURROGATE]}},
        ),
    ]


def test_every_json_input_follows_the_one_rule(alice, staff, pending, tool, api_for):
    session, call_id = pending(alice)
    before = stored_counts(session)
    users = {"alice": alice, "root": staff}

    answers = [
        (path, send_raw(api_for(users[who]), method, path, json.dumps(body)))
        for who, method, path, body in rest_attacks(session, call_id)
    ]

    assert [(path, r.status_code) for path, r in answers] == [
        (path, 400) for path, _ in answers
    ]
    assert all(isinstance(r.json(), dict) for _, r in answers)
    assert stored_counts(session) == before
    assert Session.objects.filter(owner=alice).count() == 1


@stored_before_the_rule
def test_a_session_poisoned_before_the_rule_still_reads(alice, pending, api_for):
    session, call_id = pending(alice)
    poison_rows(session)
    client = api_for(alice)

    events = client.get(f"/api/sessions/{session}/events/")
    runs = client.get(f"/api/sessions/{session}/runs/")
    calls = client.get(f"/api/sessions/{session}/calls/")
    inbox = client.get("/api/calls/")

    assert [r.status_code for r in (events, runs, calls, inbox)] == [200] * 4
    message = next(f for f in events.json() if f["event"]["kind"] == "user_message")
    assert message["event"]["text"] == f"export {REPLACEMENT} sales{NUL}"
    assert runs.json()[0]["text"] == f"export{NUL}"
    assert runs.json()[0]["message"] == {"parts": [{"text": f"a{REPLACEMENT}"}]}
    assert calls.json()[0]["response"] == {REPLACEMENT: [f"a{REPLACEMENT}"]}


@stored_before_the_rule
async def test_a_poisoned_session_still_replays_on_the_socket(alice, pending):
    session, _ = await sync(pending)(alice)
    await sync(poison_rows)(session)
    socket = await open_socket(alice, session)

    frames = await read_backlog(socket)

    message = next(f for f in frames if f["event"]["kind"] == "user_message")
    assert message["event"]["text"] == f"export {REPLACEMENT} sales{NUL}"
    await socket.send_json_to({"type": "ping"})
    assert await socket.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    await socket.disconnect()


@stored_before_the_rule
def test_a_poisoned_session_is_still_found_and_its_snippet_shown(
    alice, pending, api_for
):
    session, _ = pending(alice)
    poison_rows(session)

    response = api_for(alice).get("/api/sessions/", {"search": "sales"})

    assert response.status_code == 200, response.content
    (hit,) = response.json()["results"]
    assert hit["id"] == session
    shown = "".join(part["text"] for part in hit["snippet"])
    assert shown.startswith("export ") and "sales" in shown
    assert REPLACEMENT in shown


def poison_rows(session: str) -> None:
    """Write bad text straight into the rows, as the code before the rule let in."""
    row = Event.objects.get(session_id=session, kind="user_message")
    row.data["content"]["parts"][0]["text"] = f"export {SURROGATE} sales{NUL}"
    row.save(update_fields=["data"])
    # A run's answer to a call is stored as ADK content (JSON), its text as text.
    Run.objects.filter(session_id=session).update(
        text=f"export{NUL}", message={"parts": [{"text": f"a{SURROGATE}"}]}
    )
    Request.objects.filter(kind=Request.Kind.CALL, session_id=session).update(
        response={SURROGATE: [f"a{SURROGATE}"]}
    )


# 6. Deeply nested JSON


@pytest.mark.parametrize("body", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
def test_deeply_nested_json_is_refused_with_400_everywhere(
    alice, staff, pending, tool, api_for, body
):
    session, call_id = pending(alice)
    before = stored_counts(session)
    signed_in = [
        (alice, "post", "/api/sessions/"),
        (alice, "post", f"/api/sessions/{session}/messages/"),
        (alice, "post", f"/api/sessions/{session}/function-responses/"),
        (alice, "post", "/api/approvals/1/decide/"),
        (alice, "post", "/api/auth-requests/1/answer/"),
        (alice, "patch", f"/api/sessions/{session}/toolsets/x/"),
        (staff, "post", "/api/agents/"),
        (staff, "post", "/api/grants/"),
        (staff, "post", "/api/imports/"),
        (staff, "patch", "/api/tools/x.y/"),
    ]

    answers = [
        (path, send_raw(api_for(user), method, path, body).status_code)
        for user, method, path in signed_in
    ]
    anonymous = send_raw(APIClient(), "post", "/api/auth/token/", body)

    assert answers == [(path, 400) for _, _, path in signed_in]
    assert anonymous.status_code == 400
    assert "deep" in anonymous.json()["detail"]
    assert stored_counts(session) == before


def nested(levels: int) -> dict:
    """`levels` objects, one inside the other."""
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_json_just_past_the_depth_limit_is_refused(alice, pending, api_for, settings):
    settings.TOOLCRIB_MAX_JSON_DEPTH = 8
    session, call_id = pending(alice)
    path = f"/api/sessions/{session}/function-responses/"

    # The body is the first level, the response the second.
    at_limit = json.dumps({"call_id": "adk-none", "response": nested(7)})
    past_limit = json.dumps({"call_id": "adk-none", "response": nested(8)})
    fine = send_raw(api_for(alice), "post", path, at_limit)
    refused = send_raw(api_for(alice), "post", path, past_limit)

    assert fine.status_code == 400 and list(fine.json()) == ["call_id"]
    assert refused.status_code == 400 and "deep" in refused.json()["detail"]


def bury(levels: int) -> dict:
    """A bad text under `levels` objects, as the code before the bound stored it."""
    return {"note": SURROGATE} if levels == 1 else {"a": bury(levels - 1)}


@stored_before_the_rule
def test_a_deep_row_stored_before_the_bound_still_reads(alice, pending, api_for):
    session, call_id = pending(alice)
    deep = bury(300)
    row = Event.objects.get(session_id=session, kind="function_call")
    row.data["content"]["parts"][0]["function_call"]["args"] = deep
    row.save(update_fields=["data"])
    Request.objects.filter(kind=Request.Kind.CALL, session_id=session).update(
        response=deep
    )
    client = api_for(alice)

    events = client.get(f"/api/sessions/{session}/events/")

    assert events.status_code == 200
    frames = events.json()
    assert [f["seq"] for f in frames] == list(range(1, len(frames) + 1))
    call = next(f["event"] for f in frames if f["event"]["kind"] == "function_call")
    assert call["function_calls"] == [
        {"id": call_id, "name": "start_export", "args": {}}
    ]
    reads_fine(client, session)


@pytest.mark.parametrize("body", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
async def test_deeply_nested_json_on_the_socket_gets_bad_json_and_stays_open(
    alice, pending, body
):
    session, _ = await sync(pending)(alice)
    before = await sync(stored_counts)(session)
    socket = await open_socket(alice, session)
    await read_backlog(socket)

    error = await refused_and_still_open(socket, body)
    deep_answer = await refused_and_still_open(
        socket,
        '{"type": "function_response", "call_id": "x", "response": '
        + DEEP_OBJECT
        + "}",
    )

    assert error["error"]["code"] == "bad_json"
    assert deep_answer["error"]["code"] == "bad_json"
    assert await sync(stored_counts)(session) == before
    await socket.disconnect()


# 9. Oversized frames and NUL on the socket


async def test_an_oversized_frame_gets_an_error_and_the_socket_stays_open(
    alice, pending, settings
):
    settings.TOOLCRIB_WS_MAX_FRAME_BYTES = 100
    session, _ = await sync(pending)(alice)
    before = await sync(stored_counts)(session)
    socket = await open_socket(alice, session)
    await read_backlog(socket)

    error = await refused_and_still_open(
        socket, json.dumps({"type": "message", "text": "x" * 200})
    )

    assert error["error"]["code"] == "too_big"
    assert "100" in error["error"]["message"]
    assert await sync(stored_counts)(session) == before
    await socket.disconnect()


async def test_a_nul_in_a_socket_message_is_refused_like_on_rest(alice, pending):
    session, _ = await sync(pending)(alice)
    before = await sync(stored_counts)(session)
    socket = await open_socket(alice, session)
    await read_backlog(socket)

    error = await refused_and_still_open(
        socket, json.dumps({"type": "message", "text": "hello\u0000"})
    )

    assert error["error"]["code"] == "bad_frame"
    assert await sync(stored_counts)(session) == before
    await socket.disconnect()


@stored_before_the_rule
def test_a_session_poisoned_before_the_rule_is_remembered_and_goes_on(
    alice, pending, api_for
):
    session, call_id = pending(alice)
    poison_rows(session)
    client = api_for(alice)
    client.post(
        f"/api/sessions/{session}/function-responses/",
        {"call_id": call_id, "response": {"status": "done"}},
        format="json",
    )

    turn = client.post(
        f"/api/sessions/{session}/messages/?wait=1", {"text": "hello"}, format="json"
    )
    remembered = client.post(f"/api/sessions/{session}/memory/")

    assert turn.status_code == 200
    # It ran: the exporter's script starts another export, and waits for it.
    assert turn.json()["status"] == "waiting"
    assert remembered.status_code == 200
    assert remembered.json()["remembered"] >= 1
