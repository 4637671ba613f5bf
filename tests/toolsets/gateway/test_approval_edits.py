"""A gateway client's held call, decided beyond yes or no (issue 45): run with the
arguments an approver changed it to, answered with her text in the tool's place,
or approved by two people before it runs."""

import asyncio

import pytest

from tests.toolsets.gateway.conftest import mcp_client
from tests.toolsets.gateway.test_approvals import needs_approval, waiting_request

WAIT = 8


@pytest.fixture(scope="module")
def gateway_settings() -> dict[str, str]:
    return {"TOOLCRIB_GATEWAY_APPROVAL_WAIT": str(WAIT)}


def answer(api, who: str, tool: str, body: dict) -> dict:
    request = waiting_request(api, who, tool)
    answered = api(who).client.post(f"/api/requests/{request['id']}/answer/", json=body)
    assert answered.status_code == 200, answered.text
    return answered.json()["request"]


async def test_the_client_gets_the_result_of_the_edited_call(gateway, api):
    tool = "inventory_admin.restock_item"
    needs_approval(api, tool)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        call = asyncio.create_task(
            alice.call_tool(tool, {"item": "nuts", "quantity": 300})
        )
        edited = {"item": "nuts", "quantity": 30}
        decided = await asyncio.to_thread(
            answer, api, "bob", tool, {"approved": True, "arguments": edited}
        )
        result = await call

    assert not result.is_error, result.content[0].text
    assert result.structured_content["in_stock"] == 80 + 30
    assert (decided["args"], decided["approved_args"]) == (
        {"item": "nuts", "quantity": 300},
        edited,
    )
    audited = {c["status"]: c for c in api("admin").calls(tool=tool)}
    assert audited["approved"]["approved_args"] == edited
    assert audited["approved"]["args_edited_by"] == "bob"
    assert audited["ok"]["args"] == edited
    assert audited["ok"]["asked_args"] == {"item": "nuts", "quantity": 300}


async def test_an_edit_outside_the_schema_changes_nothing(gateway, api):
    tool = "inventory_query.find_item"
    needs_approval(api, tool)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        call = asyncio.create_task(alice.call_tool(tool, {"item": "bolts"}))
        request = await asyncio.to_thread(waiting_request, api, "bob", tool)
        refused = await asyncio.to_thread(
            api("bob").client.post,
            f"/api/requests/{request['id']}/answer/",
            json={"approved": True, "arguments": {"item": ["bolts"]}},
        )
        await asyncio.to_thread(answer, api, "bob", tool, {"approved": True})
        result = await call

    assert refused.status_code == 400
    assert refused.json()["arguments"][0].startswith("item: ")
    assert not result.is_error
    assert result.structured_content["item"] == "bolts"


async def test_the_client_reads_the_response_as_the_tools_answer(gateway, api):
    tool = "inventory_admin.remove_item"
    needs_approval(api, tool)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        call = asyncio.create_task(alice.call_tool(tool, {"item": "washers"}))
        decided = await asyncio.to_thread(
            answer,
            api,
            "bob",
            tool,
            {"approved": False, "response": "Washers stay: an order is due."},
        )
        result = await call

    assert not result.is_error
    assert result.content[0].text == "Washers stay: an order is due."
    assert decided["response"] == "Washers stay: an order is due."
    [audited] = api("admin").calls(tool=tool)
    assert audited["status"] == "rejected"
    assert "Washers stay" in audited["result_summary"]


async def test_two_people_approve_before_the_call_runs(gateway, api):
    tool = "inventory_query.count_items"
    needs_approval(api, tool, approvals_required=2)

    async with mcp_client(gateway.url, api("alice").token) as alice:
        call = asyncio.create_task(alice.call_tool(tool, {}))
        first = await asyncio.to_thread(answer, api, "bob", tool, {"approved": True})
        await asyncio.sleep(0.5)
        waiting = not call.done()
        second = await asyncio.to_thread(answer, api, "admin", tool, {"approved": True})
        result = await call

    assert (first["status"], first["approvals_required"]) == ("pending", 2)
    assert waiting
    assert second["status"] == "approved"
    assert [a["by"] for a in second["approvals"]] == ["bob", "admin"]
    assert not result.is_error, result.content[0].text
