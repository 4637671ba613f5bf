"""Who may use an agent: an agent with groups is for their members (and staff) only.

A user outside its groups does not see it listed, cannot read it, start a session
with it (REST), list its tools, or follow its sessions' stream (socket); an agent
with no groups is open to everyone signed in. Drafts are staff's alone.
"""

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group

from agents.models import AgentSpec
from agents.realtime.consumers import CLOSE_NOT_FOUND
from agents.tokens import issue_token
from project.asgi import application

TIMEOUT = 10


@pytest.fixture
def finance(db, make_user, api_for):
    """An agent for the finance group; carol is in it, alice is not."""
    group = Group.objects.create(name="finance")
    carol = make_user("carol")
    carol.groups.add(group)
    staff = make_user("root", is_staff=True)
    response = api_for(staff).post(
        "/api/agents/",
        {"name": "ledger", "model": "offline/demo", "groups": ["finance"]},
        format="json",
    )
    assert response.status_code == 201, response.content
    return carol


@pytest.mark.django_db
def test_outsider_cannot_see_or_start_a_group_agent(finance, alice, api_for):
    client = api_for(alice)
    assert "ledger" not in [a["name"] for a in client.get("/api/agents/").json()]
    assert client.get("/api/agents/ledger/").status_code == 404
    started = client.post("/api/sessions/", {"agent": "ledger"}, format="json")
    assert started.status_code == 400
    assert started.json()["agent"] == ["No such agent, or you may not use it."]
    assert client.get("/api/agents/ledger/tools/").status_code == 404


@pytest.mark.django_db
def test_member_sees_and_starts_it(finance, api_for):
    client = api_for(finance)
    assert "ledger" in [a["name"] for a in client.get("/api/agents/").json()]
    assert (
        client.post("/api/sessions/", {"agent": "ledger"}, format="json").status_code
        == 201
    )


@pytest.mark.django_db
def test_an_agent_with_no_groups_is_open_to_everyone(make_user, alice, api_for):
    staff = make_user("root", is_staff=True)
    api_for(staff).post(
        "/api/agents/", {"name": "open", "model": "offline/demo"}, format="json"
    )
    started = api_for(alice).post("/api/sessions/", {"agent": "open"}, format="json")
    assert started.status_code == 201


@pytest.mark.django_db
def test_draft_row_is_never_reached_by_name(finance, make_user, alice, api_for):
    staff = AgentSpec.objects.get(name="ledger")
    root = make_user("root2", is_staff=True)
    api_for(root).patch(
        "/api/agents/ledger/draft/", {"instruction": "secret draft"}, format="json"
    )
    assert AgentSpec.objects.filter(draft_of=staff).exists()
    client = api_for(finance)
    assert client.get("/api/agents/ledger--draft/").status_code == 404
    by_name = client.post("/api/sessions/", {"agent": "ledger--draft"}, format="json")
    assert by_name.status_code == 400
    as_draft = client.post(
        "/api/sessions/", {"agent": "ledger", "draft": True}, format="json"
    )
    assert as_draft.status_code == 400
    assert api_for(alice).get("/api/agents/ledger--draft/").status_code == 404


@pytest.mark.django_db(transaction=True)
async def test_outsider_cannot_follow_the_agents_stream(finance, alice):
    token = await sync_to_async(issue_token)(user=alice)
    socket = WebsocketCommunicator(
        application,
        "/ws/agents/ledger/",
        headers=[(b"authorization", f"Token {token}".encode())],
    )
    connected, _ = await socket.connect(timeout=TIMEOUT)
    assert connected  # accepted, only to carry the close code
    message = await socket.receive_output(timeout=TIMEOUT)
    assert (message["type"], message["code"]) == ("websocket.close", CLOSE_NOT_FOUND)
    await socket.disconnect()
    member = await sync_to_async(issue_token)(user=finance)
    allowed = WebsocketCommunicator(
        application,
        "/ws/agents/ledger/",
        headers=[(b"authorization", f"Token {member}".encode())],
    )
    connected, _ = await allowed.connect(timeout=TIMEOUT)
    assert connected
    assert await allowed.receive_nothing(timeout=0.2)
    await allowed.disconnect()
