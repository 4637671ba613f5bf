"""Who wrote in a session, and a closed session, as people see them in a browser.

Staff opening someone else's session are told so, and what they send is marked as
theirs, live on the owner's page too. A closed session shows no composer and no
Close button but a notice with a way on; a refused message says why in plain words
and keeps what was typed.
"""

import re

from playwright.sync_api import Page, expect

from tests.browser.pages import send
from tests.browser.test_markdown import serious_violations

AGENT = "weather_sentiment"
QUESTION = "weather in london?"


def new_session(api, username: str) -> str:
    created = api(username).post("/api/sessions/", json={"agent": AGENT})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def open_session(page: Page, session_id: str) -> None:
    page.goto(f"/sessions/{session_id}/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")


def another_session(session_id: str) -> re.Pattern:
    """A session page's URL, of any session but this one."""
    return re.compile(rf"/sessions/(?!{re.escape(session_id)}/)[^/]+/$")


def user_messages(page: Page):
    return page.locator("#timeline li.kind-user_message")


def test_staff_in_someones_session_see_a_banner_and_their_messages_are_marked(
    sign_in, api, shoot
):
    session_id = new_session(api, "alice")
    alice = sign_in("alice")
    open_session(alice, session_id)
    staff = sign_in("admin")
    open_session(staff, session_id)

    banner = staff.locator("#owner-banner")
    expect(banner).to_have_text(
        "You are viewing alice's session as staff; messages you send are marked"
        " as yours."
    )
    expect(alice.locator("#owner-banner")).to_have_count(0)

    send(staff, QUESTION)

    expect(user_messages(staff)).to_have_count(1)
    expect(user_messages(staff).locator(".sender")).to_have_text("sent by you (admin)")
    # The owner's page gets it live, marked as staff's.
    expect(user_messages(alice)).to_have_count(1)
    expect(user_messages(alice).locator(".sender")).to_have_text("sent by admin")
    shoot(staff, "session-staff-banner")
    assert serious_violations(staff, "#session-page") == []

    send(alice, "weather in paris?")

    expect(user_messages(alice)).to_have_count(2)
    expect(user_messages(alice).nth(1)).to_contain_text("weather in paris?")
    expect(user_messages(alice).nth(1).locator(".sender")).to_have_count(0)
    shoot(alice, "session-sent-by-staff")


def test_a_closed_session_shows_a_notice_instead_of_the_composer(sign_in, api, shoot):
    session_id = new_session(api, "alice")
    assert api("alice").post(f"/api/sessions/{session_id}/close/").status_code == 200
    page = sign_in("alice")

    open_session(page, session_id)

    notice = page.locator("#closed-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("This session is closed")
    expect(page.locator("#composer")).to_be_hidden()
    expect(page.locator("#message")).to_be_hidden()
    expect(page.locator("#close-session")).to_be_hidden()
    shoot(page, "session-closed-notice")
    assert serious_violations(page, "#session-page") == []

    page.click("#new-session")

    page.wait_for_url(another_session(session_id))
    expect(page.locator("#session-title")).to_have_text(AGENT)
    expect(page.locator("#message")).to_be_visible()
    expect(page.locator("#closed-notice")).to_have_count(0)


def test_a_message_too_long_is_refused_in_plain_words_and_kept(sign_in, api):
    session_id = new_session(api, "alice")
    page = sign_in("alice")
    open_session(page, session_id)
    too_long = "a" * 20_001

    send(page, too_long)

    expect(page.locator("#composer-error")).to_have_text(
        "Your message is too long: at most 20,000 characters. Shorten it, or split"
        " it into several messages."
    )
    expect(page.locator("#message")).to_have_value(too_long)
    expect(page.locator(".toast")).not_to_contain_text("refused a frame")
    expect(user_messages(page)).to_have_count(0)

    send(page, QUESTION)  # a message that fits goes, and the note goes with it

    expect(user_messages(page)).to_have_count(1)
    expect(page.locator("#composer-error")).to_have_count(0)
    expect(page.locator("#message")).to_have_value("")


def test_a_session_closed_in_another_tab_keeps_the_typed_message(sign_in, api, shoot):
    session_id = new_session(api, "alice")
    page = sign_in("alice")
    open_session(page, session_id)
    other_tab = page.context.new_page()
    open_session(other_tab, session_id)
    typed = "please also check the forecast for tomorrow"
    page.fill("#message", typed)  # typed, not yet sent

    other_tab.once("dialog", lambda dialog: dialog.accept())
    other_tab.click("#close-session")
    expect(other_tab.locator("#closed-notice")).to_be_visible()

    # This tab hears of it at once (session_closed), before anything is sent.
    notice = page.locator("#closed-notice")
    expect(notice).to_contain_text("This session is closed")
    expect(page.locator("#unsent-draft")).to_have_text(typed)
    expect(page.locator("#composer")).to_be_hidden()
    expect(page.locator("#close-session")).to_be_hidden()
    shoot(page, "session-closed-elsewhere")
    assert serious_violations(page, "#session-page") == []

    page.click("#new-session")

    page.wait_for_url(another_session(session_id))
    expect(page.locator("#message")).to_have_value(typed)
