"""A gateway call waiting in the Inbox: alice's MCP client (the Python `mcp` SDK's
own) calls a tool that needs a manager's approval; bob sees on his Inbox page which
client and user asked, the tool and its arguments, with no session to open, and
decides it there; the client, still waiting, gets the call's result or hears it was
rejected. The card passes axe.
"""

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import httpx
import pytest
from mcp import types
from playwright.sync_api import Page, expect

from tests.browser.test_accessibility import report, violations
from tests.toolsets.gateway.conftest import mcp_client

pytestmark = pytest.mark.browser

CLIENT = "browser-editor"
NO_APPROVAL = {
    "requires_approval": False,
    "approver_group": None,
    "approval_timeout": None,
    "requester_may_approve": False,
}


@pytest.fixture
def needs_approval(api) -> Iterator[None]:
    """The managers (bob) approve each call of the inventory's admin tools, for the
    test; the catalog as it was afterwards."""
    admin = api("admin")
    tools = ["inventory_admin.restock_item", "inventory_admin.remove_item"]
    for tool in tools:
        body = {"requires_approval": True, "approver_group": "managers"}
        marked = admin.patch(f"/api/tools/{tool}/", json=body)
        assert marked.status_code == 200, marked.text
    yield
    for tool in tools:
        admin.patch(f"/api/tools/{tool}/", json=NO_APPROVAL)


@pytest.fixture
def calls(api) -> Iterator[ThreadPoolExecutor]:
    """Threads for MCP clients that wait while the page is driven; a call the test
    left undecided is rejected (by staff) afterwards, so no thread waits on."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield pool
        admin = api("admin")
        for row in admin.get("/api/requests/").json():
            if row["session"] is None and row["agent"] == CLIENT:
                admin.post(
                    f"/api/requests/{row['id']}/answer/", json={"approved": False}
                )


def call_tool(
    pool: ThreadPoolExecutor, url: str, token: str, tool: str, args: dict
) -> Future:
    """`tool` called through the gateway by an MCP client named CLIENT, waiting for
    its result in a thread of its own."""

    async def call() -> types.CallToolResult:
        async with mcp_client(url, token, name=CLIENT) as client:
            return await client.call_tool(tool, args)

    return pool.submit(asyncio.run, call())


def waiting_request(client: httpx.Client, tool: str) -> dict:
    """The pending request of `tool` in the client's user's inbox, once it is there."""
    until = time.monotonic() + 15
    while time.monotonic() < until:
        rows = client.get("/api/requests/").json()
        found = [row for row in rows if row["tool_name"] == tool]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no request of {tool} in the inbox")


def card_of(page: Page, request: dict, tab: str):
    """The card of `request` on the Inbox page's tab (`waiting` or `mine`)."""
    page.goto("/inbox/#mine" if tab == "mine" else "/inbox/")
    found = f'#requests-{tab} .card.request[data-request-id="{request["id"]}"]'
    card = page.locator(found)
    expect(card).to_be_visible()
    return card


def toast(page: Page, text: str):
    return page.locator("#toasts .toast", has_text=text)


def test_an_approver_approves_a_gateway_call_and_the_waiting_client_gets_its_result(
    server, api, sign_in, needs_approval, calls, shoot
):
    tool = "inventory_admin.restock_item"
    alice_token = server.token("alice", "alice")
    result = call_tool(
        calls, server.url, alice_token, tool, {"item": "gizmo", "quantity": 4}
    )
    request = waiting_request(api("bob"), tool)
    bob = sign_in("bob")

    card = card_of(bob, request, "waiting")

    meta = card.locator(".inbox-meta")
    expect(meta).to_contain_text("asked by alice")
    expect(meta).to_contain_text(f"through the MCP client {CLIENT}")
    expect(meta).not_to_contain_text("agent ")
    expect(card.locator("a")).to_have_count(0)  # no session to open
    expect(card.locator(".call-name")).to_have_text(tool)
    expect(card.locator(".call-args")).to_contain_text("Arguments (secrets redacted)")
    expect(card.locator(".call-args dl.args")).to_contain_text("gizmo")
    expect(card.locator(".request-part .waits")).to_contain_text("managers")
    assert not violations(bob), report({"inbox with a gateway call": violations(bob)})
    shoot(bob, "inbox-gateway-call")

    card.get_by_role("button", name=f"Approve {tool}").click()

    expect(toast(bob, f"Approved {tool}; the call runs for {CLIENT}.")).to_be_visible()
    ran = result.result(timeout=30)
    assert not ran.is_error, ran.content[0].text
    assert ran.structured_content["status"] == "success"
    assert ran.structured_content["item"] == "gizmo"
    expect(card).to_have_count(0)  # decided: no longer waiting on bob

    alice = sign_in("alice")
    mine = card_of(alice, request, "mine")
    outcome = mine.locator(".approval-outcome")
    expect(outcome).to_contain_text("Approved by bob")
    expect(outcome).to_contain_text(f"the call runs for {CLIENT}.")
    expect(outcome).not_to_contain_text("agent")
    expect(mine.locator(".inbox-meta")).to_contain_text(f"MCP client {CLIENT}")
    expect(mine.locator("a")).to_have_count(0)
    assert not violations(alice), report({"my requests": violations(alice)})


def test_a_rejected_gateway_call_says_the_client_is_told(
    server, api, sign_in, needs_approval, calls
):
    tool = "inventory_admin.remove_item"
    alice_token = server.token("alice", "alice")
    result = call_tool(calls, server.url, alice_token, tool, {"item": "gizmo"})
    request = waiting_request(api("bob"), tool)
    bob = sign_in("bob")
    card = card_of(bob, request, "waiting")

    card.get_by_label("Comment (optional)").fill("not today")
    card.get_by_role("button", name=f"Reject {tool}").click()

    expect(
        toast(bob, f"Rejected {tool}; {CLIENT} is told it was rejected.")
    ).to_be_visible()
    refused = result.result(timeout=30)
    assert refused.is_error
    assert refused.content[0].text == (
        f"{tool} was rejected by bob and did not run: not today."
    )
    mine = card_of(sign_in("alice"), request, "mine")
    outcome = mine.locator(".request-outcome")
    expect(outcome).to_contain_text("Rejected by bob")
    expect(outcome).to_contain_text(f"{CLIENT} is told it was rejected.")
    expect(outcome.locator("blockquote")).to_have_text("not today")
