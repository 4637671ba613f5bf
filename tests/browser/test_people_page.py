"""The People page (staff): an invitation's link makes an account that shows in
the list; a user switched off loses her open page at once; a user made staff; and
the Changes page lists who did it."""

import itertools
import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP
from tests.browser.pages import start_session

pytestmark = pytest.mark.browser

STRONG = "correct-horse-battery-staple"
_names = itertools.count(1)


def fresh_name(stem: str) -> str:
    return f"{stem}{next(_names)}"


def new_page(browser: Browser, server) -> Page:
    context = browser.new_context(viewport=DESKTOP, base_url=server.url)
    context.set_default_timeout(15_000)
    return context.new_page()


def password_sign_in(page: Page, username: str) -> None:
    page.goto("/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", STRONG)
    page.click("button[type=submit]")


def made_user(api, username: str) -> None:
    created = api("admin").post(
        "/api/users/", json={"username": username, "password": STRONG}
    )
    assert created.status_code == 201, created.text


def pick(admin: Page, username: str) -> None:
    admin.goto("/staff/people/")
    admin.fill("#people-search", username)
    admin.locator(f'#people-list li[data-user="{username}"] button').click()
    expect(admin.locator("#person-title")).to_contain_text(username)


def test_an_invitee_signs_up_with_the_link_and_is_listed(
    sign_in, browser, server, api, shoot
):
    name = fresh_name("newbie")
    admin = sign_in("admin")
    admin.goto("/staff/people/")
    expect(admin.get_by_role("link", name="People")).to_have_attribute(
        "aria-current", "page"
    )
    admin.get_by_role("button", name="Invite").click()
    admin.locator('#invite-form input[name="groups"][value="managers"]').check()
    admin.get_by_role("button", name="Make the link").click()
    link = admin.locator("#invite-link")
    expect(link).to_have_value(re.compile(r"/invite/[\w-]+/$"))
    expect(admin.locator("#invite-list li")).not_to_have_count(0)
    shoot(admin, "people-invite")

    invitee = new_page(browser, server)
    invitee.goto(link.input_value())
    invitee.fill("#id_username", name)
    invitee.fill("#id_password1", "short")
    invitee.fill("#id_password2", "short")
    invitee.get_by_role("button", name="Make my account").click()
    expect(invitee.locator("#password2-error")).to_contain_text("too short")
    invitee.fill("#id_password1", STRONG)
    invitee.fill("#id_password2", STRONG)
    invitee.get_by_role("button", name="Make my account").click()
    invitee.wait_for_url(f"{server.url}/")
    expect(invitee.locator(".who")).to_contain_text(name)

    again = new_page(browser, server)
    again.goto(link.input_value())
    expect(again.locator("#invite-refused")).to_contain_text("used already")

    admin.fill("#people-search", name)
    listed = admin.locator(f'#people-list li[data-user="{name}"]')
    expect(listed).to_be_visible()
    listed.locator("button").click()
    expect(admin.locator("#person-groups")).to_contain_text("managers")


def test_a_user_switched_off_loses_her_open_page_at_once(
    sign_in, browser, server, api, shoot
):
    name = fresh_name("leaver")
    made_user(api, name)
    her = new_page(browser, server)
    password_sign_in(her, name)
    her.wait_for_url(f"{server.url}/")
    start_session(her, "weather_sentiment")

    admin = sign_in("admin")
    pick(admin, name)
    admin.once("dialog", lambda dialog: dialog.accept())
    admin.get_by_role("button", name="Switch off").click()
    expect(admin.locator("#person-title")).to_contain_text("switched off")

    # Her socket is closed at once: her page goes to the sign-in form.
    her.wait_for_url(re.compile(r"/login/"))
    password_sign_in(her, name)
    expect(her.get_by_role("alert")).to_contain_text("didn't match")
    assert "/login/" in her.url
    assert api("admin").get(f"/api/users/{name}/").json()["is_active"] is False

    admin.goto("/staff/changes/?kind=auth.user")
    row = admin.locator("#change-table tbody tr").filter(has_text=name).first
    expect(row).to_contain_text("is_active")
    expect(row).to_contain_text("admin")
    shoot(admin, "changes")


def test_staff_make_a_user_staff(sign_in, browser, server, api):
    name = fresh_name("promoted")
    made_user(api, name)
    admin = sign_in("admin")
    pick(admin, name)

    admin.get_by_role("button", name="Make staff").click()

    expect(admin.locator("#person-title")).to_contain_text("staff")
    expect(admin.get_by_role("button", name="Remove staff")).to_be_visible()
    assert api("admin").get(f"/api/users/{name}/").json()["is_staff"] is True
    her = new_page(browser, server)
    password_sign_in(her, name)
    her.goto("/staff/people/")
    expect(her.locator("#people-list")).to_contain_text(name)


def test_a_weak_password_is_refused_next_to_the_field(sign_in):
    admin = sign_in("admin")
    admin.goto("/staff/people/")
    admin.get_by_role("button", name="New user").click()
    admin.fill('#create-form input[name="username"]', fresh_name("weak"))
    admin.fill('#create-form input[name="password"]', "12345678")
    admin.get_by_role("button", name="Create").click()

    expect(admin.locator('#create-form [data-error="password"]')).to_contain_text(
        "numeric"
    )
