"""The A2A edge refuses with the protocol's errors, never a 500, and never shows a
principal another's task, context or words (agents/a2a/)."""

# ruff: noqa: F811 (the fixtures of tests/agents/a2a/conftest.py, imported)

import json

import pytest
from rest_framework.test import APIClient

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

SECRET_WORDS = "Add 2 and 3"


@pytest.fixture
async def alices_task(served, a2a_client, alice, token_of):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        response = await client.post(
            "/a2a/calculator/", json=rpc("message/send", text_message(SECRET_WORDS))
        )
    return response.json()["result"]


def error_of(response) -> dict:
    """The JSON-RPC error of a response, or of a stream's only event."""
    if response.headers["content-type"].startswith("text/event-stream"):
        frames = [
            json.loads(line[5:])
            for line in response.text.splitlines()
            if line.startswith("data:")
        ]
        assert len(frames) == 1, frames
        return frames[0]["error"]
    return response.json()["error"]


async def post(client, body, agent: str = "calculator"):
    if isinstance(body, bytes):
        return await client.post(
            f"/a2a/{agent}/",
            content=body,
            headers={"Content-Type": "application/json"},
        )
    return await client.post(f"/a2a/{agent}/", json=body)


async def test_no_token_or_a_wrong_one_is_401_with_a_json_rpc_error(served, a2a_client):
    await adb(served, "calculator")
    for token in (None, "not-a-token"):
        async with a2a_client(token) as client:
            response = await post(client, rpc("tasks/get", {"id": "x"}))
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"]["code"] == -32600


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": 1e400}}',
            -32700,
        ),
        (b"[]", -32600),
        (b'"a string"', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/steal", "params": {}}', -32601),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "nope"}}',
            -32001,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/get", "params": {"id": "x"}}',
            -32003,
        ),
    ],
)
async def test_malformed_or_unknown_requests_get_the_protocols_error(
    served,
    a2a_client,
    alice,
    token_of,
    body,
    code,
):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        response = await post(client, body)
    assert response.status_code == 200, response.text
    assert response.json()["error"]["code"] == code


async def test_a_file_part_is_refused_as_an_unsupported_content_type(
    served,
    a2a_client,
    alice,
    token_of,
):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    message = text_message("x")
    message["message"]["parts"] = [
        {"kind": "file", "file": {"uri": "file:///etc/passwd"}}
    ]
    async with a2a_client(token) as client:
        response = await post(client, rpc("message/send", message))
    assert response.json()["error"]["code"] == -32005
    assert await adb(Run.objects.count) == 0


@pytest.mark.parametrize("method", ["tasks/get", "tasks/cancel", "tasks/resubscribe"])
async def test_another_principals_task_is_unknown_even_to_staff(
    alices_task,
    a2a_client,
    bob,
    make_user,
    token_of,
    method,
):
    admin = await adb(make_user, "root", is_staff=True)
    for user in (bob, admin):
        token = await adb(token_of, user)
        async with a2a_client(token) as client:
            response = await post(client, rpc(method, {"id": alices_task["id"]}))
        assert error_of(response)["code"] == -32001, response.text
        assert SECRET_WORDS not in response.text
        assert alices_task["contextId"] not in response.text
    run = await adb(Run.objects.get, session_id=alices_task["contextId"])
    assert run.status == Run.Status.SUCCEEDED


async def test_another_principals_context_takes_no_message(
    alices_task,
    a2a_client,
    bob,
    token_of,
):
    token = await adb(token_of, bob)
    message = text_message("Add 1 and 1", contextId=alices_task["contextId"])
    async with a2a_client(token) as client:
        response = await post(client, rpc("message/send", message))
    assert response.json()["error"]["code"] == -32602
    assert SECRET_WORDS not in response.text
    runs = await adb(Run.objects.filter(session_id=alices_task["contextId"]).count)
    assert runs == 1


async def test_a_message_naming_another_principals_task_is_unknown(
    alices_task,
    a2a_client,
    bob,
    token_of,
):
    token = await adb(token_of, bob)
    message = text_message("Add 1 and 1", taskId=alices_task["id"])
    async with a2a_client(token) as client:
        response = await post(client, rpc("message/send", message))
    assert response.json()["error"]["code"] == -32001
    assert await adb(A2ATask.objects.count) == 1


async def test_an_agent_not_served_over_a2a_is_not_found(
    demo_agents,
    a2a_client,
    alice,
    token_of,
):
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        for agent in ("calculator", "no-such-agent"):
            card = await client.get(f"/a2a/{agent}/.well-known/agent-card.json")
            assert card.status_code == 404
            response = await post(
                client, rpc("message/send", text_message("Add 2 and 3")), agent=agent
            )
            assert response.status_code == 404
            assert response.json()["error"]["code"] == -32600
    assert await adb(Run.objects.count) == 0


def test_only_staff_switch_a2a_on(demo_agents, alice, make_user, api_for):
    admin = make_user("root", is_staff=True)
    refused = api_for(alice).patch(
        "/api/agents/calculator/", {"a2a": True}, format="json"
    )
    assert refused.status_code == 403
    allowed = api_for(admin).patch(
        "/api/agents/calculator/", {"a2a": True}, format="json"
    )
    assert allowed.status_code == 200, allowed.content
    assert allowed.json()["a2a"] is True
    # Staff changes are audited: who served which agent over A2A, and when.
    changes = api_for(admin).get("/api/changes/", {"kind": "agents.agentspec"})
    [change] = changes.json()["results"]
    assert change["actor"] == "root"
    assert change["changes"]["a2a"] == [False, True]
    assert APIClient().get("/api/agents/calculator/").status_code in (401, 403)


async def test_a_body_past_the_upload_limit_is_refused_before_it_is_parsed(
    served, a2a_client, alice, token_of, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        response = await post(
            client, rpc("message/send", text_message("Add 2 and 3 " + "x" * 2000))
        )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600
    assert await adb(Run.objects.count) == 0
