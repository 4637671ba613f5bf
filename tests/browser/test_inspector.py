"""The event inspector: every event's seq is a button that opens, in a dialog, what
the server knows of the event (fetched on open): a tool call's governance decision,
the rule that made it and its outcome; a model step's tools offered and answer; the
ids, each copyable; the raw wire JSON, copyable. Escape closes it and the focus goes
back to the button."""

import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE
from tests.browser.test_accessibility import report, violations
from tests.browser.test_timeline_cards import WEATHER_CARD, open_session, session_with

pytestmark = pytest.mark.browser


def fact(scope, label: str):
    """The value (<dd>) a definition list gives for `label`."""
    return scope.locator(f"dt:text-is('{label}') + dd")


def call_item(page: Page):
    """The timeline item of the weather call (its function_call event)."""
    return page.locator("#timeline > li[data-seq]").filter(
        has=page.locator(WEATHER_CARD)
    )


def test_a_tool_calls_inspector_shows_its_rule_and_outcome(sign_in, api, shoot):
    session = session_with(api, "weather_sentiment", "weather in london?")
    page = sign_in("alice")
    open_session(page, session)
    item = call_item(page)
    seq = item.get_attribute("data-seq")
    button = item.get_by_role("button", name=f"Inspect event #{seq}")

    button.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name=re.compile(f"^Event #{seq}"))
    expect(dialog).to_be_visible()
    call = dialog.locator(".inspected-call")
    expect(call.locator("h4 code")).to_have_text(re.compile(r"get_weather_report$"))
    expect(fact(call, "Outcome")).to_have_text("ok")
    expect(fact(call, "Decision")).not_to_be_empty()
    expect(fact(call, "Rule")).not_to_be_empty()
    expect(fact(call, "Duration")).to_have_text(re.compile(r"\d+ (ms|s)"))
    expect(fact(dialog.locator(".ids"), "Event")).to_contain_text(re.compile(r"\S"))
    shoot(page, "inspector-tool-call")
    found = violations(page)
    assert not found, report({"the inspector on a tool call": found})

    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(button).to_be_focused()


def test_a_model_steps_inspector_shows_the_tools_offered_and_the_answer(sign_in, api):
    session = session_with(api, "weather_sentiment", "weather in london?")
    page = sign_in("alice")
    open_session(page, session)
    item = call_item(page)
    seq = item.get_attribute("data-seq")

    item.get_by_role("button", name=f"Inspect event #{seq}").click()
    step = page.locator("#event-inspector .inspector-section.model")
    expect(step.locator(".tools-offered li")).to_contain_text(["get_weather_report"])
    expect(fact(step, "Agent")).not_to_be_empty()
    expect(fact(step, "Model")).not_to_be_empty()
    expect(fact(step, "Tokens")).to_have_text(re.compile(r"[\d,]+ in · [\d,]+ out"))
    expect(step.locator(".answer-calls code")).to_have_text(["get_weather_report"])
    # The instruction is plain text, folded until asked for.
    instruction = step.locator("details.instruction")
    expect(instruction.locator("pre")).to_be_hidden()
    instruction.locator("summary").click()
    expect(instruction.locator("pre")).to_be_visible()


def test_the_raw_json_and_the_ids_copy(sign_in, api, server):
    session = session_with(api, "weather_sentiment", "weather in london?")
    page = sign_in("alice")
    page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=server.url
    )
    open_session(page, session)
    item = page.locator("#timeline > li.kind-run_finished").last
    seq = item.get_attribute("data-seq")

    item.get_by_role("button", name=f"Inspect event #{seq}").click()
    dialog = page.locator("#event-inspector")
    expect(dialog.locator(".raw-json .json-key").first).to_be_visible()
    dialog.get_by_role("button", name="Copy JSON").click()
    expect(dialog.locator(".copy-json")).to_have_text("Copied")
    frame = json.loads(page.evaluate("() => navigator.clipboard.readText()"))
    assert frame["seq"] == int(seq)
    assert frame["event"]["kind"] == "run_finished"

    dialog.get_by_role("button", name="Copy session id").click()
    assert page.evaluate("() => navigator.clipboard.readText()") == session
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


def test_the_inspector_and_the_trace_have_no_serious_violation_at_phone_width(
    sign_in, api
):
    session = session_with(api, "weather_sentiment", "weather in london?")
    page = sign_in("alice", viewport=PHONE)
    open_session(page, session)
    line = page.locator("#timeline > li.kind-run_finished").last
    found = {}

    line.get_by_role("button", name="Trace").click()
    expect(page.locator("#trace-view .span-row").first).to_be_visible()
    found["a run's trace"] = violations(page)
    page.keyboard.press("Escape")
    seq = line.get_attribute("data-seq")
    line.get_by_role("button", name=f"Inspect event #{seq}").click()
    expect(page.locator("#event-inspector .raw-json")).to_be_visible()
    found["the inspector"] = violations(page)

    found = {name: problems for name, problems in found.items() if problems}
    assert not found, report(found)
