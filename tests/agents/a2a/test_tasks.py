"""A2A tasks are Toolcrib turns: streamed, paused for a person, resumed, cancelled."""

import pytest
from rest_framework.test import APIClient

from agents.models import Budget, Request, Run
from tests.agents.a2a.conftest import adb, rpc, sse_results, text_message
from tests.agents.test_usage import spent  # noqa: F401
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

TRIP = 'Ask for approval of 500 for "a conference trip"'


async def send(client, text: str, **extra) -> dict:
    response = await client.post(
        "/a2a/reimbursement/", json=rpc("message/send", text_message(text, **extra))
    )
    assert response.status_code == 200, response.text
    return response.json()["result"]


async def get_task(client, task_id: str, agent: str = "reimbursement") -> dict:
    response = await client.post(
        f"/a2a/{agent}/", json=rpc("tasks/get", {"id": task_id})
    )
    assert response.status_code == 200, response.text
    return response.json()["result"]


def inbox_of(user, token_of) -> list[dict]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_of(user)}")
    response = client.get("/api/requests/")
    assert response.status_code == 200, response.content
    return response.json()


def answer_as(user, token_of, request_id: int, body: dict) -> dict:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_of(user)}")
    response = client.post(
        f"/api/requests/{request_id}/answer/?wait=1", body, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


async def test_message_stream_sends_the_task_its_reply_and_a_final_status(
    served, a2a_client, alice, token_of
):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        response = await client.post(
            "/a2a/calculator/", json=rpc("message/stream", text_message("Add 2 and 3"))
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    results = sse_results(response.text)
    assert results[0]["kind"] == "task"
    assert results[-1]["kind"] == "status-update"
    assert results[-1]["final"] is True
    assert results[-1]["status"]["state"] == "completed"
    chunks = [r for r in results if r["kind"] == "artifact-update"]
    assert "5" in " ".join(p["text"] for c in chunks for p in c["artifact"]["parts"])
    assert {r["taskId"] for r in results[1:]} == {results[0]["id"]}


async def test_a_pause_for_a_person_is_input_required_until_the_approver_answers(
    served, a2a_client, alice, bob, managers, token_of
):
    await adb(served, "reimbursement")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        task = await send(client, TRIP)
        assert task["status"]["state"] == "input-required", task
        assert "managers" in task["status"]["message"]["parts"][0]["text"]
        # The request is in the approver's inbox, as any pause of a turn.
        inbox = await adb(inbox_of, bob, token_of)
        asked = [r for r in inbox if r["session"] == task["contextId"]]
        assert len(asked) == 1
        await adb(
            answer_as,
            bob,
            token_of,
            asked[0]["id"],
            {"response": {"status": "approved", "approver": "bob"}},
        )
        done = await get_task(client, task["id"])
    assert done["status"]["state"] == "completed", done
    assert done["contextId"] == task["contextId"]
    reply = " ".join(p["text"] for a in done["artifacts"] for p in a["parts"])
    assert "500" in reply


async def test_cancelling_a_waiting_task_withdraws_its_request(
    served, a2a_client, alice, bob, managers, token_of
):
    await adb(served, "reimbursement")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        task = await send(client, TRIP)
        response = await client.post(
            "/a2a/reimbursement/", json=rpc("tasks/cancel", {"id": task["id"]})
        )
        cancelled = response.json()["result"]
        again = await client.post(
            "/a2a/reimbursement/", json=rpc("tasks/cancel", {"id": task["id"]})
        )
    assert cancelled["status"]["state"] == "canceled"
    assert again.json()["error"]["code"] == -32002  # TaskNotCancelable
    inbox = await adb(inbox_of, bob, token_of)
    assert [r for r in inbox if r["session"] == task["contextId"]] == []
    statuses = await adb(
        lambda: set(
            Request.objects.filter(session_id=task["contextId"]).values_list(
                "status", flat=True
            )
        )
    )
    assert statuses == {Request.Status.EXPIRED}


async def test_a_second_task_in_a_context_continues_its_session(
    served, a2a_client, alice, token_of
):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        first = await client.post(
            "/a2a/calculator/", json=rpc("message/send", text_message("Add 2 and 3"))
        )
        context = first.json()["result"]["contextId"]
        second = await client.post(
            "/a2a/calculator/",
            json=rpc(
                "message/send", text_message("Subtract 10 and 4", contextId=context)
            ),
        )
    task = second.json()["result"]
    assert task["contextId"] == context
    assert task["status"]["state"] == "completed"
    runs = await adb(lambda: Run.objects.filter(session_id=context).count())
    assert runs == 2


async def test_a_task_is_a_turn_of_the_caller_in_her_timeline_and_audit(
    served, a2a_client, alice, token_of
):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        response = await client.post(
            "/a2a/calculator/", json=rpc("message/send", text_message("Add 2 and 3"))
        )
    task = response.json()["result"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {await adb(token_of, alice)}")
    events = (
        await adb(client.get, f"/api/sessions/{task['contextId']}/events/")
    ).json()
    [asked] = [f["event"] for f in events if f["event"]["kind"] == "user_message"]
    assert "alice" in str(asked["sender"])
    assert "Add 2 and 3" in str(asked)
    listed = (await adb(client.get, "/api/sessions/")).json()
    assert task["contextId"] in str(listed)
    # The tool the agent called is in the audit, as alice's call.
    calls = await adb(
        lambda: list(
            ToolCall.objects.filter(session_id=task["contextId"]).values_list(
                "user__username", "status"
            )
        )
    )
    assert calls and all(user == "alice" for user, _ in calls)


async def test_the_callers_budget_applies_to_her_tasks(
    served,
    a2a_client,
    alice,
    token_of,
    spent,  # noqa: F811
):
    await adb(served, "calculator")
    await adb(Budget.objects.create, user=alice, daily_tokens=500)
    await adb(spent, alice, 500)
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        response = await client.post(
            "/a2a/calculator/", json=rpc("message/send", text_message("Add 2 and 3"))
        )
    task = response.json()["result"]
    assert task["status"]["state"] == "failed"
    assert "budget" in task["status"]["message"]["parts"][0]["text"]
