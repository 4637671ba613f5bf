"""The Tool servers page (staff) with a remote A2A agent: added by its card's URL
(a forbidden host refused under the field), its card and skills shown, its token
never, its delegation tool reviewed, refreshed and removed; a granted user's turn
then delegates to it for real (ADK's to_a2a on uvicorn, started by the test)."""

import uuid

import pytest
from playwright.sync_api import expect

from tests.toolsets.imports.a2a_peers import PEER_TOKEN, adk_peer

pytestmark = pytest.mark.browser


@pytest.fixture
def peer():
    with adk_peer() as running:
        yield running


def test_staff_add_a_remote_agent_by_its_card_review_refresh_and_remove_it(
    sign_in, api, shoot, peer
):
    staff, alice = api("admin"), api("alice")
    name = f"trips_{uuid.uuid4().hex[:6]}"
    admin = sign_in("admin")
    admin.goto("/staff/tool-servers/")

    admin.get_by_role("button", name="Connect a server").click()
    admin.select_option("#connect-kind", "a2a")
    expect(admin.locator("#row-command")).to_be_hidden()
    admin.fill("#connect-name", name)
    admin.fill("#connect-url", "http://169.254.169.254/.well-known/agent-card.json")
    admin.get_by_role("button", name="Connect", exact=True).click()
    expect(admin.locator("#error-url")).to_contain_text("not allowed")

    admin.fill("#connect-url", peer.card_url)
    admin.fill("#connect-token", PEER_TOKEN)
    admin.get_by_role("button", name="Connect", exact=True).click()
    expect(admin.locator("#server-title")).to_contain_text(name)
    expect(admin.locator("#server-title")).to_contain_text("A2A agent")
    expect(admin.locator("#server-card")).to_contain_text("trip_helper")
    expect(admin.locator("#server-card")).to_contain_text(
        "Answers questions about trips."
    )
    expect(admin.locator("#card-skills li")).to_have_count(1)
    expect(admin.locator("#server-secrets")).to_contain_text(
        "a token, in header Authorization"
    )
    expect(admin.locator("body")).not_to_contain_text(PEER_TOKEN)
    tool = admin.locator(f'.tool-card[data-tool="{name}.delegate_{name}"]')
    expect(tool).to_contain_text("new — review")
    expect(admin.locator("#server-policy")).to_have_value("granted_only")
    tool.get_by_role("button", name="Approve").click()
    expect(tool).to_contain_text("approved")
    admin.get_by_role("button", name="Refresh").click()
    expect(admin.locator("#server-changes")).to_contain_text("nothing changed")
    shoot(admin, "tool-servers-a2a")

    granted = staff.post(
        "/api/grants/",
        json={"toolset": name, "user": "alice", "effect": "allow"},
    )
    assert granted.status_code == 201, granted.text
    made = staff.post(
        "/api/agents/",
        json={
            "name": name.replace("_", "-"),
            "model": "offline/demo",
            "instruction": f"To ask the trips helper anything, use delegate_{name}.",
            "toolsets": [name],
        },
    )
    assert made.status_code == 201, made.text
    session = alice.post("/api/sessions/", json={"agent": made.json()["name"]})
    said = alice.post(
        f"/api/sessions/{session.json()['id']}/messages/?wait=1",
        json={"text": 'ask the trips helper request="Lisbon in May?"'},
    )
    assert said.status_code == 200, said.text
    events = alice.get(f"/api/sessions/{session.json()['id']}/events/").json()
    [answer] = [
        r["response"]
        for e in events
        for r in e["event"].get("function_responses") or []
        if r["name"] == f"delegate_{name}"
    ]
    assert answer["answer"] == "heard: Lisbon in May? (message 1)"

    admin.once("dialog", lambda dialog: dialog.accept())
    admin.get_by_role("button", name="Remove server").click()
    expect(admin.locator(f'#server-list [data-server="{name}"]')).to_have_count(0)
