"""An extra agent whose module raises on import, on a server of its own: the staff
Agents page shows it and its error beside the agents that work; the home page
offers only those, to staff and users alike."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.agents import code_modules
from tests.browser.conftest import DESKTOP, TIMEOUT_MS
from tests.browser.server import RestartableServer
from tests.live.server import prepare_database, server_env

pytestmark = pytest.mark.browser

BROKEN = "browser_broken_agent"


@pytest.fixture(scope="module")
def broken_server(tmp_path_factory) -> Iterator[RestartableServer]:
    folder = tmp_path_factory.mktemp("broken-agent")
    source, _ = code_modules.RAISES
    (folder / f"{BROKEN}.py").write_text(source)
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / 'broken.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
            "TOOLCRIB_EXTRA_AGENTS": f"{BROKEN}.helper",
            "PYTHONPATH": str(folder),
        }
    )
    prepare_database(env)
    server = RestartableServer(env=env, log=Path(folder))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def open_as(browser, broken_server):
    contexts = []

    def sign_in(username: str):
        context = browser.new_context(viewport=DESKTOP, base_url=broken_server.url)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.goto("/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", username)
        page.click("button[type=submit]")
        page.wait_for_url(f"{broken_server.url}/")
        return page

    yield sign_in
    for context in contexts:
        context.close()


def test_staff_see_a_broken_agent_and_its_error_and_nobody_may_start_it(open_as, shoot):
    _, error = code_modules.RAISES
    admin = open_as("admin")

    admin.goto("/staff/agents/")

    broken = admin.locator('.agent-card[data-agent="helper"]')
    expect(broken).to_contain_text("does not load")
    expect(broken.locator(".state.error")).to_have_text(
        f"{BROKEN}.helper failed to load: {error}"
    )
    expect(admin.locator('.agent-card[data-agent="weather_sentiment"]')).to_be_visible()
    shoot(admin, "agents-broken")
    for page in (admin, open_as("alice")):
        page.goto("/")
        expect(
            page.locator('#agents button[data-agent="weather_sentiment"]')
        ).to_be_visible()
        expect(page.locator('#agents button[data-agent="helper"]')).to_have_count(0)
