"""A2A tasks on the production shape: turns on a Celery worker, two web processes,
PostgreSQL and Redis. A task started through one web process, paused for a
manager, answered through the other, is read there completed."""

from uuid import uuid4

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TaskQueryParams, TaskState, TextPart

pytestmark = pytest.mark.integration

TRIP = 'Ask for approval of 500 for "a conference trip"'


def staff_serve(url: str, agent: str) -> None:
    token = httpx.post(
        f"{url}/api/auth/token/", json={"username": "admin", "password": "admin"}
    ).json()["token"]
    response = httpx.patch(
        f"{url}/api/agents/{agent}/",
        json={"a2a": True},
        headers={"Authorization": f"Token {token}"},
    )
    assert response.status_code == 200, response.text


def token_of(url: str, username: str) -> str:
    response = httpx.post(
        f"{url}/api/auth/token/", json={"username": username, "password": username}
    )
    return response.json()["token"]


async def client_for(http: httpx.AsyncClient, url: str, agent: str, *, streaming: bool):
    card = await A2ACardResolver(http, base_url=f"{url}/a2a/{agent}/").get_agent_card()
    return ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(
        card
    )


async def test_a_task_paused_on_one_web_process_completes_read_on_the_other(cluster):
    web_a, web_b = (web.url for web in cluster.webs)
    staff_serve(web_a, "reimbursement")
    alice = {"Authorization": f"Bearer {token_of(web_a, 'alice')}"}
    message = Message(
        role=Role.user, message_id=str(uuid4()), parts=[Part(root=TextPart(text=TRIP))]
    )
    async with httpx.AsyncClient(headers=alice, timeout=120) as http:
        client = await client_for(http, web_a, "reimbursement", streaming=True)
        events = [event async for event in client.send_message(message)]
    task, _ = events[-1]
    assert task.status.state == TaskState.input_required
    bob = {"Authorization": f"Token {token_of(web_b, 'bob')}"}
    inbox = httpx.get(f"{web_b}/api/requests/", headers=bob).json()
    [asked] = [r for r in inbox if r["session"] == task.context_id]
    answered = httpx.post(
        f"{web_b}/api/requests/{asked['id']}/answer/?wait=1",
        json={"response": {"status": "approved", "approver": "bob"}},
        headers=bob,
        timeout=120,
    )
    assert answered.status_code == 200, answered.text
    async with httpx.AsyncClient(headers=alice, timeout=120) as http:
        client = await client_for(http, web_b, "reimbursement", streaming=False)
        done = await client.get_task(TaskQueryParams(id=task.id))
    assert done.status.state == TaskState.completed
    reply = " ".join(p.root.text for a in done.artifacts or [] for p in a.parts)
    assert "500" in reply
