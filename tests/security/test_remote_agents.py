"""Remote A2A agents (docs/a2a.md, "Using remote agents"): who may delegate, where a
delegation may go, and where the remote agent's token never shows.

A real peer: ADK's own `to_a2a` on uvicorn behind a bearer token
(tests/toolsets/imports/a2a_peers.py).
"""

import json
import logging

import pytest

from agents.models import Change, Event
from tests.toolsets.builtin import servers
from tests.toolsets.builtin.servers import Reply
from tests.toolsets.imports.a2a_peers import PEER_TOKEN, adk_peer
from tests.toolsets.imports.test_a2a_remote import (
    TOOL,
    approve,
    card,
    delegations,
    planner,
    register,
    serve_card,
)
from toolsets.models import ToolCall, ToolImport

pytestmark = pytest.mark.django_db(transaction=True)

ASK = 'ask the trips helper request="Is Lisbon warm in May?"'


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    settings.TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS = ["127.0.0.1"]
    return settings


@pytest.fixture
def admin(api_for, make_user):
    return api_for(make_user("root", is_staff=True))


@pytest.fixture
def peer():
    with adk_peer() as running:
        yield running


@pytest.fixture
def trips(admin, peer) -> dict:
    response = register(admin, peer.card_url, token=PEER_TOKEN)
    assert response.status_code == 201, response.content
    return approve(admin, response.json())


def posts(peer) -> list:
    return [seen for seen in peer.seen if seen[0] == "POST"]


def test_a_user_without_a_grant_cannot_delegate(
    trips, peer, alice, bob, api_for, start_session, say, events_of
):
    agent = planner(trips, alice)  # granted to alice only
    assert api_for(bob).get(f"/api/agents/{agent}/tools/").json() == []
    refused = api_for(bob).post(
        f"/api/tools/{TOOL}/invoke/", {"args": {"request": "hi"}}, format="json"
    )
    assert refused.status_code == 403
    session = start_session(bob, agent)

    say(bob, session, ASK)

    assert delegations(bob, session, events_of) == []
    assert posts(peer) == []
    assert not ToolCall.objects.filter(tool_full_name=TOOL, status="ok").exists()


def test_the_token_never_shows_to_anyone_nor_in_events_audit_or_logs(
    trips, peer, admin, alice, api_for, start_session, say, events_of, caplog
):
    caplog.set_level(logging.DEBUG)
    session = start_session(alice, planner(trips, alice))
    say(alice, session, ASK)
    admin.post(f"/api/imports/{trips['id']}/refresh/")

    assert len(posts(peer)) == 1  # it was sent, to the peer only
    assert api_for(alice).get("/api/imports/").status_code == 403
    assert api_for(alice).get(f"/api/imports/{trips['id']}/").status_code == 403
    outlets = [
        admin.get("/api/imports/").content.decode(),
        admin.get(f"/api/imports/{trips['id']}/").content.decode(),
        json.dumps(events_of(alice, session)),
        json.dumps(list(Event.objects.values_list("data", flat=True)), default=str),
        json.dumps(list(ToolCall.objects.values()), default=str),
        json.dumps(list(Change.objects.values()), default=str),
        json.dumps(ToolImport.objects.get().registration),
        caplog.text,
    ]
    assert [PEER_TOKEN in text for text in outlets] == [False] * len(outlets)


def test_a_card_naming_a_forbidden_endpoint_is_refused(admin):
    cards = servers.serve()
    try:
        for endpoint in ("http://169.254.169.254/", "http://10.0.0.7:8080/rpc"):
            url = serve_card(cards, card(url=endpoint))
            response = register(admin, url)
            assert response.status_code == 400, response.content
            assert "not allowed" in " ".join(response.json()["url"])
        # A card that redirects elsewhere is not followed.
        cards.routes["/moved.json"] = Reply(
            302, b"", {"Location": "http://169.254.169.254/"}
        )
        moved = register(admin, cards.url("/moved.json"))
        assert moved.status_code == 400
    finally:
        cards.shutdown()
    assert not ToolImport.objects.exists()


def test_a_delegation_to_a_host_no_longer_allowed_is_refused_without_a_request(
    trips, peer, alice, settings, start_session, say, events_of
):
    session = start_session(alice, planner(trips, alice))
    settings.TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS = []

    run = say(alice, session, ASK)

    assert run["status"] == "succeeded"
    [answer] = delegations(alice, session, events_of)
    assert "may not be reached" in answer["error_message"]
    assert posts(peer) == []
