"""Browser tests: Playwright (sync API) driving Debian's Chromium against a live Daphne.

Run them as their own pytest process with `-p no:asyncio` (scripts/test.sh does):
sync Playwright and pytest-asyncio cannot share one event loop. Chromium comes from
apt (scripts/ensure-chromium.sh); `playwright install` cannot download browsers here.
Screenshots of every page land in var/screenshots/ (or $TOOLCRIB_SCREENSHOTS).
"""

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.browser.server import RestartableServer
from tests.live.server import ROOT, prepare_database, server_env

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path(os.environ.get("TOOLCRIB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 15_000
SCREENSHOTS = Path(
    os.environ.get("TOOLCRIB_SCREENSHOTS", str(ROOT / "var" / "screenshots"))
)

# Turns run on a shared 2-core machine: give assertions as long as actions.
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="session")
def live_env(tmp_path_factory) -> dict[str, str]:
    """The server's own migrated SQLite database, with the demo users and agents."""
    folder = tmp_path_factory.mktemp("browser-live")
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / 'live.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
            # The remote A2A agents the tests start (test_remote_agents_page).
            "TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS": "127.0.0.1",
            # A slow async tool, to stop a turn mid-call (test_stop_and_regenerate).
            "TOOLCRIB_EXTRA_AGENTS": ",".join(
                [
                    "tests.agents.kettle.kettle",
                    "tests.agents.workflow_agents.triage",
                    "tests.agents.workflow_agents.greeter",
                    "tests.agents.workflow_agents.forecast_flow",
                    "tests.agents.workflow_shapes.counter",
                ]
            ),
        }
    )
    prepare_database(env)
    return env


@pytest.fixture(scope="session")
def server(live_env, tmp_path_factory) -> Iterator[RestartableServer]:
    live = RestartableServer(env=live_env, log=tmp_path_factory.mktemp("logs"))
    live.start()
    yield live
    live.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: run scripts/ensure-chromium.sh (apt-get install "
            "chromium) first; scripts/test.sh does it for you."
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def shoot(screenshots) -> Callable[[Page, str], Path]:
    """Save a full-page screenshot as test output; returns its path."""

    def save(page: Page, name: str) -> Path:
        path = screenshots / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save


@pytest.fixture
def sign_in(browser, server) -> Iterator[Callable[..., Page]]:
    """A page in a fresh browser context, signed in through the login form."""
    contexts = []
    errors: list[str] = []

    def open_page(username: str, *, viewport: dict | None = None) -> Page:
        context = browser.new_context(
            viewport=viewport or DESKTOP,
            base_url=server.url,
            device_scale_factor=1,
            is_mobile=viewport == PHONE,
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{username}: {error}"))
        page.goto("/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", username)
        page.click("button[type=submit]")
        page.wait_for_url(f"{server.url}/")
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture
def api(server) -> Callable[[str], httpx.Client]:
    """An API client with a demo user's token."""
    clients = []

    def client_for(username: str) -> httpx.Client:
        token = server.token(username, username)
        # A turn with ?wait=1 on busy cores, or the first on a restarted server, can
        # outlast httpx's default 5 s: wait as long as the other tests' clients.
        client = httpx.Client(
            base_url=server.url,
            headers={"Authorization": f"Token {token}"},
            timeout=60,
        )
        clients.append(client)
        return client

    yield client_for
    for client in clients:
        client.close()
