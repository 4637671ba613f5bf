"""Sharing a session in a browser: the owner makes a link from the session page's
Share dialog and copies it; another person reads the conversation read-only,
continues it in a session of her own; the owner sees the view and revokes the link,
which then shows a page saying so. Staff allow links anyone may open on the People
page, and a stranger (not signed in) then reads such a link."""

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PHONE, TIMEOUT_MS

AGENT = "weather_sentiment"


def session_with_a_turn(api, username: str, text: str) -> str:
    client = api(username)
    created = client.post("/api/sessions/", json={"agent": AGENT})
    assert created.status_code == 201, created.text
    session_id = created.json()["id"]
    run = client.post(
        f"/api/sessions/{session_id}/messages/?wait=1", json={"text": text}
    )
    assert run.status_code == 200, run.text
    return session_id


def open_share_dialog(page: Page, session_id: str) -> None:
    page.goto(f"/sessions/{session_id}/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    page.click("#share-session")
    expect(page.locator("#share-dialog")).to_be_visible()


def make_link(page: Page, *, anyone: bool = False) -> str:
    if anyone:
        page.check("#share-anyone")
    page.click("#share-create")
    link = page.locator("#share-url")
    expect(link).to_be_visible()
    return link.input_value()


def no_horizontal_overflow(page: Page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def test_share_read_continue_and_revoke(sign_in, api, shoot, server):
    session_id = session_with_a_turn(api, "alice", "weather in london?")
    alice = sign_in("alice")
    open_share_dialog(alice, session_id)
    # Staff have not allowed links anyone can open.
    expect(alice.locator("#share-anyone-row")).to_be_hidden()

    url = make_link(alice)

    assert re.fullmatch(rf"{re.escape(server.url)}/shared/[A-Za-z0-9_-]{{43}}/", url)
    expect(alice.locator(".share-row")).to_have_count(1)
    expect(alice.locator(".share-row").first).to_contain_text("active")
    shoot(alice, "share-dialog")

    bob = sign_in("bob", viewport=PHONE)
    bob.goto(url)
    expect(bob.locator("#timeline li.kind-user_message")).to_contain_text(
        "weather in london?"
    )
    expect(bob.locator("#shared-sub")).to_contain_text("Shared by alice")
    expect(bob.locator("#message")).to_have_count(0)
    assert no_horizontal_overflow(bob)
    shoot(bob, "shared-session-phone")

    bob.click("#fork-session")
    bob.wait_for_url(re.compile(r"/sessions/[^/]+/$"), timeout=TIMEOUT_MS)
    assert session_id not in bob.url
    expect(bob.locator("#timeline li.kind-user_message")).to_contain_text(
        "weather in london?"
    )
    expect(bob.locator("#message")).to_be_visible()

    alice.click("#share-dialog button:has-text('Close')")
    alice.click("#share-session")
    row = alice.locator(".share-row").first
    expect(row.locator(".share-views-button")).to_have_text("1 view")
    row.locator(".share-views-button").click()
    expect(row.locator(".share-view-list")).to_contain_text("bob")
    row.locator(".share-revoke").click()
    expect(alice.locator(".share-row").first).to_contain_text("revoked")

    bob.goto(url)
    expect(bob.locator("#share-gone")).to_contain_text("This link has ended")
    expect(bob.locator("#share-gone")).to_contain_text("revoked")
    expect(bob.locator("body")).not_to_contain_text("london")


def test_staff_allow_links_anyone_can_open(sign_in, api, browser, server):
    session_id = session_with_a_turn(api, "alice", "weather in paris?")
    admin = sign_in("admin")
    admin.goto("/staff/people/")
    box = admin.locator("#share-anyone-allowed")
    expect(box).to_be_enabled()
    if not box.is_checked():
        box.check()
    expect(admin.locator("#toasts")).to_contain_text(
        "Links anyone can open are allowed."
    )

    try:
        alice = sign_in("alice")
        open_share_dialog(alice, session_id)
        expect(alice.locator("#share-anyone-row")).to_be_visible()
        url = make_link(alice, anyone=True)

        stranger = browser.new_context(viewport=DESKTOP)
        try:
            page = stranger.new_page()
            page.goto(url)
            expect(page.locator("#timeline li.kind-user_message")).to_contain_text(
                "weather in paris?"
            )
            expect(page.locator("#sign-in-to-continue")).to_be_visible()
            assert no_horizontal_overflow(page)
        finally:
            stranger.close()
    finally:
        admin.goto("/staff/people/")
        expect(admin.locator("#share-anyone-allowed")).to_be_enabled()
        admin.locator("#share-anyone-allowed").uncheck()
        expect(admin.locator("#toasts")).to_contain_text("Only people signed in")
