"""Single sign-on in a real browser, against a real OpenID Connect provider.

The provider (tests/oidc: the npm package oidc-provider) and a Toolcrib server set
up for it run on 127.0.0.1. erin signs in through the provider's page and lands
signed in; her groups are the provider's group claim, and a grant to one of them
gives her its tools. The provider then moves her to another group: her next
sign-in follows, her tools go, and a grant to her new group brings them back.
"""

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP, TIMEOUT_MS
from tests.browser.server import RestartableServer
from tests.live.server import prepare_database, server_env
from tests.oidc.provider import Provider, running_provider

pytestmark = pytest.mark.browser

TOOLSET = "files"  # a built-in that starts granted_only: only grants open it


@pytest.fixture(scope="module")
def sso(tmp_path_factory) -> Iterator[tuple[RestartableServer, Provider]]:
    """A Toolcrib server of its own, signing people in through the provider."""
    folder = tmp_path_factory.mktemp("sso")
    env = server_env(
        {
            "DATABASE_URL": f"sqlite:///{folder / 'sso.sqlite3'}",
            "TOOLCRIB_DATA_DIR": str(folder),
        }
    )
    server = RestartableServer(env=env, log=folder)
    callback = f"{server.url}/oidc/callback/"
    with running_provider(redirect_uris=[callback], folder=folder) as provider:
        server.env.update(provider.settings_env())
        prepare_database(server.env)
        server.start()
        try:
            yield server, provider
        finally:
            server.stop()


@pytest.fixture(scope="module")
def admin(sso) -> Iterator[httpx.Client]:
    server, _ = sso
    token = server.token("admin", "admin")  # the embedded default keeps passwords
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Token {token}"}
    ) as client:
        yield client


def sign_in_with_provider(browser: Browser, server: RestartableServer) -> Page:
    """erin, in a fresh browser, through the login page and the provider's page."""
    context = browser.new_context(viewport=DESKTOP, base_url=server.url)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto("/login/")
    page.get_by_role("link", name="Sign in with Test ID").click()
    expect(page.get_by_role("heading", name="Test identity provider")).to_be_visible()
    page.fill("#login", "erin")
    page.fill("#password", "erin-pw")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{server.url}/")
    expect(page.locator(".who")).to_contain_text("erin")
    return page


def erin_at_the_provider(provider: Provider, groups: list[str]) -> None:
    provider.set_account(
        "erin",
        password="erin-pw",
        claims={"preferred_username": "erin", "name": "Erin", "groups": groups},
    )


def toolset_allowed(page: Page) -> bool:
    """What the signed-in browser's own session reads of its access."""
    answer = page.request.get("/api/access/")
    assert answer.ok, answer.text()
    [row] = [row for row in answer.json()["toolsets"] if row["name"] == TOOLSET]
    return row["allowed"]


def group_id(admin: httpx.Client, name: str) -> int:
    [group] = [g for g in admin.get("/api/groups/").json() if g["name"] == name]
    return group["id"]


def grant_to(admin: httpx.Client, group: str) -> None:
    granted = admin.post(
        "/api/grants/", json={"toolset": TOOLSET, "group": group, "effect": "allow"}
    )
    assert granted.status_code in {200, 201}, granted.text


def test_groups_and_tools_follow_the_providers_claim(browser, sso, admin, shoot):
    server, provider = sso
    assert admin.post("/api/groups/", json={"name": "support"}).status_code == 201
    grant_to(admin, "support")
    erin_at_the_provider(provider, ["support"])

    page = sign_in_with_provider(browser, server)
    shoot(page, "sign-in-provider-landed")

    erin = admin.get("/api/users/erin/").json()
    assert erin["groups"] == ["support"]
    assert erin["single_sign_on"] is True
    assert toolset_allowed(page)
    page.context.close()

    erin_at_the_provider(provider, ["sales"])
    page = sign_in_with_provider(browser, server)

    assert admin.get("/api/users/erin/").json()["groups"] == ["sales"]
    assert not toolset_allowed(page)
    grant_to(admin, "sales")
    assert toolset_allowed(page)
    members = admin.get(f"/api/groups/{group_id(admin, 'support')}/").json()
    assert members["members"] == []
    page.context.close()


def test_the_login_page_offers_the_provider_beside_passwords(browser, sso, shoot):
    server, _ = sso
    context = browser.new_context(viewport=DESKTOP, base_url=server.url)
    page = context.new_page()

    page.goto("/login/")

    expect(page.get_by_role("link", name="Sign in with Test ID")).to_be_visible()
    expect(page.locator("#id_password")).to_be_visible()
    shoot(page, "login-with-provider")
    context.close()
