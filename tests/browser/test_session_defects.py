"""Session page defects of issue 48 (item 8), each as a person sees it in a browser:
a session closed elsewhere takes Edit, Regenerate and Upload away at once; Edit is
only under your own message; a tool's rule stays inside its card; the timeline's
text carries no "[agent]" label and its cards no "#12" chips."""

import re

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.pages import finished_runs, send
from tests.browser.test_sender_and_closed import new_session, open_session

pytestmark = pytest.mark.browser

AGENT = "weather_sentiment"


def user_messages(page: Page):
    return page.locator("#timeline li.kind-user_message")


def test_a_session_closed_elsewhere_takes_edit_regenerate_and_upload_away_at_once(
    sign_in, api
):
    session_id = new_session(api, "alice")
    page = sign_in("alice")
    open_session(page, session_id)
    send(page, "hello there")
    expect(finished_runs(page)).to_have_count(1)
    expect(page.locator(".edit-message")).to_be_visible()
    expect(page.locator(".regenerate")).to_be_visible()
    expect(page.locator("#artifact-upload")).to_be_visible()

    closed = api("alice").post(f"/api/sessions/{session_id}/close/")

    assert closed.status_code == 200, closed.text
    # Nothing sent from this page: the session_closed event alone does it.
    expect(page.locator("#closed-notice")).to_be_visible()
    expect(page.locator(".edit-message")).to_have_count(0)
    expect(page.locator(".regenerate")).to_have_count(0)
    expect(page.locator("#artifact-upload")).to_have_count(0)
    expect(page.locator("#composer")).to_be_hidden()
    expect(page.locator("#timeline li.kind-session_closed")).to_contain_text(
        "Session closed"
    )


def test_edit_is_only_under_your_own_message(sign_in, api):
    session_id = new_session(api, "alice")
    page = sign_in("alice")
    open_session(page, session_id)

    sent = api("admin").post(
        f"/api/sessions/{session_id}/messages/?wait=1", json={"text": "hello there"}
    )

    assert sent.status_code == 200, sent.text
    expect(finished_runs(page)).to_have_count(1)
    expect(user_messages(page).locator(".sender")).to_have_text("sent by admin")
    expect(page.locator(".regenerate")).to_be_visible()
    expect(page.locator(".edit-message")).to_have_count(0)

    send(page, "hello again")

    expect(finished_runs(page)).to_have_count(2)
    expect(user_messages(page).last.locator(".edit-message")).to_be_visible()
    expect(page.locator(".edit-message")).to_have_count(1)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_tools_rule_wraps_inside_its_card(sign_in, api, viewport):
    session_id = new_session(api, "alice")
    page = sign_in("alice", viewport=viewport)

    def long_rules(route: Route) -> None:
        # A rule naming a long group and tool, as a real grant's may: no spaces.
        tools = route.fetch().json()
        for tool in tools:
            tool["rule"] = (
                f"{tool['rule']} via group:{'platform-engineering-' * 4}oncall"
            )
        route.fulfill(json=tools)

    page.route(f"**/api/agents/{AGENT}/tools/", long_rules)
    open_session(page, session_id)
    rules = page.locator("#tool-list li .tool-rule")
    expect(rules.first).to_be_visible()

    over = page.locator("#tool-list li").evaluate_all(
        """items => items
          .filter(li => li.scrollWidth > li.clientWidth + 1
            || [...li.querySelectorAll("*")].some(child =>
                 child.getBoundingClientRect().right > li.getBoundingClientRect().right + 1))
          .map(li => li.dataset.tool)"""
    )

    assert over == []


def test_the_timeline_has_no_agent_labels_and_no_seq_chips(sign_in, api):
    session_id = new_session(api, "alice")
    page = sign_in("alice")
    open_session(page, session_id)

    send(page, "weather in london?")

    expect(finished_runs(page)).to_have_count(1)
    answer = page.locator("#timeline li.kind-text .bubble-text").last
    expect(answer).to_contain_text("London")
    expect(answer).not_to_contain_text(f"[{AGENT}")
    text = page.locator("#timeline").inner_text()
    assert not re.search(r"\[\w+_agent\]", text), text
    assert not re.search(r"#\d+", text), text
    # Each event still opens in the inspector, its seq in the button's name.
    inspect = page.locator("#timeline .inspect-button").first
    expect(inspect).to_have_attribute("aria-label", re.compile(r"^Inspect event #\d+$"))
