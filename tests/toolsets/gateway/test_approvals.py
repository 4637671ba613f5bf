"""A gateway call that needs approval, with the Python `mcp` SDK's own client: it
waits in the approver's inbox while the client waits, and the approver's answer
over REST decides it. The server waits WAIT seconds for a decision (short here)."""

import asyncio
import json
import time

import pytest
import websockets

from agents.events.wire import EventFrame
from tests.toolsets.gateway.conftest import CLIENT_NAME, mcp_client

WAIT = 4


@pytest.fixture(scope="module")
def gateway_settings() -> dict[str, str]:
    return {"TOOLCRIB_GATEWAY_APPROVAL_WAIT": str(WAIT)}


def needs_approval(api, tool: str, **rule) -> None:
    """The catalog asks the managers (bob) to approve each call of `tool`."""
    body = {"requires_approval": True, "approver_group": "managers", **rule}
    marked = api("admin").client.patch(f"/api/tools/{tool}/", json=body)
    assert marked.status_code == 200, marked.text


def waiting_request(api, who: str, tool: str) -> dict:
    """The pending request of `tool` in `who`'s inbox, once it is there."""
    until = time.monotonic() + 10
    while time.monotonic() < until:
        rows = api(who).client.get("/api/requests/").json()
        found = [row for row in rows if row["tool_name"] == tool]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no request of {tool} in {who}'s inbox")


def answer(api, who: str, tool: str, body: dict) -> dict:
    """`who` finds the request of `tool` in her inbox and answers it over REST."""
    request = waiting_request(api, who, tool)
    answered = api(who).client.post(f"/api/requests/{request['id']}/answer/", json=body)
    assert answered.status_code == 200, answered.text
    assert answered.json()["run"] is None
    return request


async def test_an_approved_call_runs_and_the_waiting_client_gets_its_result(
    gateway, api
):
    tool = "inventory_admin.restock_item"
    needs_approval(api, tool)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        call = asyncio.create_task(
            alice.call_tool(tool, {"item": "widget", "quantity": 3})
        )
        request = await asyncio.to_thread(
            answer, api, "bob", tool, {"approved": True, "comment": "fine"}
        )
        result = await call

    assert not result.is_error, result.content[0].text
    assert result.structured_content["status"] == "success"
    # The inbox showed whose call of what, from which client, redacted as stored.
    assert (request["agent"], request["requester"]) == (CLIENT_NAME, "alice")
    assert request["args"] == {"item": "widget", "quantity": 3}
    assert request["session"] is None
    assert request["session_title"] == f"MCP client {CLIENT_NAME}"
    audited = api("admin").calls(tool=tool, agent=CLIENT_NAME)
    assert sorted((c["status"], c["user"]) for c in audited) == [
        ("approved", "alice"),
        ("ok", "alice"),
    ]
    [held] = [c for c in audited if c["status"] == "approved"]
    assert held["decided_by"] == "bob"


async def test_a_rejected_call_does_not_run_and_says_who_rejected_it(gateway, api):
    tool = "inventory_admin.remove_item"
    needs_approval(api, tool)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        call = asyncio.create_task(alice.call_tool(tool, {"item": "widget"}))
        await asyncio.to_thread(
            answer, api, "bob", tool, {"approved": False, "comment": "not today"}
        )
        result = await call

    assert result.is_error
    assert result.content[0].text == (
        f"{tool} was rejected by bob and did not run: not today."
    )
    [audited] = api("admin").calls(tool=tool)
    assert (audited["status"], audited["agent"]) == ("rejected", CLIENT_NAME)


async def test_a_call_nobody_decides_in_time_expires(gateway, api):
    tool = "inventory_query.count_items"
    needs_approval(api, tool, approval_timeout=1)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        started = time.monotonic()
        result = await alice.call_tool(tool, {})
        waited = time.monotonic() - started

    assert result.is_error
    assert "expired, nobody decided it in time" in result.content[0].text
    assert waited < WAIT
    [audited] = api("admin").calls(tool=tool)
    assert audited["status"] == "expired"
    assert api("bob").client.get("/api/requests/").json() == []


async def test_a_call_still_waiting_runs_when_called_again_once_approved(gateway, api):
    tool = "inventory_query.find_item"
    needs_approval(api, tool)
    notes = []

    async def progress(done, total, message):
        notes.append(message)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        waiting = await alice.call_tool(
            tool, {"item": "bolts"}, progress_callback=progress
        )
        request = await asyncio.to_thread(answer, api, "bob", tool, {"approved": True})
        again = await alice.call_tool(tool, {"item": "bolts"})

    assert waiting.is_error
    assert waiting.structured_content["status"] == "waiting_for_approval"
    assert waiting.structured_content["request"] == request["id"]
    assert waiting.content[0].text.startswith(
        f"Waiting for approval: request {request['id']} is in the approver's inbox"
    )
    assert "call it again with the same arguments" in waiting.content[0].text
    assert notes and notes[0] == waiting.content[0].text
    assert not again.is_error, again.content[0].text
    assert again.structured_content["item"] == "bolts"  # in the demo's stock
    audited = api("admin").calls(tool=tool)
    assert sorted(c["status"] for c in audited) == ["approved", "ok"]


async def test_firehose_shows_a_decided_gateway_call(gateway, api):
    tool = "inventory_admin.restock_item"
    needs_approval(api, tool)
    headers = {"Authorization": f"Token {api('admin').token}"}
    url = f"{gateway.ws_url}/ws/firehose/?agent={CLIENT_NAME}"
    async with websockets.connect(url, additional_headers=headers) as firehose:
        async with mcp_client(gateway.url, api("alice").token) as alice:
            call = asyncio.create_task(
                alice.call_tool(tool, {"item": "gadget", "quantity": 1})
            )
            await asyncio.to_thread(answer, api, "bob", tool, {"approved": False})
            await call
        frame = json.loads(await asyncio.wait_for(firehose.recv(), timeout=5))

    event = EventFrame.model_validate(frame).event
    assert (event.kind, event.author) == ("function_response", CLIENT_NAME)
    [response] = event.function_responses
    assert (response.name, response.status) == (tool, "error")
    assert "rejected by bob" in response.response["error_message"]
