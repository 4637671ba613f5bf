"""The session timeline as a reader meets it: each tool call one line that opens to
its arguments and result, long values cut with "Show all", agents called as tools
indented under their caller, and a long session that opens at its end and pages back
as the reader scrolls up (or presses "Load earlier events")."""

import re
import subprocess
import sys

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import NEW_TIMELINE, shown_seqs
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

WEATHER_CARD = '.card.call[data-tool="get_weather_report"]'
GROW = (
    "from bench.long_sessions import grow_session; "
    "grow_session(session_id={session!r}, events={events})"
)
LONG = 500


def session_with(api, agent: str, *texts: str) -> str:
    """A session of alice's with `agent`, its turns over."""
    alice = api("alice")
    session = alice.post("/api/sessions/", json={"agent": agent}).json()["id"]
    for text in texts:
        ran = alice.post(
            f"/api/sessions/{session}/messages/?wait=1", json={"text": text}
        )
        assert ran.status_code == 200, ran.text
    return session


def grow(live_env, session: str, events: int) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", GROW.format(**locals())],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )


def open_session(page: Page, session: str) -> None:
    page.goto(f"/sessions/{session}/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")


def item_seqs(page: Page) -> list[int]:
    return page.locator("#timeline > li[data-seq]").evaluate_all(
        "els => els.map(el => Number(el.dataset.seq))"
    )


def test_a_call_is_one_line_that_opens_to_its_arguments_and_result(sign_in, api, shoot):
    session = session_with(api, "weather_sentiment", "weather in london?")
    page = sign_in("alice")
    open_session(page, session)

    card = page.locator(WEATHER_CARD)
    line = card.locator("summary.call-line")
    expect(line.locator("code.call-name")).to_have_text("get_weather_report")
    expect(line.locator(".call-key")).to_have_text(re.compile(r"^city: london$", re.I))
    expect(line.locator(".call-status")).to_have_text("ok")
    expect(line.locator(".call-duration")).to_have_text(re.compile(r"\d+ (ms|s)"))
    expect(card.locator(".call-args")).to_be_hidden()
    expect(card.locator(".call-result")).to_be_hidden()
    assert line.bounding_box()["height"] < 40, "the call takes more than one line"
    shoot(page, "session-call-folded")

    line.focus()
    page.keyboard.press("Enter")
    expect(card.locator(".call-args .json-key")).to_have_text(["city"])
    expect(card.locator(".call-result")).to_be_visible()
    expect(card.locator(".call-result")).to_contain_text("cloudy")
    shoot(page, "session-call-open")
    page.keyboard.press("Space")
    expect(card.locator(".call-result")).to_be_hidden()
    line.click()
    expect(card.locator(".call-args")).to_be_visible()


JSON_SCRIPT = (
    """
async () => {
"""
    + NEW_TIMELINE
    + """  const frame = (seq, kind, extra) => ({
    type: "event", seq, session: "s",
    event: { id: `e${seq}`, invocation_id: "i1", author: "bot", kind, partial: false,
             ts: 100 + seq, ...extra },
  });
  const long = "word ".repeat(400) + "THE END";
  const rows = Array.from({ length: 100 }, (_, i) => ({ id: i, deep: { deeper: { n: i } } }));
  timeline.apply(frame(1, "function_call", { function_calls: [
    { id: "c1", name: "fetch_page", args: { url: "https://example.com/" + "a".repeat(90), depth: 2 } }] }));
  timeline.apply(frame(2, "function_response", { function_responses: [
    { id: "c1", name: "fetch_page", status: "ok", response: { body: long, rows } }] }));
  const card = list.querySelector(".card.call");
  card.querySelector("details").open = true;
  const result = card.querySelector(".call-result");
  const rowsList = () => result.querySelector(
    ".json-tree > .json-entries > .json-entry:nth-child(2) > details > .json-entries");
  const rowCount = () => rowsList().querySelectorAll(":scope > .json-entry").length;
  const more = () => [...result.querySelectorAll("button.json-more")].map((b) => b.textContent);
  const before = {
    key: card.querySelector(".call-key").textContent,
    more: more(),
    hasEnd: result.textContent.includes("THE END"),
    rows: rowCount(),
    openFolds: [...result.querySelectorAll("details.json-fold")].map((d) => d.open),
  };
  result.querySelector("button.json-more").click();
  const afterString = { hasEnd: result.textContent.includes("THE END"), more: more() };
  result.querySelector("button.json-more").click();
  return {
    before, afterString,
    rows: rowCount(),
    more: more(),
    focused: result.contains(document.activeElement),
  };
}
"""
)


def test_long_values_are_cut_with_show_all_and_deep_ones_folded(browser, server):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")

    shown = page.evaluate(JSON_SCRIPT)
    context.close()

    before = shown["before"]
    assert before["key"].startswith("url: https://example.com/aaa")
    assert before["key"].endswith("…") and len(before["key"]) < 60
    assert before["more"] == ["Show all 2,007 characters", "Show all 100 items"]
    assert before["hasEnd"] is False
    assert before["rows"] == 40
    # The result and its rows are open; each row's nested objects start folded.
    assert before["openFolds"][:2] == [True, False]
    assert shown["afterString"] == {"hasEnd": True, "more": ["Show all 100 items"]}
    assert shown["rows"] == 100
    assert shown["more"] == []
    assert shown["focused"] is True


SUMMARY = (
    'summarize "Toolcrib runs agents and their tools on Django with live streams '
    'and many users"'
)


def test_an_agent_called_as_a_tool_is_indented_under_its_caller(sign_in, api, shoot):
    session = session_with(api, "briefing", SUMMARY)
    page = sign_in("alice")
    open_session(page, session)

    caller = page.locator('.card.call[data-tool="summarizer"]')
    nested = page.locator('#timeline > li.nested[data-agent="summarizer"]')
    expect(caller.locator(".call-status")).to_have_text("ok")
    expect(nested.first).to_be_visible()
    expect(nested.first.locator(".nested-by")).to_have_text(
        "summarizer called by briefing_agent"
    )
    expect(nested.locator(".nested-by")).to_have_count(1)
    expect(nested.last).to_contain_text("In short:")
    caller_left = caller.bounding_box()["x"]
    for box in (item.bounding_box() for item in nested.all()):
        assert box["x"] >= caller_left + 20, "a called agent's event is not indented"
    root_answer = page.locator("#timeline > li.kind-text:not(.nested)").last
    expect(root_answer).to_be_visible()
    assert root_answer.bounding_box()["x"] < caller_left + 20
    shoot(page, "session-agent-called-as-a-tool")


def test_a_call_waiting_for_approval_stays_open(sign_in, api):
    session = session_with(api, "bank", 'wire 500 to "bob"')
    page = sign_in("alice")
    open_session(page, session)

    wire = page.locator('.card.call[data-tool="wire_money"]')
    expect(wire.locator("details.call-details")).to_have_attribute("open", "")
    expect(wire.locator(".call-args")).to_be_visible()
    expect(wire.locator(".call-args")).to_contain_text("bob")
    approve = wire.get_by_role("button", name="Approve wire_money")
    expect(approve).to_be_visible()
    wire.locator("summary.call-line").click()  # folding the call keeps the request
    expect(wire.locator(".call-args")).to_be_hidden()
    expect(approve).to_be_visible()


@pytest.fixture
def long_session(api, live_env) -> str:
    session = session_with(api, "weather_sentiment", "weather in london?")
    grow(live_env, session, LONG)
    return session


def test_a_long_session_opens_at_its_end_and_pages_back_in_order(
    sign_in, api, long_session
):
    page = sign_in("alice")
    open_session(page, long_session)
    expect(page.locator(f'#timeline > li[data-seq="{LONG}"]')).to_be_visible()
    first_page = shown_seqs(page)
    assert max(first_page) == LONG
    assert len(first_page) < LONG / 2, "the page read the whole session"
    scroller = page.locator("#timeline-scroll")
    assert (
        scroller.evaluate("el => el.scrollHeight - el.scrollTop - el.clientHeight") < 5
    )

    # Scrolled to the top, the page reads the one before, and what was at the top
    # stays where the reader saw it.
    kept = page.locator("#timeline > li[data-seq]").first
    kept_seq = kept.get_attribute("data-seq")
    top_before = scroller.evaluate(
        "el => { el.scrollTop = 0; return el.querySelector('li[data-seq]').getBoundingClientRect().top; }"
    )
    expect(page.locator("#timeline > li[data-seq]").first).not_to_have_attribute(
        "data-seq", kept_seq
    )
    top_after = page.locator(f'#timeline > li[data-seq="{kept_seq}"]').evaluate(
        "el => el.getBoundingClientRect().top"
    )
    assert abs(top_after - top_before) < 5, (top_before, top_after)

    for _ in range(20):
        if page.locator("#history-edge[data-state=start]").count():
            break
        scroller.evaluate("el => { el.scrollTop = 0; }")
        page.wait_for_timeout(200)
    expect(page.locator("#history-edge")).to_have_text("The start of this session")
    seqs = shown_seqs(page)
    assert sorted(seqs) == list(range(1, LONG + 1)), "a gap or a duplicate"
    items = item_seqs(page)
    assert items == sorted(items), "events out of order"
    # Every result met its call: no card stands for a result alone.
    assert page.locator(".card.call:not(:has(.call-author))").count() == 0
    assert page.locator(f'{WEATHER_CARD}[data-status="running"]').count() == 0

    # The socket resumes after the newest event, not the oldest shown.
    ran = api("alice").post(
        f"/api/sessions/{long_session}/messages/?wait=1",
        json={"text": "weather in paris?"},
    )
    assert ran.status_code == 200, ran.text
    expect(page.locator(f'#timeline > li[data-seq="{LONG + 6}"]')).to_be_attached()
    seqs = shown_seqs(page)
    assert sorted(seqs) == list(range(1, LONG + 7))


def test_load_earlier_events_works_from_the_keyboard(sign_in, long_session):
    page = sign_in("alice")
    open_session(page, long_session)
    expect(page.locator(f'#timeline > li[data-seq="{LONG}"]')).to_be_visible()
    oldest = min(shown_seqs(page))

    page.focus("#timeline-scroll")
    page.keyboard.press("Tab")
    button = page.get_by_role("button", name="Load earlier events")
    expect(button).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.locator(f'#timeline > li[data-seq="{oldest - 1}"]')).to_be_attached()
    seqs = shown_seqs(page)
    assert sorted(seqs) == list(range(min(seqs), LONG + 1))
    expect(button).to_be_focused()


JOIN_SCRIPT = (
    """
async () => {
"""
    + NEW_TIMELINE
    + """  const frame = (seq, kind, extra) => ({
    type: "event", seq, session: "s",
    event: { id: `e${seq}`, invocation_id: "i1", author: "bot", kind, partial: false,
             ts: 100 + seq, ...extra },
  });
  const call = { id: "c1", name: "lookup", args: { city: "oslo" } };
  // The newest page holds only the final result; its call is far further back.
  timeline.applyAll([frame(900, "function_response", { author: "user",
    function_responses: [{ id: "c1", name: "lookup", status: "ok", response: { report: "mild" } }] })]);
  const before = list.querySelectorAll(".card.call").length;
  timeline.prepend([
    frame(1, "function_call", { function_calls: [call], long_running_tool_ids: ["c1"] }),
    frame(2, "function_response", { function_responses: [
      { id: "c1", name: "lookup", status: "pending", response: { status: "pending" } }] }),
  ]);
  const card = list.querySelector(".card.call");
  return {
    before,
    cards: list.querySelectorAll(".card.call").length,
    status: card.dataset.status,
    line: card.querySelector(".call-status").textContent,
    result: card.querySelector(".call-result").textContent,
    interim: card.querySelector(".interim") !== null,
    note: list.querySelector('li[data-seq="900"]').textContent,
    seqs: [...list.querySelectorAll("[data-seq]")].map((el) => Number(el.dataset.seq)),
  };
}
"""
)


def test_a_result_drawn_before_its_call_joins_it_when_the_call_is_paged_in(
    browser, server
):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")

    shown = page.evaluate(JOIN_SCRIPT)
    context.close()

    assert shown["before"] == 1
    assert shown["cards"] == 1
    assert shown["status"] == "ok"
    assert shown["line"] == "ok"
    assert "mild" in shown["result"]
    assert shown["interim"] is True
    assert shown["note"] == "The result of lookup: in its call above."
    assert shown["seqs"] == [1, 2, 900]
