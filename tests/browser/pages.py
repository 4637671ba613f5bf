"""What the browser tests do on a session page: start one, send, read the timeline."""

import re

from playwright.sync_api import Page, expect


def start_session(page: Page, agent: str) -> str:
    """Start a session with `agent` from the home page; its id, once its socket is live."""
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
    """Every seq the timeline shows (items and the result tags merged into cards)."""
    return page.locator("#timeline [data-seq]").evaluate_all(
        "els => els.map(el => Number(el.dataset.seq))"
    )


# In-page scripts' first lines: a Timeline (timeline.js) on a list of its own, in
# the page, fed frames by the script that follows (`list`, `scroller`, `timeline`).
NEW_TIMELINE = """
  const { Timeline } = await import("/static/frontend/timeline.js");
  const list = document.createElement("ol");
  const scroller = document.createElement("div");
  scroller.append(list);
  document.body.append(scroller);
  const timeline = new Timeline(list, scroller);
"""
