"""The dashboard in a real browser: chat with a live timeline, governance reaching an
open session, replay after the server drops the socket, and every page rendered.

Tests run in file order and share one server; the reconnect test restarts it, last.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE

pytestmark = pytest.mark.browser

WEATHER_CARD = '.card.call[data-tool="get_weather_report"]'


def start_session(page: Page, agent: str) -> str:
    page.goto("/")
    page.click(f'button[data-agent="{agent}"]')
    page.wait_for_url(re.compile(r"/sessions/[^/]+/$"))
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    return page.url.rstrip("/").rsplit("/", 1)[-1]


def send(page: Page, text: str) -> None:
    page.fill("#message", text)
    page.press("#message", "Enter")


def finished_runs(page: Page):
    return page.locator("#timeline li.kind-run_finished")


def shown_seqs(page: Page) -> list[int]:
    return [
        int(v)
        for v in page.locator("#timeline [data-seq]").evaluate_all(
            "els => els.map(el => el.dataset.seq)"
        )
    ]


TIMELINE_SCRIPT = """
async () => {
  const { Timeline } = await import("/static/frontend/timeline.js");
  const list = document.createElement("ol");
  const scroller = document.createElement("div");
  scroller.append(list);
  document.body.append(scroller);
  const timeline = new Timeline(list, scroller);
  const frame = (seq, kind, extra) => ({
    type: "event", seq, session: "s",
    event: { id: `e${seq}`, invocation_id: "i1", author: "bot", kind, partial: false,
             ts: 100 + (seq || 0), ...extra },
  });
  const call = { id: "c1", name: "lookup", args: { city: "oslo" } };
  const calls = [
    frame(1, "function_call", { function_calls: [call], long_running_tool_ids: ["c1"] }),
    frame(2, "function_response", { function_responses: [
      { id: "c1", name: "lookup", response: { status: "pending" }, status: "pending" }] }),
    frame(3, "function_response", { function_responses: [
      { id: "c1", name: "lookup", response: { report: "mild" }, status: "ok" }] }),
  ];
  for (const item of calls) timeline.apply(item);
  timeline.apply(frame(null, "text", { text: "It is ", partial: true }));
  timeline.apply(frame(null, "text", { text: "mild.", partial: true }));
  const streamed = list.querySelector(".streaming .bubble-text").textContent;
  timeline.apply(frame(4, "text", { text: "It is mild." }));
  const replayed = [...calls, frame(4, "text", { text: "It is mild." })].map(
    (item) => timeline.apply(item));
  const card = list.querySelector(".card.call");
  return {
    streamed,
    replayed,
    streaming: list.querySelectorAll(".streaming").length,
    seqs: [...list.querySelectorAll("[data-seq]")].map((el) => Number(el.dataset.seq)),
    status: card.dataset.status,
    result: card.querySelector(".call-result").textContent,
    duration: card.querySelector(".call-duration").textContent,
    texts: [...list.querySelectorAll(".kind-text .bubble-text")].map((el) => el.textContent),
  };
}
"""


def test_timeline_streams_partial_text_merges_results_and_dedupes(browser, server):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")

    shown = page.evaluate(TIMELINE_SCRIPT)
    context.close()

    assert shown["streamed"] == "It is mild."
    assert shown["streaming"] == 0
    assert shown["texts"] == ["It is mild."]
    assert shown["replayed"] == [False, False, False, False]
    assert shown["seqs"] == [1, 2, 3, 4]
    assert shown["status"] == "ok"
    assert "mild" in shown["result"]
    assert shown["duration"] == "2.00 s"


def test_chat_shows_the_function_call_card_live_and_signs_out(sign_in, shoot):
    page = sign_in("alice")
    expect(page.locator("#agents .agent-option").first).to_be_visible()
    expect(page.locator("#sessions .state")).to_contain_text("No sessions yet")
    shoot(page, "home-alice")
    start_session(page, "weather_sentiment")
    expect(page.locator("#timeline-state")).to_contain_text("Nothing here yet")
    page.evaluate("window.__sameDocument = true")

    send(page, "weather in london?")

    card = page.locator(WEATHER_CARD)
    expect(card).to_have_attribute("data-status", "ok")
    expect(card.locator(".call-args")).to_contain_text("city")
    expect(card.locator(".call-args")).to_contain_text("london")
    expect(card.locator(".call-result")).to_contain_text("cloudy")
    expect(card.locator(".call-duration")).to_have_text(re.compile(r"\d+ (ms|s)"))
    expect(finished_runs(page)).to_have_count(1)
    answer = page.locator("#timeline li.kind-text:not(.streaming)")
    expect(answer).to_contain_text("The current weather in London")
    expect(page.locator("#timeline .streaming")).to_have_count(0)
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    shoot(page, "session-weather")

    page.set_input_files(
        "#artifact-upload input[type=file]",
        files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hi there"}],
    )
    page.click("#artifact-upload button")
    link = page.locator('#artifact-list li[data-artifact="notes.txt"] a').first
    expect(link).to_be_visible()
    assert page.request.get(link.get_attribute("href")).body() == b"hi there"

    page.click("text=Sign out")
    page.wait_for_url(re.compile(r"/login/$"))
    shoot(page, "login")
    page.goto("/")
    page.wait_for_url(re.compile(r"/login/\?next=/$"))


def test_revoking_a_tool_updates_the_open_session_without_reload(sign_in, shoot):
    alice = sign_in("alice")
    start_session(alice, "weather_sentiment")
    tool = alice.locator(
        '#tool-list li[data-tool="weather_sentiment.analyze_sentiment"]'
    )
    expect(tool).to_be_visible()
    alice.evaluate("window.__sameDocument = true")

    admin = sign_in("admin")
    admin.goto("/staff/access/")
    admin.fill("#matrix-filter", "weather_sentiment")
    cell = admin.locator(
        'tr[data-target="tool:weather_sentiment.analyze_sentiment"] '
        'td[data-subject="user:alice"]'
    )
    cell.locator('button[data-effect="deny"]').click()
    expect(cell.locator('button[data-effect="deny"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(cell.locator(".decision")).to_have_class(re.compile("denied"))
    shoot(admin, "access-matrix")

    expect(tool).to_have_count(0)
    expect(alice.locator("#tools-note")).to_contain_text("Updated")
    expect(
        alice.locator('#tool-list li[data-tool$="get_weather_report"]')
    ).to_be_visible()

    cell.locator('button[data-effect="inherit"]').click()
    expect(cell.locator(".decision")).to_have_class(re.compile("allowed"))
    expect(tool).to_be_visible()
    assert alice.evaluate("window.__sameDocument") is True, "the page reloaded"


def test_every_page_renders_and_the_inbox_answers_in_place(sign_in, api, shoot):
    admin = sign_in("admin")
    alice = api("alice")
    session = alice.post("/api/sessions/", json={"agent": "customer_support"}).json()
    admin.goto("/staff/firehose/")
    expect(admin.locator("#live-status")).to_have_attribute("data-status", "live")
    ran = alice.post(
        f"/api/sessions/{session['id']}/messages/?wait=1",
        json={"text": "this is urgent, i cant login"},
    )
    assert ran.status_code == 200, ran.text
    expect(admin.locator('#firehose-table tr[data-kind="transfer"]')).to_have_count(1)
    shoot(admin, "firehose")

    claim = alice.post("/api/sessions/", json={"agent": "reimbursement"}).json()
    asked = alice.post(
        f"/api/sessions/{claim['id']}/messages/?wait=1",
        json={"text": 'ask for approval of 500 for "a conference trip"'},
    )
    assert asked.status_code == 200, asked.text
    admin.goto("/inbox/")
    waiting = admin.locator('#inbox-list li:has(code:text("ask_for_approval"))')
    expect(waiting).to_contain_text("conference trip")
    shoot(admin, "inbox")
    waiting.locator('button[data-answer="approved"]').click()
    expect(waiting).to_have_count(0)
    admin.goto(f"/sessions/{claim['id']}/")
    card = admin.locator('.card.call[data-tool="ask_for_approval"]')
    expect(card).to_have_attribute("data-status", "ok")
    expect(card.locator(".call-result")).to_contain_text("approved")
    expect(admin.locator("#live-status")).to_have_attribute("data-status", "live")
    shoot(admin, "session-approved")

    pages = {
        "overview": ("/overview/", ".kpi"),
        "audit": ("/staff/audit/", "#audit-table"),
        "agents": ("/staff/agents/", '.agent-card[data-agent="weather_sentiment"]'),
        "home-admin": ("/", "#agents .agent-option"),
    }
    for name, (path, ready) in pages.items():
        admin.goto(path)
        expect(admin.locator(ready).first).to_be_visible()
        shoot(admin, name)

    admin.goto(f"/sessions/{session['id']}/")
    expect(admin.locator(".handoff.transfer")).to_contain_text("support_agent")
    expect(admin.locator("#live-status")).to_have_attribute("data-status", "live")
    shoot(admin, "session-transfer")

    phone = sign_in("alice", viewport=PHONE)
    expect(phone.locator("#sessions-table")).to_be_visible()
    shoot(phone, "phone-home")
    phone.goto(f"/sessions/{session['id']}/")
    expect(phone.locator(".handoff.transfer")).to_be_visible()
    shoot(phone, "phone-session")


def test_reconnect_after_the_server_drops_replays_each_event_once(sign_in, server, api):
    page = sign_in("alice")
    session_id = start_session(page, "weather_sentiment")
    send(page, "weather in london?")
    expect(finished_runs(page)).to_have_count(1)
    indicator = page.locator("#live-status")

    page.context.set_offline(True)  # the page cannot reconnect until told
    server.stop()  # every socket drops, for real
    expect(indicator).to_have_attribute("data-status", "reconnecting")
    expect(indicator).to_contain_text("Reconnecting")
    server.start()
    alice = api("alice")
    ran = alice.post(
        f"/api/sessions/{session_id}/messages/?wait=1",
        json={"text": "weather in paris?"},
    )
    assert ran.status_code == 200, ran.text
    # The page missed that whole turn: it can only get it by replay.
    expect(indicator).to_have_attribute("data-status", "reconnecting")
    assert page.locator("#timeline").inner_text().count("Paris") == 0
    page.context.set_offline(False)
    indicator.click()  # "retry now" instead of waiting out the backoff
    expect(indicator).to_have_attribute("data-status", "live")
    expect(finished_runs(page)).to_have_count(2)
    expect(page.locator("#timeline")).to_contain_text("The weather in Paris is sunny")

    send(page, "I don't like rain")
    expect(finished_runs(page)).to_have_count(3)

    stored = alice.get(f"/api/sessions/{session_id}/events/").json()
    expected = [frame["seq"] for frame in stored]
    assert expected == list(range(1, len(expected) + 1))
    assert shown_seqs(page) == expected
