"""Opening a long session: the API and the browser, all events against the latest page.

Starts a real Daphne (embedded defaults: SQLite, in-memory channel layer) on a database
of its own, runs one weather turn in two sessions and grows them to 1,240 and 5,000
events (bench/long_sessions.py), then prints, per session, the median of --rounds:

- API: GET /api/sessions/{id}/events/ as the page asked before (every event,
  `?after=0&limit=5000`) and as it asks now (the latest page, `?before=end&limit=150`),
  over HTTP with a token;
- browser (Chromium through Playwright): the page's own path (fetch, draw with
  timeline.js, the next frame) for every event against the latest page, in one
  signed-in page; and the session page opened from scratch, navigation start to the
  first frame with the timeline drawn (history.js marks `toolcrib:timeline-painted`).

Target: a session opens in under 300 ms, whatever its length.

    .venv/bin/python -m bench.session_open [--rounds 5] [--sizes 1240 5000]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.live.server import daphne, prepare_database, server_env  # noqa: E402

PAGE = 150  # history.js: PAGE_SIZE
ALL = 5000  # the page's old PAGE_SIZE, the API's largest page
TARGET_MS = 300
GROW = (
    "from bench.long_sessions import grow_session; "
    "grow_session(session_id={session!r}, events={events})"
)

# The old path and the new, in the page: fetch, draw every frame, wait for a frame.
DRAW_SCRIPT = """
async ([session, query, batch]) => {
  const { Timeline } = await import("/static/frontend/timeline.js");
  const scroller = document.createElement("div");
  scroller.className = "timeline-scroll";
  const list = document.createElement("ol");
  list.className = "timeline";
  scroller.append(list);
  document.body.append(scroller);
  const start = performance.now();
  const response = await fetch(`/api/sessions/${session}/events/?${query}`);
  const frames = await response.json();
  const timeline = new Timeline(list, scroller);
  if (batch) timeline.applyAll(frames);  // the page now: one layout a page
  else for (const frame of frames) timeline.apply(frame);  // before: one an event
  timeline.scrollToEnd();
  await new Promise((resolve) => requestAnimationFrame(() => resolve()));
  const took = performance.now() - start;
  scroller.remove();
  return [took, frames.length];
}
"""
PAINTED = "performance.getEntriesByName('toolcrib:timeline-painted').length > 0"
PAINTED_AT = "performance.getEntriesByName('toolcrib:timeline-painted')[0].startTime"


def grown_session(http: httpx.Client, env: dict, events: int) -> str:
    session = http.post("/api/sessions/", json={"agent": "weather_sentiment"}).json()
    ran = http.post(
        f"/api/sessions/{session['id']}/messages/?wait=1",
        json={"text": "weather in london?"},
    )
    ran.raise_for_status()
    script = GROW.format(session=session["id"], events=events)
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return session["id"]


def api_ms(http: httpx.Client, session: str, query: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        http.get(f"/api/sessions/{session}/events/?{query}").raise_for_status()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def draw_ms(page: Page, session: str, query: str, rounds: int, batch: bool) -> float:
    return statistics.median(
        page.evaluate(DRAW_SCRIPT, [session, query, batch])[0] for _ in range(rounds)
    )


def open_ms(page: Page, session: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        page.goto(f"/sessions/{session}/")
        page.wait_for_function(PAINTED)
        times.append(page.evaluate(PAINTED_AT))
    return statistics.median(times)


def sign_in(page: Page) -> None:
    page.goto("/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice")
    page.click("button[type=submit]")
    page.wait_for_url("**/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1240, 5000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        env = server_env(
            {
                "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
                "TOOLCRIB_DATA_DIR": folder,
                "LOG_LEVEL": "WARNING",
            }
        )
        prepare_database(env)
        with daphne(env, Path(folder) / "daphne.log") as server:
            token = server.token("alice", "alice")
            headers = {"Authorization": f"Token {token}"}
            with httpx.Client(
                base_url=server.url, headers=headers, timeout=120
            ) as http:
                sessions = {n: grown_session(http, env, n) for n in args.sizes}
                report(server.url, http, sessions, args.rounds)


def report(url: str, http: httpx.Client, sessions: dict[int, str], rounds: int):
    old, new = f"after=0&limit={ALL}", f"before=end&limit={PAGE}"
    print(f"opening a session, median of {rounds}; target under {TARGET_MS} ms")
    print(
        f"{'events':>7} | {'API all':>9} {'API page':>9} | "
        f"{'draw all':>9} {'draw page':>9} | {'page open':>9}"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_context(base_url=url).new_page()
        sign_in(page)
        for events, session in sessions.items():
            row = [
                api_ms(http, session, old, rounds),
                api_ms(http, session, new, rounds),
                draw_ms(page, session, old, 1, batch=False),  # slow: once
                draw_ms(page, session, new, rounds, batch=True),
                open_ms(page, session, rounds),
            ]
            a, b, c, d, e = (f"{value:.0f} ms" for value in row)
            print(f"{events:>7} | {a:>9} {b:>9} | {c:>9} {d:>9} | {e:>9}")
        browser.close()
    print(
        "all: every event, as the page read them before (old path); page: the latest "
        f"{PAGE}, as it reads them now; page open: navigation to the timeline drawn."
    )


if __name__ == "__main__":
    main()
