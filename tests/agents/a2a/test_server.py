"""Agents over A2A in this process: the card, message/send, tasks/get, cancel."""

import pytest

from agents.models import A2ATask, Run
from tests.agents.a2a.conftest import adb, rpc, text_message

pytestmark = pytest.mark.django_db(transaction=True)


async def test_card_names_the_agent_its_skills_and_how_to_sign_in(served, a2a_client):
    await adb(served, "calculator")
    async with a2a_client() as client:
        response = await client.get("/a2a/calculator/.well-known/agent-card.json")
    assert response.status_code == 200, response.text
    card = response.json()
    assert card["name"] == "calculator"
    assert card["url"] == "http://testserver/a2a/calculator/"
    assert card["capabilities"]["streaming"] is True
    skills = {skill["id"]: skill for skill in card["skills"]}
    assert skills["calculator"]["description"] == card["description"]
    assert "greet" in skills["greet_user"]["description"].lower()
    assert any(skill["tags"] == ["toolset"] for skill in card["skills"])
    assert card["securitySchemes"]["toolcribToken"]["scheme"] == "bearer"


async def test_message_send_runs_a_turn_of_the_caller(
    served, a2a_client, alice, token_of
):
    await adb(served, "calculator")
    token = await adb(token_of, alice)
    async with a2a_client(token) as client:
        response = await client.post(
            "/a2a/calculator/", json=rpc("message/send", text_message("Add 2 and 3"))
        )
    assert response.status_code == 200, response.text
    task = response.json()["result"]
    assert task["status"]["state"] == "completed", task
    reply = " ".join(p["text"] for a in task["artifacts"] for p in a["parts"])
    assert "5" in reply
    stored = await adb(
        A2ATask.objects.select_related("run", "session").get, pk=task["id"]
    )
    assert stored.session_id == task["contextId"]
    assert stored.session.owner_id == alice.pk
    assert stored.run.status == Run.Status.SUCCEEDED
