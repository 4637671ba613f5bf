"""Staff switch A2A on for an agent on the Agents page; its card is then served."""

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.test_accessibility import violations

pytestmark = pytest.mark.browser


def test_staff_serve_an_agent_over_a2a_from_the_agents_page(sign_in, server, api):
    card_url = f"{server.url}/a2a/quotes/.well-known/agent-card.json"
    assert httpx.get(card_url).status_code == 404
    admin = sign_in("admin")
    admin.goto("/staff/agents/")
    toggle = admin.get_by_label("Serve quotes over A2A")
    expect(toggle).not_to_be_checked()

    toggle.check()

    expect(admin.locator(".toast")).to_contain_text("quotes is served over A2A.")
    card = admin.locator('.agent-card[data-agent="quotes"]')
    expect(card.get_by_role("link", name="Agent card of quotes")).to_be_visible()
    # The toggle and its card's link, shown, pass axe (a11y of the card's link).
    assert violations(admin) == []
    assert httpx.get(card_url).json()["name"] == "quotes"
    assert api("admin").get("/api/agents/quotes/").json()["a2a"] is True
    admin.reload()
    expect(admin.get_by_label("Serve quotes over A2A")).to_be_checked()
    # And off again: the card is gone.
    admin.get_by_label("Serve quotes over A2A").uncheck()
    expect(admin.locator(".toast").last).to_contain_text("no longer served")
    assert httpx.get(card_url).status_code == 404
