"""The dashboard in a real browser: chat with a live timeline, governance reaching an
open session, replay after the server drops the socket, and every page rendered.

Tests run in file order and share one server; the reconnect test restarts it, last in
this file (test_waiting_for_a_person.py runs after it, on the restarted server).
"""

import re
import subprocess
import sys

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE
from tests.browser.pages import (
    NEW_TIMELINE,
    finished_runs,
    send,
    shown_seqs,
    start_session,
)
from tests.live.server import ROOT

pytestmark = pytest.mark.browser

WEATHER_CARD = '.card.call[data-tool="get_weather_report"]'
WIRE_CARD = '.card.call[data-tool="wire_money"]'
APPROVAL_CARD = f'{WIRE_CARD} .request-box[data-kind="approval"]'


TIMELINE_SCRIPT = (
    """
async () => {
"""
    + NEW_TIMELINE
    + """  const frame = (seq, kind, extra) => ({
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
)


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


APPROVAL_SCRIPT = """
async () => {
  const { Timeline } = await import("/static/frontend/timeline.js");
  const list = document.createElement("ol");
  const scroller = document.createElement("div");
  scroller.append(list);
  document.body.append(scroller);
  const seen = [];
  const timeline = new Timeline(list, scroller, {
    onRequest: (entry) => seen.push([entry.callId, entry.kind, entry.answered]),
  });
  const frame = (seq, kind, extra) => ({
    type: "event", seq, session: "s",
    event: { id: `e${seq}`, invocation_id: "i1", author: "bank", kind, partial: false,
             ts: 100 + seq, ...extra },
  });
  const wire = { id: "w1", name: "wire_money", args: { recipient: "bob", amount: 5 } };
  const ask = { id: "c1", name: "adk_request_confirmation", args: {
    originalFunctionCall: wire, toolConfirmation: { hint: "Send 5 to bob?" } } };
  const frames = [
    frame(1, "function_call", { function_calls: [wire] }),
    frame(2, "approval_request", { function_calls: [ask], long_running_tool_ids: ["c1"] }),
    frame(3, "approval_request", {
      function_responses: [{ id: "w1", name: "wire_money", status: "error",
                             response: { error: "requires confirmation" } }],
      actions: { requested_tool_confirmations: { w1: { hint: "Send 5 to bob?" } } } }),
  ];
  for (const item of frames) timeline.apply(item);
  const request = list.querySelector('.request-box[data-kind="approval"]');
  const card = list.querySelector(".card.call");
  const waiting = { wire: card.dataset.status, request: request.dataset.status };
  timeline.apply(frame(4, "function_response", { author: "user", function_responses: [
    { id: "c1", name: "adk_request_confirmation", status: "ok",
      response: { confirmed: true } }] }));
  timeline.apply(frame(5, "function_response", { function_responses: [
    { id: "w1", name: "wire_money", status: "ok", response: { status: "ok" } }] }));
  return {
    waiting,
    seen,
    wire: card.dataset.status,
    request: request.dataset.status,
    hint: request.querySelector(".hint").textContent,
    outcome: request.querySelector(".approval-outcome").textContent,
    cards: list.querySelectorAll(".card").length,
    inCard: card.contains(request),
    seqs: [...list.querySelectorAll("[data-seq]")].map((el) => Number(el.dataset.seq)),
    adkHint: adkHint(),
  };
  function adkHint() {
    const other = document.createElement("ol");
    const timeline = new Timeline(other, scroller);
    const ask = { id: "c2", name: "adk_request_confirmation", args: {
      originalFunctionCall: { id: "w2", name: "wire_money", args: {} },
      toolConfirmation: { hint: "Please approve or reject the tool call wire_money() by " +
        "responding with a FunctionResponse with an expected ToolConfirmation payload." } } };
    timeline.apply(frame(1, "function_call", { function_calls: [{ id: "w2", name: "wire_money", args: {} }] }));
    timeline.apply(frame(2, "approval_request", { function_calls: [ask], long_running_tool_ids: ["c2"] }));
    return { text: other.textContent, cards: other.querySelectorAll(".card").length };
  }
}
"""


def test_timeline_merges_a_decision_into_its_request_and_keeps_every_seq(
    browser, server
):
    context = browser.new_context(base_url=server.url)
    page = context.new_page()
    page.goto("/login/")

    shown = page.evaluate(APPROVAL_SCRIPT)
    context.close()

    assert shown["waiting"] == {"wire": "awaiting", "request": "pending"}
    assert shown["seen"] == [["c1", "approval", None], ["c1", "approval", "approved"]]
    assert shown["wire"] == "ok"
    assert shown["request"] == "approved"
    assert shown["hint"] == "Send 5 to bob?"
    assert "Approved" in shown["outcome"]
    assert shown["cards"] == 1
    assert shown["inCard"] is True
    assert sorted(shown["seqs"]) == [1, 2, 3, 4, 5]
    assert shown["adkHint"]["cards"] == 1
    assert "FunctionResponse" not in shown["adkHint"]["text"]


def test_chat_shows_the_function_call_card_live_and_signs_out(sign_in, shoot):
    page = sign_in("alice")
    expect(page.locator("#agents .agent-option").first).to_be_visible()
    # Other tests' sessions of alice's may be listed: the list is drawn either way.
    expect(page.locator("#sessions .state, #sessions li.sb-item").first).to_be_visible()
    shoot(page, "home-alice")
    start_session(page, "weather_sentiment")
    # An empty session introduces its agent; the first event replaces the introduction.
    expect(page.locator("#session-intro")).to_contain_text(
        "What weather_sentiment does"
    )
    page.evaluate("window.__sameDocument = true")

    send(page, "weather in london?")

    card = page.locator(WEATHER_CARD)
    expect(card).to_have_attribute("data-status", "ok")
    expect(card.locator(".call-args")).to_contain_text("city")
    expect(card.locator(".call-args")).to_contain_text("london")
    expect(card.locator(".call-result")).to_contain_text("cloudy")
    expect(card.locator(".call-duration")).to_have_text(re.compile(r"\d+ (ms|s)"))
    expect(finished_runs(page)).to_have_count(1)
    expect(page.locator("#session-intro")).to_have_count(0)
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

    page.click("#user-menu summary")
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
    waiting = admin.locator("#waiting-list .card.request").filter(
        has_text="ask_for_approval"
    )
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
    expect(phone.locator("#agents .agent-option").first).to_be_visible()
    shoot(phone, "phone-home")
    phone.goto(f"/sessions/{session['id']}/")
    expect(phone.locator(".handoff.transfer")).to_be_visible()
    shoot(phone, "phone-session")


def agent_answer(page: Page):
    return page.locator("#timeline li.kind-text:not(.streaming) .bubble-text")


def test_the_owner_approves_a_transfer_in_the_live_timeline(sign_in, shoot):
    page = sign_in("alice")
    start_session(page, "bank")
    page.evaluate("window.__sameDocument = true")

    send(page, 'wire 500 to "bob"')

    card = page.locator(APPROVAL_CARD)
    wire = page.locator(WIRE_CARD)
    expect(wire.locator("code.call-name")).to_have_text("wire_money")
    expect(wire.locator(".args")).to_contain_text("bob")
    expect(card.locator(".waits")).to_contain_text("Waits for alice, or staff")
    expect(card.get_by_role("button", name="Reject wire_money")).to_be_enabled()
    expect(wire).to_have_attribute("data-status", "awaiting")
    expect(page.locator("#timeline .card")).to_have_count(1)
    shoot(page, "session-approval-asked")
    card.get_by_role("button", name="Approve wire_money").click()

    expect(wire).to_have_attribute("data-status", "ok")
    expect(wire.locator(".call-result")).to_contain_text("Sent 500.0 dollars to bob.")
    expect(agent_answer(page)).to_have_text("Sent 500.0 dollars to bob.")
    expect(card).to_have_attribute("data-status", "approved")
    expect(card.locator(".approval-outcome")).to_contain_text("Approved by alice")
    expect(card.get_by_role("button")).to_have_count(0)
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    shoot(page, "session-approval-approved")


def test_rejecting_in_the_inbox_shows_in_the_open_session(sign_in, shoot):
    page = sign_in("alice")
    session_id = start_session(page, "bank")
    send(page, 'wire 300 to "carol"')
    card = page.locator(APPROVAL_CARD)
    expect(card.get_by_role("button", name="Approve wire_money")).to_be_enabled()

    inbox = page.context.new_page()
    inbox.goto("/inbox/")
    item = inbox.locator(f'#waiting-list .card.request[data-session="{session_id}"]')
    expect(item.locator("code.call-name")).to_have_text("wire_money")
    expect(item).to_contain_text("carol")
    expect(item).to_contain_text("agent bank")
    expect(item.locator(".waits")).to_contain_text("Waits for alice, or staff")
    expect(item.get_by_role("link", name=re.compile("^open"))).to_have_attribute(
        "href", f"/sessions/{session_id}/"
    )
    shoot(inbox, "inbox-approval")
    item.get_by_role("button", name="Reject wire_money").click()
    expect(item).to_have_count(0)
    expect(inbox.locator("#toasts")).to_contain_text("Rejected wire_money")

    # The other tab hears it from the resumed run's events alone.
    expect(card).to_have_attribute("data-status", "rejected")
    expect(card.locator(".approval-outcome")).to_contain_text("Rejected by alice")
    expect(card.get_by_role("button")).to_have_count(0)
    wire = page.locator(WIRE_CARD)
    expect(wire).to_have_attribute("data-status", "error")
    expect(wire.locator(".call-result")).to_contain_text("This tool call is rejected.")
    expect(agent_answer(page)).to_contain_text("This tool call is rejected.")
    shoot(page, "session-approval-rejected")


def test_a_stale_approval_says_why_and_others_cannot_decide_it(sign_in, api):
    alice = api("alice")
    session = alice.post("/api/sessions/", json={"agent": "bank"}).json()
    asked = alice.post(
        f"/api/sessions/{session['id']}/messages/?wait=1",
        json={"text": 'wire 70 to "dave"'},
    )
    assert asked.status_code == 200, asked.text
    mine = f'#waiting-list .card.request[data-session="{session["id"]}"]'

    bob = sign_in("bob")
    bob.goto("/inbox/")
    expect(bob.locator("#requests-waiting .state.empty")).to_contain_text(
        "Nothing is waiting for you"
    )
    expect(bob.locator(mine)).to_have_count(0)
    # Staff may decide an approval no group decides, from its session.
    admin = sign_in("admin")
    admin.goto(f"/sessions/{session['id']}/")
    card = admin.locator(APPROVAL_CARD)
    expect(card.locator(".waits")).to_contain_text("Waits for alice, or staff")
    expect(card.get_by_role("button", name="Approve wire_money")).to_be_enabled()

    page = sign_in("alice")
    # This page hears nothing live (its inbox socket answers nothing), so its card
    # is stale when the decision is made elsewhere.
    page.route_web_socket(re.compile(r"/ws/inbox/"), lambda socket: None)
    page.goto("/inbox/")
    item = page.locator(mine)
    expect(item).to_contain_text("dave")
    decided = alice.post(
        f"/api/approvals/{item.get_attribute('data-request-id')}/decide/?wait=1",
        json={"approved": True},
    )
    assert decided.status_code == 200, decided.text
    item.get_by_role("button", name="Reject wire_money").click()
    expect(page.locator("#toasts .toast.bad")).to_contain_text("already")
    expect(item).to_have_count(0)


ADDER = "simple_math_toolset.calculator_add_numbers"
MAKE_AUDITOR = (
    "from django.contrib.auth.models import Group, User; "
    "Group.objects.get_or_create(name='auditors')[0].user_set.add("
    "User.objects.get(username='bob'))"
)


def test_my_request_for_an_approver_group_shows_as_not_mine_to_decide(
    sign_in, api, live_env
):
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", MAKE_AUDITOR],
        cwd=ROOT,
        env=dict(live_env),
        check=True,
        capture_output=True,
    )
    admin = api("admin")
    marked = admin.patch(
        f"/api/tools/{ADDER}/",
        json={"requires_approval": True, "approver_group": "auditors"},
    )
    assert marked.status_code == 200, marked.text
    try:
        page = sign_in("alice")
        start_session(page, "calculator")
        send(page, "add 2 and 3")

        card = page.locator(
            '.card.call[data-tool="calculator_add_numbers"] .request-box'
        )
        expect(card.locator(".waits")).to_contain_text("Waits for a member of")
        expect(card.locator(".waits")).to_contain_text("auditors")
        expect(card.get_by_role("button")).to_have_count(0)

        bob = sign_in("bob")
        bob.goto("/inbox/")
        item = bob.locator("#waiting-list .card.request").filter(
            has_text="calculator_add"
        )
        item.get_by_role("button", name=re.compile("^Approve")).click()
        expect(card).to_have_attribute("data-status", "approved")
        expect(card.locator(".approval-outcome")).to_contain_text("Approved by bob")
    finally:
        admin.patch(
            f"/api/tools/{ADDER}/",
            json={"requires_approval": False, "approver_group": None},
        )


FIELDS_SCRIPT = """
async () => {
  const { credentialFields } = await import("/static/frontend/requests.js");
  const names = (request) => credentialFields(request).map(([name]) => name);
  return {
    apiKey: names({ scheme: "apiKey", fields: ["api_key"] }),
    bearer: names({ scheme: "http", fields: ["token"] }),
    basic: names({ scheme: "http", fields: ["username", "password"] }),
    oauth2: names({ scheme: "oauth2", fields: ["access_token", "refresh_token"] }),
    other: names({ scheme: "mutualTLS", fields: [] }),
  };
}
"""


def test_a_credential_is_given_in_the_timeline_never_shown_and_revoked(sign_in, shoot):
    secret = "sk-test-0123456789-wxyz"
    page = sign_in("alice")
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    assert page.evaluate(FIELDS_SCRIPT) == {
        "apiKey": ["api_key"],
        "bearer": ["token"],
        "basic": ["username", "password"],
        "oauth2": ["access_token", "refresh_token"],
        "other": [],
    }
    start_session(page, "quotes")

    send(page, "quote for ACME")

    quote = page.locator('.card.call[data-tool="get_stock_quote"]')
    card = quote.locator('.request-box[data-kind="credential"]')
    expect(card).to_contain_text("demo_quotes_api_key")
    expect(page.locator("#timeline .card")).to_have_count(1)
    key = card.get_by_label("API key")
    expect(key).to_have_attribute("type", "password")
    shoot(page, "session-credential-asked")
    key.fill(secret)
    card.get_by_role("button", name="Send credential").click()

    expect(quote).to_have_attribute("data-status", "ok")
    expect(agent_answer(page)).to_contain_text("ACME is at 123.45 (key ****wxyz)")
    expect(card).to_have_attribute("data-status", "answered")
    expect(card.locator("form")).to_have_count(0)
    assert secret not in page.content()
    assert not [text for text in console if secret in text]
    shoot(page, "session-credential-given")

    page.goto("/")
    given = page.locator('#credential-list li[data-key="demo_quotes_api_key"]')
    expect(given).to_contain_text("get_stock_quote")
    assert secret not in page.content()
    shoot(page, "home-credentials")
    page.once("dialog", lambda dialog: dialog.accept())
    given.get_by_role("button", name="Revoke demo_quotes_api_key").click()
    expect(given).to_have_count(0)
    expect(page.locator("#credentials .state.empty")).to_contain_text("No credentials")


def test_toolsets_switch_live_by_the_model_and_by_the_user(sign_in, shoot, screenshots):
    page = sign_in("alice")
    start_session(page, "inventory")
    panel = page.locator("#toolset-list")
    admin = panel.get_by_role("switch", name="inventory_admin", exact=True)
    query = panel.get_by_role("switch", name="inventory_query", exact=True)
    expect(query).to_be_checked()
    expect(admin).not_to_be_checked()
    admin_item = panel.locator('li[data-toolset="inventory_admin"]')
    expect(admin_item).to_contain_text("restock_item")
    expect(admin_item).to_contain_text("Inactive · by default")
    page.evaluate("window.__sameDocument = true")

    send(page, "activate toolset name=inventory_admin")

    expect(admin).to_be_checked()
    notes = page.locator("#timeline li.kind-tools_changed")
    expect(notes).to_have_count(1)
    expect(notes).to_contain_text("activated toolset inventory_admin")
    expect(page.locator("#toolsets-note")).to_contain_text("inventory_admin")
    expect(finished_runs(page)).to_have_count(1)
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    shoot(page, "session-toolsets-model-activated")
    toolsets_panel = page.locator("section[aria-labelledby=toolsets-title]")
    toolsets_panel.screenshot(path=str(screenshots / "session-toolsets-panel.png"))

    # A refused switch goes back as it was, and says why.
    refused = "**/toolsets/inventory_query/"
    page.route(
        refused,
        lambda route: route.fulfill(
            status=400, json={"name": ["Unknown toolset inventory_query."]}
        ),
    )
    query.click()
    expect(page.locator(".toast.bad")).to_contain_text(
        "inventory_query not deactivated"
    )
    expect(query).to_be_checked()
    page.unroute(refused)

    admin.click()
    expect(admin).not_to_be_checked()
    expect(page.locator("#toolsets-note")).to_contain_text(
        "inventory_admin is now inactive"
    )
    expect(notes).to_have_count(2)
    expect(notes.last).to_contain_text("alice deactivated toolset inventory_admin")

    page.reload()
    expect(admin).not_to_be_checked()
    expect(query).to_be_checked()
    expect(admin_item).to_contain_text("Inactive · deactivated by alice")
    shoot(page, "session-toolsets-after-reload")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#close-session")
    expect(page.locator("#toolsets-readonly")).to_be_visible()
    expect(admin).to_be_disabled()
    expect(query).to_be_disabled()
    toolsets_panel.screenshot(path=str(screenshots / "session-toolsets-closed.png"))


def test_reconnect_after_the_server_drops_replays_each_event_once(sign_in, server, api):
    page = sign_in("alice")
    page.clock.install()  # the page's timers run on a clock the test can stop
    session_id = start_session(page, "weather_sentiment")
    send(page, "weather in london?")
    expect(finished_runs(page)).to_have_count(1)
    indicator = page.locator("#live-status")

    # The page cannot reconnect until told: with its clock stopped, its backoff never
    # fires. (Going offline and back raced that timer: when it fired between going
    # online and the click, the page was Live again and the click met a disabled
    # button.) pause_at jumps a second ahead, since it may not go back.
    page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 1)
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
    indicator.click()  # "retry now": the only way back, the backoff being stopped
    expect(indicator).to_have_attribute("data-status", "live")
    page.clock.resume()  # the timeline may defer drawing a long text to a timer
    expect(finished_runs(page)).to_have_count(2)
    expect(page.locator("#timeline")).to_contain_text("The weather in Paris is sunny")

    send(page, "I don't like rain")
    expect(finished_runs(page)).to_have_count(3)

    stored = alice.get(f"/api/sessions/{session_id}/events/").json()
    expected = [frame["seq"] for frame in stored]
    assert expected == list(range(1, len(expected) + 1))
    assert shown_seqs(page) == expected
