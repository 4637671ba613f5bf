"""The sessions sidebar, beside the home and the open session (sidebar.js): grouped
by last activity, New chat (the session appears and is named live, no reload),
search with the matching words, rename, archive and delete in place, the keyboard
(skip links, few Tab presses to New chat, the `?` list of shortcuts and the
shortcuts it lists), and on a phone a drawer, with no sideways scrolling.

Each test signs in as a person of its own, so that the list holds only her sessions.
"""

import re
import subprocess
import sys
import uuid

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PHONE
from tests.live.server import ROOT

WEATHER = "weather_sentiment"
CALCULATOR = "calculator"

MAKE_PERSON = (
    "from django.contrib.auth.models import User; "
    "User.objects.create_user('{name}', password='{name}')"
)
# The last activity of a session, moved back: the list's groups are by it.
BACKDATE = (
    "from datetime import timedelta; from django.utils import timezone; "
    "from agents.models import Session; "
    "Session.objects.filter(pk='{session}')"
    ".update(updated_at=timezone.now() - timedelta(days={days}))"
)


def shell(live_env, script: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )


@pytest.fixture
def person(live_env) -> str:
    """A new person, with no session yet (her password is her name)."""
    name = f"sb{uuid.uuid4().hex[:8]}"
    shell(live_env, MAKE_PERSON.format(name=name))
    return name


def new_session(
    client: httpx.Client, agent: str = WEATHER, *, title: str = "", say: str = ""
) -> str:
    session = client.post("/api/sessions/", json={"agent": agent}).json()["id"]
    if say:
        sent = client.post(
            f"/api/sessions/{session}/messages/?wait=1", json={"text": say}, timeout=60
        )
        assert sent.json()["status"] == "succeeded", sent.text
    if title:
        renamed = client.patch(f"/api/sessions/{session}/", json={"title": title})
        assert renamed.status_code == 200, renamed.text
    return session


def group(page: Page, key: str):
    return page.locator(f'#sessions section[data-group="{key}"]')


def row(page: Page, session: str):
    return page.locator(f'#sessions li[data-session="{session}"]')


def rows(page: Page):
    return page.locator("#sessions li.sb-item")


def menu_action(page: Page, session: str, name: str, action: str) -> None:
    row(page, session).get_by_role("button", name=f"Actions for “{name}”").click()
    row(page, session).get_by_role("menuitem", name=action).click()


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert width[0] <= width[1], f"the page scrolls sideways: {width}"


def test_sessions_are_grouped_by_last_activity_and_the_open_one_is_marked(
    sign_in, api, person, live_env, shoot
):
    client = api(person)
    today = new_session(client, title="Planning today")
    ages = {"yesterday": 1, "week": 3, "older": 40}
    made = {key: new_session(client, title=f"From {key}") for key in ages}
    for key, days in ages.items():
        shell(live_env, BACKDATE.format(session=made[key], days=days))

    page = sign_in(person)

    headings = page.locator("#sessions .sb-group-title")
    expect(headings).to_have_text(["Today", "Yesterday", "Previous 7 days", "Older"])
    expect(group(page, "today").locator("li")).to_have_count(1)
    expect(group(page, "today")).to_contain_text("Planning today")
    for key in ages:
        expect(
            group(page, key).locator(f'li[data-session="{made[key]}"]')
        ).to_have_text(re.compile(f"From {key}"))
    expect(page.locator('#sessions a[aria-current="page"]')).to_have_count(0)
    # A row says its title and agent, and nothing it was not given.
    expect(group(page, "today").locator("li")).to_have_text(
        re.compile(r"^\s*Planning today\s*⋯\s*weather_sentiment\s*$")
    )
    shoot(page, "sidebar-home")

    row(page, made["week"]).locator("a").click()

    expect(page.locator("#session-title")).to_have_text("From week")
    current = page.locator('#sessions a[aria-current="page"]')
    expect(current).to_have_count(1)
    expect(current).to_have_text("From week")
    expect(row(page, today)).to_be_visible()
    shoot(page, "sidebar-session")


def test_new_chat_starts_a_session_that_appears_and_is_named_live(sign_in, api, person):
    new_session(api(person), CALCULATOR, title="An older one")
    page = sign_in(person)
    # The default agent: the one of her latest session, one click away.
    expect(page.locator("#new-chat-agent")).to_have_text(f"with {CALCULATOR}")

    page.get_by_role("button", name="New chat", exact=True).click()

    page.wait_for_url(re.compile(r"/sessions/[^/]+/$"))
    session = page.url.rstrip("/").rsplit("/", 1)[-1]
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    first = group(page, "today").locator("li").first
    expect(first).to_have_attribute("data-session", session)
    expect(first.locator("a")).to_have_attribute("aria-current", "page")
    expect(first.locator("a")).to_have_text("New chat")
    page.evaluate("window.__samePage = true")

    page.fill("#message", "add 2 and 3 please")
    page.press("#message", "Enter")

    # The server names it from the first message: header and sidebar follow.
    expect(first.locator("a")).to_have_text("add 2 and 3 please")
    expect(page.locator("#session-title")).to_have_text("add 2 and 3 please")
    assert page.evaluate("window.__samePage") is True
    assert api(person).get(f"/api/sessions/{session}/").json()["agent"] == CALCULATOR

    # Another agent from New chat's menu; the one just named moves down a row.
    page.get_by_role("button", name="New chat with another agent").click()
    page.get_by_role("menuitem", name=WEATHER).click()

    page.wait_for_url(lambda url: session not in url and "/sessions/" in url)
    other = page.url.rstrip("/").rsplit("/", 1)[-1]
    today = group(page, "today").locator("li")
    expect(today).to_have_count(3)
    expect(today.nth(0)).to_have_attribute("data-session", other)
    expect(today.nth(1)).to_have_attribute("data-session", session)
    assert api(person).get(f"/api/sessions/{other}/").json()["agent"] == WEATHER


def test_a_session_made_in_another_tab_joins_the_list_when_this_one_is_seen(
    sign_in, api, person
):
    page = sign_in(person)
    expect(page.locator("#sessions")).to_contain_text("No sessions yet")

    made = new_session(api(person), title="Made elsewhere")
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")

    expect(group(page, "today").locator("li").first).to_have_attribute(
        "data-session", made
    )
    expect(page.locator("#sessions .state")).to_have_count(0)


def test_search_shows_the_matching_words_and_opens_a_result(
    sign_in, api, person, shoot
):
    mark = f"zq{uuid.uuid4().hex[:8]}"
    found = new_session(api(person), title="Trip", say=f"weather in london? {mark}")
    new_session(api(person), title="Another")
    page = sign_in(person)
    expect(rows(page)).to_have_count(2)

    page.fill("#session-search", mark)

    expect(page.locator("#sessions")).to_have_attribute("data-search", mark)
    expect(rows(page)).to_have_count(1)
    expect(row(page, found).locator(".snippet mark")).to_have_text([mark])
    expect(row(page, found).locator(".snippet")).to_contain_text("weather in london?")
    # Found sessions are ranked by how well they match, not grouped by day.
    expect(page.locator("#sessions .sb-group-title")).to_have_count(0)
    shoot(page, "sidebar-search")

    row(page, found).locator("a").click()

    expect(page.locator("#session-title")).to_have_text("Trip")


def test_rename_archive_and_delete_in_place(sign_in, api, person):
    client = api(person)
    keep = new_session(client, title="Keep me")
    archive = new_session(client, title="Old news")
    doomed = new_session(client, title="Scratch")
    page = sign_in(person)
    page.goto(f"/sessions/{keep}/")
    expect(page.locator("#session-title")).to_have_text("Keep me")

    # Rename the open session in the sidebar: the header follows.
    menu_action(page, keep, "Keep me", "Rename")
    field = page.get_by_role("textbox", name="Session title")
    field.fill("Kept and renamed")
    field.press("Enter")

    expect(row(page, keep).locator("a")).to_have_text("Kept and renamed")
    expect(page.locator("#session-title")).to_have_text("Kept and renamed")
    expect(
        row(page, keep).get_by_role("button", name="Actions for “Kept and renamed”")
    ).to_be_focused()
    # And the header's rename shows in the sidebar.
    page.get_by_role("button", name="Rename this session").click()
    field.fill("Renamed in the header")
    field.press("Enter")
    expect(row(page, keep).locator("a")).to_have_text("Renamed in the header")

    menu_action(page, archive, "Old news", "Archive")

    expect(page.locator("#toasts")).to_contain_text("Archived “Old news”")
    expect(row(page, archive)).to_have_count(0)
    page.check("#session-archived")
    expect(row(page, archive)).to_be_visible()
    menu_action(page, archive, "Old news", "Unarchive")
    expect(row(page, archive)).to_have_count(0)
    page.uncheck("#session-archived")
    expect(row(page, archive)).to_be_visible()

    menu_action(page, doomed, "Scratch", "Delete")
    question = row(page, doomed).get_by_role("group", name="Delete “Scratch”?")
    expect(question).to_contain_text("Delete it and its events for good?")
    question.get_by_role("button", name="Keep").click()
    expect(question).to_have_count(0)
    assert client.get(f"/api/sessions/{doomed}/").status_code == 200

    menu_action(page, doomed, "Scratch", "Delete")
    question.get_by_role("button", name="Delete").click()

    expect(row(page, doomed)).to_have_count(0)
    expect(page.locator("#toasts")).to_contain_text("Deleted “Scratch”")
    assert client.get(f"/api/sessions/{doomed}/").status_code == 404
    assert client.get(f"/api/sessions/{archive}/").json()["archived_at"] is None

    # Deleting the open session leaves for the home.
    menu_action(page, keep, "Renamed in the header", "Delete")
    row(page, keep).get_by_role("group").get_by_role("button", name="Delete").click()
    page.wait_for_url(re.compile(r"/$"))


def test_new_chat_is_a_few_tabs_away_with_twenty_sessions(sign_in, api, person):
    client = api(person)
    for number in range(21):
        new_session(client, title=f"Ledger {number}")
    page = sign_in(person)
    expect(rows(page)).to_have_count(20)

    presses = 0
    while presses < 10:
        page.keyboard.press("Tab")
        presses += 1
        if page.evaluate("document.activeElement.id") == "new-chat":
            break
    assert page.evaluate("document.activeElement.id") == "new-chat"
    assert presses <= 3, f"{presses} Tab presses to New chat"

    # The skip links: to the sessions, and past them.
    page.goto("/")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to content")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to sessions")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(page.locator("#new-chat")).to_be_focused()

    page.get_by_role("button", name="Load more").click()
    expect(rows(page)).to_have_count(21)
    expect(page.locator("#sessions-count")).to_have_text("21 sessions shown.")

    # A session's page: the first skip link goes past the sessions, to the conversation.
    page.goto(f"/sessions/{new_session(client)}/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    skip = page.locator("a.skip-link").first
    expect(skip).to_have_text("Skip to conversation")
    skip.focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Rename this session")).to_be_focused()


def test_question_mark_lists_the_shortcuts_that_work(sign_in, api, person):
    new_session(api(person), CALCULATOR, title="Sums")
    page = sign_in(person)
    expect(page.locator("#new-chat")).to_be_enabled()

    page.fill("#session-search", "why?")  # typed in a field: no dialog
    expect(page.locator("#shortcuts-dialog")).to_have_count(0)
    page.fill("#session-search", "")
    page.locator("#main").focus()

    page.keyboard.press("?")

    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    for words in ("Start a new chat", "Search your sessions", "Show these shortcuts"):
        expect(dialog).to_contain_text(words)
    # The home has no message box: its keys are not listed.
    expect(dialog).not_to_contain_text("Send the message")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.keyboard.press("Control+k")
    expect(page.locator("#session-search")).to_be_focused()
    page.locator("#main").focus()
    page.keyboard.press("/")
    expect(page.locator("#session-search")).to_be_focused()

    page.keyboard.press("Control+Shift+O")
    page.wait_for_url(re.compile(r"/sessions/[^/]+/$"))
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    page.locator("#main").focus()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_contain_text("Send the message")
    expect(dialog).to_contain_text("Stop the running turn")


def test_on_a_phone_the_sidebar_is_a_drawer_and_nothing_scrolls_sideways(
    sign_in, api, person, shoot
):
    session = new_session(api(person), title="A title long enough to wrap " * 3)
    page = sign_in(person, viewport=PHONE)
    sidebar = page.locator("#sidebar")
    toggle = page.get_by_role("button", name="Sessions", exact=True)
    expect(sidebar).to_be_hidden()
    no_sideways_scroll(page)

    toggle.click()

    expect(sidebar).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#new-chat")).to_be_focused()
    expect(row(page, session)).to_be_visible()
    no_sideways_scroll(page)
    shoot(page, "sidebar-phone-drawer")
    page.keyboard.press("Escape")
    expect(sidebar).to_be_hidden()
    expect(toggle).to_be_focused()

    page.goto(f"/sessions/{session}/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    no_sideways_scroll(page)
    toggle.click()
    expect(row(page, session).locator("a")).to_have_attribute("aria-current", "page")
    page.get_by_role("button", name="Close the sessions list").click()
    expect(sidebar).to_be_hidden()

    page.set_viewport_size(DESKTOP)
    expect(sidebar).to_be_visible()
    expect(toggle).to_be_hidden()
    no_sideways_scroll(page)
