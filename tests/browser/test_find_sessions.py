"""Finding a session again in a browser: the sidebar's list searched by a word in it,
filtered by agent, archived and brought back, deleted after a question, a page at a
time; renamed in place in the list (each row's menu) and on the session page (Enter
saves, Escape cancels).

The live server's database is shared by the browser suite, so each test names its
sessions with a word of its own and searches for it.
"""

import uuid

from playwright.sync_api import Page, expect

WEATHER = "weather_sentiment"
CALCULATOR = "calculator"


def word() -> str:
    """A word no other session holds."""
    return f"zq{uuid.uuid4().hex[:10]}"


def new_session(api, agent: str, *, title: str = "", say: str = "") -> str:
    client = api("alice")
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


def search(page: Page, words: str) -> None:
    """Type a search, and wait until the list shows its results."""
    page.fill("#session-search", words)
    expect(page.locator("#sessions")).to_have_attribute("data-search", words)


def rows(page: Page):
    return page.locator("#sessions li.sb-item")


def row(page: Page, session: str):
    return page.locator(f'#sessions li[data-session="{session}"]')


def act(page: Page, session: str, name: str, action: str) -> None:
    """Choose `action` in the menu of the session's row (named `name`)."""
    row(page, session).get_by_role("button", name=f"Actions for “{name}”").click()
    row(page, session).get_by_role("menuitem", name=action).click()


def test_a_word_from_a_message_or_the_answer_finds_the_session(sign_in, api, shoot):
    mark = word()
    found = new_session(api, WEATHER, say=f"weather in london? {mark}")
    new_session(api, WEATHER, title=f"other {word()}")
    page = sign_in("alice")

    search(page, mark)

    expect(rows(page)).to_have_count(1)
    expect(row(page, found).locator("a.session-link")).to_have_text(
        f"weather in london? {mark}"
    )
    expect(row(page, found)).to_contain_text(WEATHER)

    search(page, f"cloudy {mark}")  # a word of the model's answer, any order

    expect(rows(page)).to_have_count(1)
    search(page, f"sunny-side {mark}")
    expect(page.locator("#sessions")).to_contain_text("No session matches")
    shoot(page, "find-sessions-search")


def test_a_found_session_shows_its_matching_words_as_text_marked(sign_in, api):
    mark = word()
    markup = '<img src=x onerror="window.pwned=1"><b>bold</b>'
    found = new_session(api, WEATHER, title="Trip", say=f"{markup} {mark} london")
    page = sign_in("alice")

    search(page, mark)

    snippet = row(page, found).locator(".snippet")
    expect(snippet).to_contain_text("<b>bold</b>")  # the markup shown as text
    expect(snippet.locator("mark")).to_have_text([mark])
    expect(row(page, found).locator("img, b")).to_have_count(0)
    assert page.evaluate("window.pwned") is None


def test_a_session_is_renamed_in_the_list_and_on_its_page(sign_in, api, shoot):
    mark = word()
    session = new_session(api, WEATHER, title=f"Draft {mark}")
    page = sign_in("alice")
    search(page, mark)
    link = row(page, session).locator("a.session-link")
    expect(link).to_have_text(f"Draft {mark}")

    act(page, session, f"Draft {mark}", "Rename")
    field = page.get_by_role("textbox", name="Session title")
    field.fill("Never saved")
    field.press("Escape")

    expect(field).to_have_count(0)
    expect(link).to_have_text(f"Draft {mark}")

    act(page, session, f"Draft {mark}", "Rename")
    field.fill(f"Offsite {mark}")
    field.press("Enter")

    expect(row(page, session).locator("a.session-link")).to_have_text(f"Offsite {mark}")
    expect(
        row(page, session).get_by_role("button", name=f"Actions for “Offsite {mark}”")
    ).to_be_focused()

    row(page, session).locator("a.session-link").click()
    heading = page.locator("#session-title")
    expect(heading).to_have_text(f"Offsite {mark}")
    page.get_by_role("button", name="Rename this session").click()
    field.fill("   ")
    field.press("Enter")

    expect(page.locator(".title-editor [role=alert]")).to_contain_text("blank")
    field.fill(f"Offsite plans {mark}")
    field.press("Enter")

    expect(heading).to_have_text(f"Offsite plans {mark}")
    expect(page.get_by_role("button", name="Rename this session")).to_be_focused()
    shoot(page, "find-sessions-renamed")
    shown = api("alice").get(f"/api/sessions/{session}/").json()
    assert shown["title"] == f"Offsite plans {mark}"


def test_sessions_are_filtered_by_agent_archived_and_brought_back(sign_in, api, shoot):
    mark = word()
    weather = new_session(api, WEATHER, title=f"Weather {mark}")
    sums = new_session(api, CALCULATOR, title=f"Sums {mark}")
    page = sign_in("alice")
    search(page, mark)
    expect(rows(page)).to_have_count(2)

    page.select_option("#session-agent", CALCULATOR)

    expect(rows(page)).to_have_count(1)
    expect(row(page, sums)).to_be_visible()

    act(page, sums, f"Sums {mark}", "Archive")

    expect(page.locator("#toasts")).to_contain_text(f"Archived “Sums {mark}”")
    expect(row(page, sums)).to_have_count(0)
    page.select_option("#session-agent", "")
    expect(rows(page)).to_have_count(1)
    expect(row(page, weather)).to_be_visible()

    page.check("#session-archived")

    expect(rows(page)).to_have_count(1)
    expect(row(page, sums)).to_be_visible()
    shoot(page, "find-sessions-archived")

    act(page, sums, f"Sums {mark}", "Unarchive")

    expect(row(page, sums)).to_have_count(0)
    page.uncheck("#session-archived")
    expect(rows(page)).to_have_count(2)
    assert api("alice").get(f"/api/sessions/{sums}/").json()["archived_at"] is None


def test_a_session_is_deleted_only_when_the_person_confirms(sign_in, api):
    mark = word()
    session = new_session(api, WEATHER, title=f"Old {mark}")
    page = sign_in("alice")
    search(page, mark)

    act(page, session, f"Old {mark}", "Delete")
    question = row(page, session).get_by_role("group", name=f"Delete “Old {mark}”?")
    expect(question).to_contain_text("Delete it and its events for good?")
    question.get_by_role("button", name="Keep").click()

    expect(question).to_have_count(0)
    assert api("alice").get(f"/api/sessions/{session}/").status_code == 200

    act(page, session, f"Old {mark}", "Delete")
    question.get_by_role("button", name="Delete").click()

    expect(row(page, session)).to_have_count(0)
    expect(page.locator("#toasts")).to_contain_text(f"Deleted “Old {mark}”")
    assert api("alice").get(f"/api/sessions/{session}/").status_code == 404


def test_more_sessions_load_a_page_at_a_time(sign_in, api):
    mark = word()
    for number in range(21):
        new_session(api, CALCULATOR, title=f"Ledger {number} {mark}")
    page = sign_in("alice")

    search(page, mark)

    expect(rows(page)).to_have_count(20)
    more = page.get_by_role("button", name="Load more")
    more.click()

    expect(rows(page)).to_have_count(21)
    expect(more).to_be_hidden()
    expect(page.locator("#sessions-count")).to_have_text("21 sessions shown.")
