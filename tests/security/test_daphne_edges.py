"""What a live Daphne answers to input an attacker shapes, before and at the app.

One server for the module (tests/toolsets/gateway/conftest.py: Daphne on a migrated
SQLite file with the demo users and catalog), spoken to over real HTTP, MCP and
websockets.
"""

import asyncio
import json

import httpx
import pytest
import websockets
from mcp import types

from tests.toolsets.gateway import conftest as live

gateway_settings, gateway_env, gateway, api = (
    live.gateway_settings,
    live.gateway_env,
    live.gateway,
    live.api,
)

PROTOCOL = "2025-06-18"
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    },
}


@pytest.fixture(scope="module")
def mcp(gateway, api) -> httpx.Client:
    """An initialized MCP session of alice's, over plain HTTP."""
    client = httpx.Client(
        base_url=gateway.url,
        headers={
            "Authorization": f"Bearer {api('alice').token}",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
        },
        timeout=30,
    )
    opened = client.post("/mcp", content=json.dumps(INITIALIZE))
    client.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    client.headers["Mcp-Protocol-Version"] = PROTOCOL
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post("/mcp", content=json.dumps(initialized)).status_code == 202
    yield client
    client.close()


OUT_OF_RANGE = {
    "1e400": "1e400",
    "-1e400": "-1e400",
    "NaN": "NaN",
    "Infinity": "Infinity",
    "4,301 digits": "9" * 4301,
}


@pytest.mark.parametrize("number", OUT_OF_RANGE.values(), ids=OUT_OF_RANGE)
def test_an_mcp_call_with_a_number_out_of_range_is_a_parse_error(mcp, api, number):
    body = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
        '"math.calculate", "arguments": {"expression": ' + number + "}}}"
    )

    answer = mcp.post("/mcp", content=body)

    assert answer.status_code == 400, answer.text[:300]
    refusal = answer.json()
    assert refusal["error"]["code"] == types.PARSE_ERROR
    assert refusal["error"]["message"].startswith("Parse error: ")
    assert api("admin").calls(tool="math.calculate") == []


def test_the_mcp_session_goes_on_after_a_parse_error(mcp):
    mcp.post("/mcp", content='{"jsonrpc": "2.0", "id": 8, "method": "x", "a": 1e400}')

    listed = mcp.post(
        "/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    )

    assert listed.status_code == 200
    assert "math.calculate" in listed.text


# A malformed multipart body: before, Twisted (under Daphne) answered every POST
# that said multipart/form-data and could not be parsed with a bare 400, no body.
MALFORMED = {
    "no boundary": ("multipart/form-data", b"garbage"),
    "a boundary never sent": ("multipart/form-data; boundary=XX", b"no boundary here"),
    "a boundary in an unknown charset": (
        "multipart/form-data; boundary*=bogus''XX",
        b"--XX\r\n\r\n--XX--\r\n",
    ),
}


@pytest.fixture(scope="module")
def operations(gateway, api) -> list[tuple[str, dict]]:
    """Every POST operation of the schema the server serves, as (path, operation),
    its path pointing at a session of admin's where it names one."""
    admin = api("admin").client
    schema = admin.get("/api/schema/", params={"format": "json"}).json()
    session = admin.post("/api/sessions/", json={"agent": "calculator"}).json()["id"]
    return [
        (
            path.replace("{id}", session)
            if path.startswith("/api/sessions/")
            else path,
            op,
        )
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method == "post"
    ]


def is_json_object(answer: httpx.Response) -> bool:
    return answer.headers.get("content-type") == "application/json" and isinstance(
        answer.json(), dict
    )


@pytest.mark.parametrize("content_type, body", MALFORMED.values(), ids=MALFORMED)
def test_a_malformed_multipart_body_gets_json_on_every_post(
    gateway, api, operations, content_type, body
):
    admin = api("admin").client
    bodies = {path for path, op in operations if "requestBody" in op}

    answers = {
        path: admin.post(
            path.replace("{", "").replace("}", ""),
            content=body,
            headers={"Content-Type": content_type},
        )
        for path, _ in operations
    }

    assert len(answers) >= 17
    # An operation that reads no body (close/, memory/) may well succeed.
    assert [p for p, a in answers.items() if a.status_code >= 500] == []
    assert {p: a.status_code // 100 for p, a in answers.items() if p in bodies} == {
        p: 4 for p in answers if p in bodies
    }
    assert [p for p, a in answers.items() if not is_json_object(a)] == []


def test_a_multipart_body_without_a_boundary_is_a_400_with_why(
    gateway, api, operations
):
    admin = api("admin").client
    takes_multipart = [
        path
        for path, op in operations
        if "multipart/form-data" in op.get("requestBody", {}).get("content", {})
        and "{" not in path
    ]

    answers = {
        path: admin.post(
            path, content=b"x", headers={"Content-Type": "multipart/form-data"}
        )
        for path in takes_multipart
    }
    anonymous = httpx.post(
        f"{gateway.url}/api/auth/token/",
        content=b"x",
        headers={"Content-Type": "multipart/form-data"},
    )

    assert len(answers) >= 9
    assert {p: a.status_code for p, a in answers.items()} == {p: 400 for p in answers}
    assert all(
        "Multipart form parse error" in a.json()["detail"] for a in answers.values()
    )
    assert anonymous.status_code == 400
    assert "Multipart form parse error" in anonymous.json()["detail"]


def test_a_header_parameter_in_an_unknown_charset_is_a_400_in_json(gateway, api):
    answer = api("alice").client.get(
        "/api/agents/", headers={"Content-Type": "text/plain; a*=bogus''x"}
    )

    assert answer.status_code == 400
    assert answer.json() == {
        "detail": "Bad request: Invalid encoding 'bogus' for RFC 2231 param."
    }


def test_a_body_past_djangos_limit_is_a_400_that_says_so(gateway, api):
    big = b'--XX\r\nContent-Disposition: form-data; name="agent"\r\n\r\n'
    big += b"x" * 3_000_000 + b"\r\n--XX--\r\n"

    answer = api("alice").client.post(
        "/api/sessions/",
        content=big,
        headers={"Content-Type": "multipart/form-data; boundary=XX"},
    )

    assert answer.status_code == 400
    assert answer.json() == {"detail": "The request body is too large."}


# A websocket message too big to read: before, Daphne (autobahn) dropped the TCP
# connection without a close frame, and the client could not tell why.
MESSAGE_LIMIT = 1048576  # TOOLCRIB_WS_MAX_MESSAGE_BYTES, its default
FRAME_LIMIT = 65536  # TOOLCRIB_WS_MAX_FRAME_BYTES, its default


@pytest.fixture
def socket_url(gateway, api) -> tuple[str, dict[str, str]]:
    """A new session's stream URL, and the header that signs alice in."""
    alice = api("alice")
    session = alice.client.post("/api/sessions/", json={"agent": "calculator"})
    url = f"{gateway.ws_url}/ws/sessions/{session.json()['id']}/"
    return url, {"Authorization": f"Token {alice.token}"}


def message_of(size: int) -> str:
    """A message frame of exactly `size` bytes."""
    frame = '{"type": "message", "text": ""}'
    return frame.replace('""', '"' + "x" * (size - len(frame)) + '"')


@pytest.mark.parametrize("size", [16 * 1024 * 1024, MESSAGE_LIMIT + 1])
async def test_a_message_past_the_limit_closes_the_socket_with_1009(socket_url, size):
    url, headers = socket_url
    async with websockets.connect(url, additional_headers=headers) as socket:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            # The close may come while the client still sends: send raises then.
            await socket.send(message_of(size))
            await asyncio.wait_for(socket.recv(), 10)

    assert closed.value.rcvd is not None, "the socket ended without a close frame"
    assert closed.value.rcvd.code == 1009
    assert closed.value.rcvd.reason == (
        f"received WebSocket message size {size} exceeds payload limit of "
        f"{MESSAGE_LIMIT} octets"
    )


async def refused_and_still_open(socket, raw: str) -> dict:
    await socket.send(raw)
    error = json.loads(await asyncio.wait_for(socket.recv(), 10))
    await socket.send('{"type": "ping"}')
    assert json.loads(await asyncio.wait_for(socket.recv(), 10)) == {"type": "pong"}
    return error


async def test_frames_under_the_limit_get_error_frames_and_the_socket_stays(
    socket_url,
):
    url, headers = socket_url
    async with websockets.connect(
        url, additional_headers=headers, max_size=None
    ) as socket:
        just_under = await refused_and_still_open(socket, message_of(MESSAGE_LIMIT))
        too_big = await refused_and_still_open(socket, message_of(FRAME_LIMIT + 1))
        not_json = await refused_and_still_open(socket, "{" * (FRAME_LIMIT - 1))

    assert just_under["error"]["code"] == "too_big"
    assert too_big["error"]["code"] == "too_big"
    assert f"at most {FRAME_LIMIT} bytes" in too_big["error"]["message"]
    assert not_json["error"]["code"] == "bad_json"
