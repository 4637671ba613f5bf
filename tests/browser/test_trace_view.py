"""A run in the page: its finished line says the model, tokens in and out, duration
and how many model and tool calls it made (live, and read back from the stored
event); its Trace button opens a waterfall of its spans, the turn's model and tool
calls nested under it, each with its duration in words, the slowest tool call
marked, sortable and filterable by kind, a row opening to its attributes."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.pages import finished_runs, send, start_session
from tests.browser.test_accessibility import report, violations
from tests.browser.test_timeline_cards import open_session, session_with

pytestmark = pytest.mark.browser

STATS = re.compile(
    r"[\d,]+ tokens in, [\d,]+ out · [\d.]+ (ms|s) · [1-9]\d* model calls? · 1 tool call$"
)
DURATION = re.compile(r"^\d+(\.\d+)? (ms|s)$")


def test_a_runs_line_shows_its_stats_live_and_after_a_reload(sign_in):
    page = sign_in("alice")
    start_session(page, "weather_sentiment")
    send(page, "weather in london?")
    stats = finished_runs(page).last.locator(".run-stats")
    expect(stats).to_have_text(STATS)
    live = stats.inner_text()

    page.reload()
    expect(finished_runs(page).last.locator(".run-stats")).to_have_text(live)


def test_a_runs_trace_nests_its_model_and_tool_spans_with_durations(
    sign_in, api, shoot
):
    session = session_with(api, "weather_sentiment", "weather in london?")
    page = sign_in("alice")
    open_session(page, session)
    line = finished_runs(page).last
    expect(line.locator(".run-stats")).to_have_text(STATS)
    trace = line.get_by_role("button", name="Trace")

    trace.click()
    dialog = page.get_by_role("dialog", name=re.compile("^Trace"))
    expect(dialog).to_be_visible()
    turn = dialog.locator('.span-row[data-kind="turn"]')
    model = dialog.locator('.span-row[data-kind="model"]')
    tool = dialog.locator('.span-row[data-kind="tool"]')
    expect(turn.first).to_have_attribute("data-depth", "0")
    expect(model.first).not_to_have_attribute("data-depth", "0")
    expect(tool.first).not_to_have_attribute("data-depth", "0")
    expect(tool.first.locator(".span-name")).to_contain_text("get_weather_report")
    for row in (turn.first, model.first, tool.first):
        expect(row.locator(".span-duration")).to_have_text(DURATION)
    # The slowest tool call is marked in words, not by color alone.
    expect(dialog.locator(".span-row.slowest .badge")).to_have_text("slowest tool call")
    expect(dialog.locator(".trace-slowest")).to_contain_text("get_weather_report")
    shoot(page, "trace-view")
    found = violations(page)
    assert not found, report({"a run's trace": found})

    tool.first.locator(".span-line").click()
    expect(tool.first.locator(".span-line")).to_have_attribute("aria-expanded", "true")
    expect(tool.first.locator(".span-attributes .json-key").first).to_be_visible()

    dialog.get_by_label("Kind").select_option("tool")
    expect(dialog.locator(".span-row")).to_have_count(tool.count())
    expect(dialog.locator('.span-row:not([data-kind="tool"])')).to_have_count(0)
    dialog.get_by_label("Kind").select_option("")
    dialog.get_by_label("Order").select_option("slowest")
    durations = dialog.locator(".span-row").evaluate_all(
        "rows => rows.map((row) => Number(row.dataset.ms))"
    )
    assert durations == sorted(durations, reverse=True)
    expect(dialog.locator(".span-row").first).to_have_attribute("data-depth", "0")

    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(trace).to_be_focused()
