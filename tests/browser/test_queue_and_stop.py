"""A session's queue of turns in a real browser: the messages waiting behind the
running turn are listed under the composer, each cancelled on its own or all at
once, live in every open tab, and a cancelled one never runs; Stop stays in view
from the first turn of a queue to the last, never blinking out between two."""

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import finished_runs, send, start_session
from tests.browser.test_stop_and_regenerate import KETTLE_CARD, boil, user_messages

pytestmark = pytest.mark.browser


def queue_items(page: Page):
    return page.locator("#turn-queue .turn-queue-item")


def queue_texts(page: Page):
    return page.locator("#turn-queue .turn-queue-text")


def open_session(page: Page, session_id: str) -> None:
    page.goto(f"/sessions/{session_id}/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")


def test_the_queue_is_listed_and_cancelled_in_every_tab(sign_in, shoot):
    page = sign_in("alice")
    session_id = start_session(page, "kettle")
    boil(page)
    send(page, "first in line")
    send(page, "second in line")
    send(page, "third in line")
    other = page.context.new_page()
    open_session(other, session_id)

    for tab in (page, other):
        expect(tab.locator("#turn-queue-title")).to_have_text("Queued (3)")
        expect(queue_texts(tab)).to_have_text(
            ["first in line", "second in line", "third in line"]
        )
    shoot(page, "session-queue")

    queue_items(page).first.locator(".cancel-queued").click()

    for tab in (page, other):
        expect(tab.locator("#turn-queue-title")).to_have_text("Queued (2)")
        expect(queue_texts(tab)).to_have_text(["second in line", "third in line"])

    other.click("#cancel-queue")

    for tab in (page, other):
        expect(tab.locator("#turn-queue")).to_be_hidden()
        expect(tab.locator("#stop-turn")).to_be_visible()
    expect(page.locator(KETTLE_CARD)).to_have_attribute("data-status", "running")

    send(page, "fourth in line")
    expect(queue_texts(page)).to_have_text(["fourth in line"])
    expect(page.locator("#stop-all")).to_be_visible()
    page.click("#stop-all")

    for tab in (page, other):
        expect(tab.locator("#stop-turn")).to_be_hidden()
        expect(tab.locator("#stop-all")).to_be_hidden()
        expect(tab.locator("#turn-queue")).to_be_hidden()
    expect(page.locator(KETTLE_CARD)).to_have_attribute("data-status", "cancelled")
    # Five runs ended (cancelled), and only the kettle's message ever ran.
    expect(finished_runs(page)).to_have_count(5)
    expect(user_messages(page).locator(".bubble-text")).to_have_text(
        ["boil the kettle"]
    )


def test_stop_never_disappears_between_two_queued_turns(sign_in, api):
    session_id = api("alice").post("/api/sessions/", json={"agent": "kettle"})
    session_id = session_id.json()["id"]
    page = sign_in("alice")
    open_session(page, session_id)
    # Every change of Stop's visibility, with how many runs had ended by then.
    page.evaluate(
        """() => {
          const stop = document.getElementById("stop-turn");
          window.stopSeen = [];
          let last = stop.hidden;
          const note = () => {
            if (stop.hidden === last) return;
            last = stop.hidden;
            window.stopSeen.push({
              hidden: stop.hidden,
              ended: document.querySelectorAll("#timeline li.kind-run_finished").length,
            });
          };
          new MutationObserver(note).observe(stop, { attributes: true, attributeFilter: ["hidden"] });
        }"""
    )
    client = api("alice")
    for text in ("boil the kettle", "hello there", "hello again"):
        sent = client.post(f"/api/sessions/{session_id}/messages/", json={"text": text})
        assert sent.status_code == 202, sent.text
    expect(page.locator(KETTLE_CARD)).to_be_visible()
    expect(page.locator("#stop-turn")).to_be_visible()
    expect(page.locator("#stop-turn")).to_be_enabled()

    page.click("#stop-turn")  # the kettle's turn; the two waiting run after it

    expect(finished_runs(page)).to_have_count(3)
    expect(page.locator("#stop-turn")).to_be_hidden()
    seen = page.evaluate("window.stopSeen")
    hidden = [change for change in seen if change["hidden"]]
    assert hidden and all(change["ended"] == 3 for change in hidden), seen
    assert seen[-1]["hidden"], seen
    expect(user_messages(page).locator(".bubble-text")).to_have_text(
        ["boil the kettle", "hello there", "hello again"]
    )
