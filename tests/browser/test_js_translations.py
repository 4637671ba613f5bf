"""The pages speak the catalog's language: with a German catalog in the page (Django's
JavaScript catalog shape, injected before any script runs), the home page and a
session page show German labels, built when they render, while the server's own
words (an agent's name, what the model says) stay as they are."""

import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import finished_runs, send
from tests.frontend.test_js_strings import CATALOG, read_po

pytestmark = pytest.mark.browser

# Django's jsi18n shape (django/views/i18n.py): catalog[msgid] is a string or the
# list of plural forms; a pgettext key is "context\x04msgid". Marked initialised, so
# the real catalog script, once base.html loads it, merges into this one.
FAKE_DJANGO = """
(() => {
  const catalog = %s;
  const pick = (value, n) => (Array.isArray(value) ? value[n === 1 ? 0 : 1] : value);
  const django = (globalThis.django = globalThis.django || {});
  django.catalog = Object.assign(django.catalog || {}, catalog);
  django.gettext = (msgid) => (typeof django.catalog[msgid] === "string" ? django.catalog[msgid] : msgid);
  django.ngettext = (one, many, n) =>
    django.catalog[one] ? pick(django.catalog[one], n) : n === 1 ? one : many;
  django.pgettext = (context, msgid) => {
    const value = django.catalog[`${context}\\x04${msgid}`];
    return typeof value === "string" ? value : msgid;
  };
  django.interpolate = (format, values) => format;
  django.jsi18n_initialized = true;
})();
"""


def german_catalog() -> dict:
    catalog = {}
    for entry in read_po(CATALOG):
        key = (
            f"{entry['msgctxt']}\x04{entry['msgid']}"
            if entry["msgctxt"]
            else entry["msgid"]
        )
        forms = [entry["msgstr"][i] for i in sorted(entry["msgstr"])]
        catalog[key] = forms if entry["msgid_plural"] else forms[0]
    return catalog


def in_german(page: Page) -> Page:
    page.context.add_init_script(FAKE_DJANGO % json.dumps(german_catalog()))
    return page


def test_home_and_session_pages_show_the_german_catalog(sign_in, shoot):
    page = in_german(sign_in("alice"))

    page.goto("/")
    start = page.locator('button[data-agent="calculator"]')
    expect(start).to_have_text("Beginnen")
    expect(start).to_have_attribute(
        "aria-label", "Eine Sitzung mit calculator beginnen"
    )
    shoot(page, "home-de")

    start.click()
    page.wait_for_url(re.compile(r"/sessions/[^/]+/$"))
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    send(page, "what is 6 times 7")

    # Strings built when the turn's frames arrive: the run line, the answer's
    # copy button, Edit and Regenerate, and a status from dom.js's table.
    expect(finished_runs(page)).to_have_count(1)
    expect(finished_runs(page).last).to_contain_text("Lauf erfolgreich")
    expect(page.locator("#timeline .edit-message")).to_have_text("Bearbeiten")
    expect(page.locator("#timeline .regenerate")).to_have_text("Neu erzeugen")
    expect(page.locator("#timeline .regenerate")).to_have_attribute(
        "aria-label", "Die letzte Antwort neu erzeugen"
    )
    expect(page.get_by_text("Run succeeded")).to_have_count(0)
    shoot(page, "session-de")

    # Back home: the sidebar's group of today's sessions, and New chat's agent.
    page.goto("/")
    expect(page.locator("#sidebar")).to_contain_text("mit calculator")
    expect(page.locator('#sidebar .sb-group[data-group="today"] h2')).to_have_text(
        "Heute"
    )


def test_without_a_catalog_the_pages_stay_english(sign_in):
    page = sign_in("alice")

    page.goto("/")

    expect(page.locator('button[data-agent="calculator"]')).to_have_text("Start")
