"""Who may call an agent over A2A: a token that opens nothing any more (expired,
revoked, its user deactivated) is 401 at once, even for a task it started; an
agent of groups the caller is not in is not served to her; a service account is a
principal like any user, and no more (agents/a2a/)."""

# ruff: noqa: F811 (the fixtures of tests/agents/a2a/conftest.py, imported)

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone
from knox.models import AuthToken

from agents.models import A2ATask, AgentSpec, Run
from agents.tokens import revoke_tokens
from tests.agents.a2a.conftest import (  # noqa: F401
    a2a_client,
    adb,
    rpc,
    served,
    text_message,
    token_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def send(client, method: str, params: dict, agent: str = "calculator"):
    return await client.post(f"/a2a/{agent}/", json=rpc(method, params))


async def started_task(client) -> dict:
    response = await send(client, "message/send", text_message("Add 2 and 3"))
    return response.json()["result"]


def expire(user) -> None:
    AuthToken.objects.filter(user=user).update(expiry=timezone.now() - timedelta(1))


def deactivate(user) -> None:
    user.is_active = False
    user.save(update_fields=["is_active"])


@pytest.mark.parametrize("end", [expire, revoke_tokens, deactivate])
async def test_a_token_that_opens_nothing_any_more_is_401_for_its_own_task(
    served, a2a_client, alice, token_of, end
):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        task = await started_task(client)
        await adb(end, user=alice) if end is revoke_tokens else await adb(end, alice)
        for method, params in [
            ("tasks/get", {"id": task["id"]}),
            ("tasks/cancel", {"id": task["id"]}),
            ("message/send", text_message("Add 1 and 1", contextId=task["contextId"])),
            ("message/stream", text_message("Add 1 and 1")),
        ]:
            response = await send(client, method, params)
            assert response.status_code == 401, (method, response.text)
            assert response.json()["error"]["code"] == -32600
            assert "Add 2 and 3" not in response.text
            assert response.headers["www-authenticate"].startswith("Bearer")
    assert await adb(Run.objects.count) == 1


async def test_an_agent_of_groups_the_caller_is_not_in_is_not_served_to_her(
    served, a2a_client, alice, bob, token_of
):
    spec = await adb(served, "calculator")
    group = await adb(Group.objects.create, name="finance")
    await adb(group.user_set.add, bob)
    await adb(spec.groups.add, group)

    async with a2a_client(await adb(token_of, alice)) as client:
        refused = await send(client, "message/send", text_message("Add 2 and 3"))
    async with a2a_client(await adb(token_of, bob)) as client:
        allowed = await send(client, "message/send", text_message("Add 2 and 3"))

    assert refused.status_code == 404, refused.text
    assert refused.json()["error"]["code"] == -32600
    assert allowed.json()["result"]["status"]["state"] == "completed", allowed.text
    owners = await adb(
        list, Run.objects.values_list("session__owner__username", flat=True)
    )
    assert owners == ["bob"]


async def test_a_disabled_agent_answers_nothing_of_its_tasks(
    served, a2a_client, alice, token_of
):
    await adb(served, "calculator")
    async with a2a_client(await adb(token_of, alice)) as client:
        task = await started_task(client)
        for change in ({"is_active": False}, {"a2a": False}, {"missing": True}):
            await adb(AgentSpec.objects.filter(name="calculator").update, **change)
            card = await client.get("/a2a/calculator/.well-known/agent-card.json")
            got = await send(client, "tasks/get", {"id": task["id"]})
            more = await send(
                client,
                "message/send",
                text_message("Add 1", contextId=task["contextId"]),
            )
            for response in (card, got, more):
                assert response.status_code == 404, (change, response.text)
                assert "Add 2 and 3" not in response.text
            await adb(
                AgentSpec.objects.filter(name="calculator").update,
                is_active=True,
                a2a=True,
                missing=False,
            )
    assert await adb(Run.objects.count) == 1


async def test_a_service_account_is_a_principal_of_its_own(
    served, a2a_client, alice, make_user, token_of
):
    await adb(served, "calculator")
    robot = await adb(make_user, "billing-bot")
    async with a2a_client(await adb(token_of, robot)) as client:
        task = await started_task(client)
    async with a2a_client(await adb(token_of, alice)) as client:
        alices = await send(client, "tasks/get", {"id": task["id"]})

    assert task["status"]["state"] == "completed", task
    stored = await adb(A2ATask.objects.select_related("user", "session__owner").get)
    assert stored.user.username == stored.session.owner.username == "billing-bot"
    assert alices.json()["error"]["code"] == -32001
    assert task["contextId"] not in alices.text


async def test_another_principals_context_or_task_takes_no_stream(
    served, a2a_client, alice, bob, token_of
):
    await adb(served, "calculator")
    async with a2a_client(await adb(token_of, alice)) as client:
        task = await started_task(client)
    async with a2a_client(await adb(token_of, bob)) as client:
        by_context = await send(
            client, "message/stream", text_message("Add 1", contextId=task["contextId"])
        )
        by_task = await send(
            client, "message/stream", text_message("Add 1", taskId=task["id"])
        )
    assert '"code":-32602' in by_context.text.replace(" ", ""), by_context.text
    assert '"code":-32001' in by_task.text.replace(" ", ""), by_task.text
    for response in (by_context, by_task):
        assert response.status_code == 200
        assert "Add 2 and 3" not in response.text
    assert await adb(Run.objects.count) == 1


async def test_a_chunked_body_past_the_limit_is_refused_before_its_end(
    served, a2a_client, alice, token_of, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    await adb(served, "calculator")
    sent = 0

    async def endless():
        nonlocal sent
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"x": "'
        for _ in range(10_000):  # 10 MB, were it all read
            sent += 1
            yield b"x" * 1000

    async with a2a_client(await adb(token_of, alice)) as client:
        response = await client.post(
            "/a2a/calculator/",
            content=endless(),
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600
    assert sent < 100
    assert await adb(Run.objects.count) == 0
