"""Why a tool is gone, in a real browser: an admin denies a tool to alice over the API,
and alice's open session's Tools panel lists it as unavailable with the reason in plain
words, without reloading; lifting the deny brings it back."""

import pytest
from playwright.sync_api import expect

from tests.browser.pages import start_session

pytestmark = pytest.mark.browser

TOOL = "weather_sentiment.analyze_sentiment"


def test_a_denied_tool_shows_as_unavailable_with_why_live(sign_in, api, shoot):
    staff = api("admin")
    alice = sign_in("alice")
    start_session(alice, "weather_sentiment")
    available = alice.locator(f'#tool-list li[data-tool="{TOOL}"]')
    gone = alice.locator(f'#tool-unavailable-list li[data-tool="{TOOL}"]')
    expect(available).to_be_visible()
    expect(gone).to_have_count(0)
    alice.evaluate("window.__sameDocument = true")

    denied = staff.post(
        "/api/grants/", json={"user": "alice", "tool": TOOL, "effect": "deny"}
    )
    assert denied.status_code == 201, denied.text
    try:
        expect(available).to_have_count(0)
        expect(gone).to_be_visible()
        expect(gone).to_have_attribute("data-reason", "deny")
        expect(gone.locator(".tool-why")).to_have_text("Denied to you by an admin.")
        expect(alice.locator("#tool-unavailable")).to_contain_text("Unavailable (1)")
        expect(alice.locator("#tools-note")).to_contain_text("Updated")
        shoot(alice, "session-tool-unavailable")
    finally:
        lifted = staff.delete(f"/api/grants/{denied.json()['id']}/")
        assert lifted.status_code == 204, lifted.text

    expect(available).to_be_visible()
    expect(gone).to_have_count(0)
    assert alice.evaluate("window.__sameDocument") is True, "the page reloaded"
