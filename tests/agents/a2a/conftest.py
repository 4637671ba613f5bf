"""The A2A edge in this process: the real ASGI app through httpx, turns inline."""

import json

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group

from agents.models import AgentSpec
from agents.tokens import issue_token
from project.asgi import application


@pytest.fixture
def served(demo_agents):
    """Serve the demo calculator and reimbursement agents over A2A."""

    def serve(name: str) -> AgentSpec:
        AgentSpec.objects.filter(name=name).update(a2a=True)
        return AgentSpec.objects.get(name=name)

    return serve


@pytest.fixture
def token_of():
    made: dict[int, str] = {}

    def token(user) -> str:
        if user.pk not in made:
            made[user.pk] = issue_token(user=user)
        return made[user.pk]

    return token


@pytest.fixture
def a2a_client():
    """An httpx client on the ASGI app, as `user` (None: no token)."""

    def client(token: str | None = None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(app=application),
            base_url="http://testserver",
            headers=headers,
            timeout=30,
        )

    return client


def rpc(method: str, params: dict, request_id: int | str = 1) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def text_message(text: str, **extra) -> dict:
    return {
        "message": {
            "role": "user",
            "messageId": "m-1",
            "parts": [{"kind": "text", "text": text}],
            **extra,
        }
    }


async def adb(function, *args, **kwargs):
    return await sync_to_async(function)(*args, **kwargs)


def sse_results(body: str) -> list[dict]:
    """The JSON-RPC results of a server-sent event stream, in order."""
    results = []
    for line in body.splitlines():
        if line.startswith("data:"):
            frame = json.loads(line[5:])
            assert "error" not in frame, frame
            results.append(frame["result"])
    return results


@pytest.fixture
def managers(bob):
    """The reimbursement demo's approvers: bob."""
    group, _ = Group.objects.get_or_create(name="managers")
    group.user_set.add(bob)
    return group
