"""Every malformed or hostile A2A request is the protocol's JSON-RPC error, never a
500, whatever shape the reporter sends (agents/a2a/)."""

# ruff: noqa: F811 (the fixtures of tests/agents/a2a/conftest.py, imported)

import json

import pytest

from agents.models import A2ATask, Run
from tests.agents.a2a.conftest import (  # noqa: F401
    a2a_client,
    adb,
    rpc,
    served,
    text_message,
    token_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


def message(**fields) -> dict:
    base = {
        "role": "user",
        "messageId": "m-1",
        "parts": [{"kind": "text", "text": "Add 2 and 3"}],
    }
    return {"message": {**base, **fields}}


def raw(method, params, **envelope) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params, **envelope}


INVALID_REQUEST = [
    {"jsonrpc": "1.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}},
    {"id": 1, "method": "tasks/get", "params": {"id": "x"}},
    {"jsonrpc": 2.0, "id": 1, "method": "tasks/get", "params": {"id": "x"}},
    {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tasks/get", "params": {"id": "x"}},
    {"jsonrpc": "2.0", "id": [1], "method": "tasks/get", "params": {"id": "x"}},
    {"jsonrpc": "2.0", "id": True, "method": "tasks/get", "params": {"id": "x"}},
    {"jsonrpc": "2.0", "id": 1, "method": 5, "params": {"id": "x"}},
    {"jsonrpc": "2.0", "id": 1, "method": None, "params": {"id": "x"}},
    {"jsonrpc": "2.0", "id": 1, "params": {"id": "x"}},
    {},
    [{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}],
    1,
    "tasks/get",
    True,
]

# a2a-sdk's own answer to params that are no object: -32600.
PARAMS_NOT_AN_OBJECT = [
    raw("tasks/get", []),
    raw("tasks/get", "x"),
    raw("tasks/get", 5),
    raw("message/stream", []),
]

BAD_PARAMS = [
    raw("message/send", None),
    raw("tasks/get", {}),
    raw("tasks/get", {"id": ["x"]}),
    raw("tasks/get", {"id": {"x": 1}}),
    raw("tasks/get", {"id": "x", "historyLength": "many"}),
    raw("tasks/cancel", {"id": None}),
    raw("tasks/resubscribe", {}),
    raw("message/send", {"message": "hi"}),
    raw("message/send", {"message": None}),
    raw("message/send", message(parts="hi")),
    raw("message/send", message(parts=[])),
    raw("message/send", message(parts=[{"kind": "text"}])),
    raw("message/send", message(parts=[{"kind": "text", "text": 5}])),
    raw("message/send", message(parts=[{"kind": "video", "text": "x"}])),
    raw("message/send", message(parts=[{"kind": "text", "text": ""}])),
    raw("message/send", message(parts=[{"kind": "text", "text": "a\u0000b"}])),
    raw("message/send", message(parts=[{"kind": "text", "text": "\ud800"}])),
    raw("message/send", message(role="robot")),
    raw("message/send", message(messageId=None)),
    raw("message/send", message(contextId=5)),
    raw("message/send", message(contextId=["x"])),
    raw("message/send", message(taskId={"a": 1})),
    raw("message/send", {**message(), "configuration": {"blocking": "yes please"}}),
    raw("message/send", {**message(), "configuration": {"historyLength": "x"}}),
    raw("message/send", {**message(), "configuration": "fast"}),
    raw("message/send", {**message(), "metadata": "x"}),
    raw("message/stream", message(parts="hi")),
    raw("message/stream", {}),
]

UNKNOWN_CONTEXT = [
    message(contextId="nope"),
    message(contextId="x" * 5000),
    message(contextId="a\u0000b"),
    message(contextId="\ud800"),
    message(contextId="../../etc"),
    message(contextId="00000000-0000-0000-0000-000000000000"),
]

UNKNOWN_TASK = [
    {"id": "nope"},
    {"id": "x" * 5000},
    {"id": "a\u0000b"},
    {"id": "\ud800"},
    {"id": "00000000-0000-0000-0000-000000000000"},
    {"id": 5},
]


@pytest.fixture
async def alice_client(served, a2a_client, alice, token_of):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        yield client


async def send(client, body):
    """POST a JSON value as JSON's text (lone surrogates escaped, as any client's)."""
    return await client.post(
        "/a2a/calculator/",
        content=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )


def codes(response) -> list[int]:
    assert response.status_code < 500, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        frames = [
            json.loads(line[5:])
            for line in response.text.splitlines()
            if line.startswith("data:")
        ]
        return [frame["error"]["code"] for frame in frames if "error" in frame]
    body = response.json()
    return [body["error"]["code"]] if "error" in body else []


@pytest.mark.parametrize("body", INVALID_REQUEST)
async def test_not_a_json_rpc_request_is_an_invalid_request(alice_client, body):
    response = await send(alice_client, body)
    assert codes(response) == [-32600], response.text
    assert await adb(Run.objects.count) == 0


@pytest.mark.parametrize("body", PARAMS_NOT_AN_OBJECT)
async def test_params_that_are_no_object_are_an_invalid_request(alice_client, body):
    response = await send(alice_client, body)
    assert codes(response) == [-32600], response.text
    assert await adb(Run.objects.count) == 0


@pytest.mark.parametrize("body", BAD_PARAMS)
async def test_params_of_the_wrong_shape_are_invalid_params(alice_client, body):
    response = await send(alice_client, body)
    assert codes(response) == [-32602], response.text
    assert await adb(Run.objects.count) == 0


@pytest.mark.parametrize("params", UNKNOWN_CONTEXT)
async def test_an_unknown_context_is_refused(alice_client, params):
    response = await send(alice_client, rpc("message/send", params))
    assert codes(response) == [-32602], response.text
    assert await adb(Run.objects.count) == 0


@pytest.mark.parametrize("method", ["tasks/get", "tasks/cancel", "tasks/resubscribe"])
@pytest.mark.parametrize("params", UNKNOWN_TASK)
async def test_an_unknown_task_is_task_not_found(alice_client, method, params):
    response = await send(alice_client, rpc(method, params))
    assert codes(response) in ([-32001], [-32602]), response.text


@pytest.mark.parametrize("params", UNKNOWN_TASK[:-1])
async def test_a_message_naming_an_unknown_task_is_task_not_found(alice_client, params):
    response = await send(
        alice_client, rpc("message/send", message(taskId=params["id"]))
    )
    # An id no task could have (a NUL, a lone surrogate) is a bad parameter.
    assert codes(response) in ([-32001], [-32602]), response.text
    assert await adb(A2ATask.objects.count) == 0


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\xff\xfe{}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": '
        + b'{"metadata": '
        + b'{"a": ' * 5000
        + b"1"
        + b"}" * 5000
        + b"}}",
        b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": '
        + b'{"metadata": '
        + b"[" * 500
        + b"]" * 500
        + b"}}",
        b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x", "historyLength": 1'
        + b"0" * 5000
        + b"}}",
    ],
)
async def test_bodies_that_are_not_json_are_parse_errors(alice_client, body):
    response = await alice_client.post(
        "/a2a/calculator/", content=body, headers={"Content-Type": "application/json"}
    )
    assert codes(response) in ([-32700], [-32600], [-32602]), response.text
