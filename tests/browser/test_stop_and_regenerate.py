"""Stop, Edit and Regenerate in a real browser: a turn blocked in a slow async tool
stops at a click (and at Escape in the composer), the next message runs, the last
message is edited and sent again, and the last answer regenerated, each as a new
run with the earlier events still in the timeline."""

import time

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.pages import finished_runs, send, start_session

pytestmark = pytest.mark.browser

KETTLE_CARD = '.card.call[data-tool="wait_for_the_kettle"]'


def user_messages(page: Page):
    return page.locator("#timeline li.kind-user_message")


def boil(page: Page) -> None:
    """Send a message whose turn blocks in the slow tool, and see it running."""
    send(page, "boil the kettle")
    expect(page.locator(KETTLE_CARD).last).to_be_visible()
    expect(page.locator("#stop-turn")).to_be_visible()


def test_stop_then_edit_and_regenerate(sign_in, shoot):
    page = sign_in("alice")
    start_session(page, "kettle")

    boil(page)
    page.click("#stop-turn")

    expect(finished_runs(page)).to_have_count(1)
    expect(finished_runs(page).last).to_contain_text("Run cancelled")
    expect(page.locator("#stop-turn")).to_be_hidden()
    expect(page.locator(KETTLE_CARD)).to_have_attribute("data-status", "cancelled")
    expect(page.locator(KETTLE_CARD)).to_contain_text("cut short")
    shoot(page, "session-stopped")

    send(page, "hello there")
    expect(finished_runs(page)).to_have_count(2)
    expect(finished_runs(page).last).to_contain_text("Run succeeded")

    # Edit: the last message goes back to the composer; sending it is a new run.
    user_messages(page).last.locator(".edit-message").click()
    expect(page.locator("#message")).to_have_value("hello there")
    expect(page.locator("#edit-note")).to_be_visible()
    page.fill("#message", "hello again")
    page.press("#message", "Enter")
    expect(finished_runs(page)).to_have_count(3)
    expect(page.locator("#edit-note")).to_have_count(0)
    expect(user_messages(page)).to_have_count(3)
    expect(user_messages(page).last).to_contain_text("hello again")

    # Regenerate: the last message again, as a new run; earlier ones stay.
    page.locator("#timeline li.kind-text .regenerate").click()
    expect(finished_runs(page)).to_have_count(4)
    expect(user_messages(page)).to_have_count(4)
    expect(user_messages(page).last).to_contain_text("hello again")
    expect(user_messages(page).first).to_contain_text("boil the kettle")
    expect(page.locator(".regenerate")).to_have_count(1)
    shoot(page, "session-regenerated")


def test_a_late_answer_never_takes_a_finished_run_back(sign_in):
    """Regenerate's REST answer (202, the run queued) held until the socket has
    brought the run's end: the run stays ended, Stop hidden, the actions back."""
    page = sign_in("alice")
    start_session(page, "kettle")
    send(page, "hello there")
    expect(finished_runs(page)).to_have_count(1)

    def answer_late(route: Route) -> None:
        response = route.fetch()  # the turn starts now; its frames go on the socket
        time.sleep(1.5)  # the browser draws them, run_finished too, meanwhile
        route.fulfill(response=response)

    page.route("**/regenerate/", answer_late)
    with page.expect_response("**/regenerate/") as answered:
        page.locator(".regenerate").click()
    assert answered.value.json()["status"] in ("queued", "running")

    expect(finished_runs(page)).to_have_count(2)
    expect(page.locator("#stop-turn")).to_be_hidden()
    expect(page.locator(".regenerate")).to_have_count(1)
    expect(page.locator(".edit-message")).to_have_count(1)


def test_escape_in_the_composer_stops_the_turn(sign_in):
    page = sign_in("alice")
    start_session(page, "kettle")

    boil(page)
    page.focus("#message")
    page.keyboard.press("Escape")

    expect(finished_runs(page).last).to_contain_text("Run cancelled")
    expect(page.locator("#stop-turn")).to_be_hidden()
    expect(page.locator(".edit-message")).to_have_count(1)


def test_stop_is_reached_with_the_keyboard(sign_in):
    page = sign_in("alice")
    start_session(page, "kettle")

    boil(page)
    page.focus("#message")
    page.keyboard.press("Tab")

    expect(page.locator("#stop-turn")).to_be_focused()
    page.keyboard.press("Enter")
    expect(finished_runs(page).last).to_contain_text("Run cancelled")
