"""Her theme and language in a real browser (docs/i18n.md): the user menu's pickers,
a theme applied at once and kept, "As the system" following the OS, and a language
that reloads the page in it."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE

pytestmark = pytest.mark.browser

LIGHT = "rgb(245, 246, 248)"  # app.css --bg
DARK = "rgb(16, 19, 26)"
USER = "bob"


def background(page: Page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def choose(page: Page, picker: str, value: str) -> None:
    """Open the user menu (if it is closed) and pick `value`."""
    if not page.locator("#user-menu").evaluate("menu => menu.open"):
        page.click("#user-menu summary")
    page.select_option(picker, value)


@pytest.fixture
def bob_page(sign_in, api):
    """bob's page; his choices are put back after (the server outlives the test)."""
    yield sign_in
    api(USER).patch(
        "/api/me/preferences/", json={"theme": "system", "language": "auto"}
    )


def test_a_theme_applies_at_once_and_stays(bob_page, shoot):
    page = bob_page(USER)
    page.emulate_media(color_scheme="light")
    expect(page.locator("html")).not_to_have_attribute("data-theme", re.compile("."))
    assert background(page) == LIGHT
    page.evaluate("window.__sameDocument = true")

    choose(page, "#pref-theme", "dark")
    page.wait_for_function(
        f"getComputedStyle(document.body).backgroundColor === '{DARK}'"
    )
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    shoot(page, "theme-dark")

    # Kept: the server renders it, before any script runs.
    page.wait_for_load_state("networkidle")
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert background(page) == DARK
    expect(page.locator("#pref-theme")).to_have_value("dark")

    choose(page, "#pref-theme", "light")
    page.emulate_media(color_scheme="dark")
    page.wait_for_function(
        f"getComputedStyle(document.body).backgroundColor === '{LIGHT}'"
    )

    choose(page, "#pref-theme", "system")
    page.wait_for_function(
        f"getComputedStyle(document.body).backgroundColor === '{DARK}'"
    )
    page.emulate_media(color_scheme="light")
    assert background(page) == LIGHT
    page.wait_for_load_state("networkidle")
    page.reload()
    expect(page.locator("#pref-theme")).to_have_value("system")
    assert background(page) == LIGHT


def test_a_language_reloads_the_page_in_it(bob_page, shoot):
    page = bob_page(USER, viewport=PHONE)
    expect(page.locator("html")).to_have_attribute("lang", "en")

    choose(page, "#pref-language", "de")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.locator(".mainnav")).to_contain_text("Sitzungen")
    expect(page.locator("h1").first).to_have_text("Einen Chat beginnen")
    # The pages' modules read the catalog the server sent (i18n.js).
    assert page.evaluate("typeof globalThis.django.gettext") == "function"
    page.click("#user-menu summary")
    expect(page.locator("#user-menu")).to_contain_text("Abmelden")
    shoot(page, "language-de-phone")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the menu overflows the phone's width"

    page.select_option("#pref-language", "auto")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("h1").first).to_have_text("Start a chat")
