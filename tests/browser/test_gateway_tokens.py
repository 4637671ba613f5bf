"""The Tokens page: alice makes a personal access token for one toolset, copies it
from the page (shown once), an MCP client opens the gateway with it, and once she
revokes it on the page the gateway refuses it."""

import httpx
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "browser-test", "version": "1"},
    },
}


def initialize(url: str, token: str) -> int:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    return httpx.post(f"{url}/mcp", json=INITIALIZE, headers=headers).status_code


def test_a_token_made_on_the_page_opens_the_gateway_until_revoked(
    sign_in, server, shoot
):
    alice = sign_in("alice")
    alice.get_by_role("link", name="Tokens").click()
    expect(alice.locator("#gateway-url")).to_have_text(f"{server.url}/mcp")

    alice.get_by_label("What it is for").fill("my editor")
    alice.get_by_label("math", exact=True).check()
    alice.get_by_role("button", name="Create token").click()
    token = alice.locator("#new-token-value").inner_text()
    expect(alice.locator("#token-list")).to_contain_text("my editor")
    expect(alice.locator("#token-list")).to_contain_text(token[:12])
    shoot(alice, "gateway-tokens")

    assert initialize(server.url, token) == 200

    alice.once("dialog", lambda dialog: dialog.accept())
    alice.get_by_role("button", name="Revoke my editor").click()
    expect(alice.locator("#token-list")).to_contain_text("No tokens yet")
    assert initialize(server.url, token) == 401
    alice.reload()
    expect(alice.locator("#new-token-value")).to_have_count(0)  # shown once
