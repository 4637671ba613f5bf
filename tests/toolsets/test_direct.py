"""Running a tool directly, outside any model turn: the GoAgent executor's
`ExecuteTool(ctx, "calculator", {"expression": "2 + 2"})` as
`POST /api/tools/{name}/invoke/`, governed and audited as a model's call."""

import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.toolsets import gotools, tools
from tests.toolsets.conftest import tool, toolset
from toolsets import grants
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

MCP_SERVER = Path(__file__).parent / "builtin" / "mcp_server.py"


@pytest.fixture(autouse=True)
def _direct_toolsets(toolcrib_settings):
    toolcrib_settings.TOOLCRIB_TOOLSETS = {
        **toolcrib_settings.TOOLCRIB_TOOLSETS,
        "goagent": "tests.toolsets.gotools",
        "math": "toolsets.builtin.calculator.toolset",
        "files": "toolsets.builtin.files.toolset",
        "scratch": "tests.toolsets.scratch_tools.keep_note",
    }
    gotools.SEARCHES.clear()


def invoke(client, name: str, args: dict | None = None, **body):
    return client.post(
        f"/api/tools/{name}/invoke/", {"args": args or {}, **body}, format="json"
    )


def audit_of(name: str) -> list[tuple[str, int]]:
    calls = ToolCall.objects.filter(tool_full_name=name).order_by("started_at", "id")
    return list(calls.values_list("status", "attempts"))


def test_a_tool_runs_directly_with_the_timings_of_its_call(catalog, alice, api_for):
    before = time.time()
    answer = invoke(api_for(alice), "math.calculate", {"expression": "2 + 2"})

    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["tool"], body["status"], body["success"]) == (
        "math.calculate",
        "ok",
        True,
    )
    assert body["result"] == {"status": "success", "expression": "2 + 2", "result": 4}
    assert body["error"] is None
    assert body["attempts"] == 1
    started = datetime.fromisoformat(body["started_at"])
    finished = datetime.fromisoformat(body["finished_at"])
    assert before - 1 <= started.timestamp() <= finished.timestamp()
    assert body["duration_ms"] >= 0
    audited = ToolCall.objects.get(pk=body["audit_id"])
    assert audited.call_id == body["call_id"]
    assert (audited.user, audited.status, audited.args) == (
        alice,
        "ok",
        {"expression": "2 + 2"},
    )
    assert (audited.agent, audited.adk_agent, audited.session_id) == (
        "",
        "direct_call",
        "",
    )
    assert "open to everyone" in audited.access_rule
    listed = api_for(alice).get("/api/tool-calls/?tool=math.calculate").json()
    assert [c["id"] for c in listed] == [body["audit_id"]]


def test_a_tool_that_raises_answers_with_its_error(catalog, alice, api_for):
    answer = invoke(api_for(alice), "goagent.my_tool", {"input": " "})

    assert answer.status_code == 200
    body = answer.json()
    assert (body["status"], body["success"]) == ("error", False)
    assert body["error"] == (
        "my_tool failed: ValueError: input is empty: nothing to process"
    )
    assert body["result"] == {"error": body["error"]}
    assert audit_of("goagent.my_tool") == [("error", 1)]


def test_the_documents_add_tool_returns_its_sum(catalog, alice, api_for):
    body = invoke(api_for(alice), "goagent.add", {"a": 2, "b": 3}).json()

    assert (body["status"], body["result"]) == ("ok", {"result": 5})


def test_a_tool_saves_and_reads_artifacts_in_a_store_of_its_call(
    catalog, alice, api_for
):
    client = api_for(alice)

    first = invoke(client, "scratch.keep_note", {"text": "buy milk"})
    second = invoke(client, "scratch.keep_note", {"text": "call bob"})

    assert first.json()["result"] == {
        "version": 0,
        "read_back": "buy milk",
        "kept": ["note.txt"],
    }
    # A store of its own, each call (docs/permissions.md): nothing of the first.
    assert second.json()["result"]["version"] == 0


def test_the_files_tools_run_directly_and_keep_nothing_past_the_call(
    catalog, alice, api_for
):
    grants.grant_tool(target=toolset("files"), effect="allow", user=alice)
    client = api_for(alice)

    written = invoke(client, "files.write_file", {"path": "a.md", "content": "hi"})
    read = invoke(client, "files.read_file", {"path": "a.md"})
    listed = invoke(client, "files.list_files")

    assert written.json()["result"] == {
        "status": "success",
        "path": "a.md",
        "bytes": 2,
        "version": 0,
    }
    assert read.json()["result"] == {
        "status": "error",
        "error_message": "there is no file 'a.md' in the workspace",
    }
    assert (listed.json()["status"], listed.json()["result"]["files"]) == ("ok", [])


def test_a_denied_tool_is_refused_and_audited(catalog, alice, api_for):
    grants.grant_tool(target=tool("goagent.search"), effect="deny", user=alice)

    answer = invoke(api_for(alice), "goagent.search", {"query": "go"})

    assert answer.status_code == 403
    assert "not available to you" in answer.json()["detail"]
    assert gotools.SEARCHES == []
    assert audit_of("goagent.search") == [("denied", 0)]


def test_arguments_are_checked_against_the_schema(catalog, alice, api_for):
    client = api_for(alice)

    bad = invoke(client, "goagent.add", {"a": "two"})
    extra = invoke(client, "goagent.add", {"a": 1, "b": 2}, trace="x")
    not_an_object = client.post(
        "/api/tools/goagent.add/invoke/", {"args": [1, 2]}, format="json"
    )

    assert bad.status_code == 400
    [message] = bad.json()["args"]
    assert "a: 'two' is not of type 'number'" in message
    assert "b: missing (required)" in message
    assert extra.status_code == 400 and "trace" in extra.json()
    assert not_an_object.status_code == 400 and "args" in not_an_object.json()
    assert audit_of("goagent.add") == [("invalid_args", 0)]  # bodies never ran


def test_the_rate_limit_holds_for_direct_calls(catalog, alice, staff, api_for):
    api_for(staff).patch(
        "/api/tools/goagent.search/",
        {"policy": {"rate_limit": [1, 3600]}},
        format="json",
    )
    client = api_for(alice)

    first = invoke(client, "goagent.search", {"query": "one"})
    second = invoke(client, "goagent.search", {"query": "two"})

    assert first.status_code == 200
    assert second.status_code == 429
    assert "Rate limited" in second.json()["detail"]
    assert gotools.SEARCHES == ["one"]
    assert audit_of("goagent.search") == [("ok", 1), ("rate_limited", 0)]


def test_retries_and_timeouts_of_the_policy_apply(catalog, alice, staff, api_for):
    staff_client, client = api_for(staff), api_for(alice)
    staff_client.patch(
        "/api/tools/goagent.my_tool/",
        {"policy": {"retries": 2, "backoff": 0, "retry_on": ["ValueError"]}},
        format="json",
    )
    staff_client.patch(
        "/api/tools/rockets.stall_forever/",
        {"policy": {"timeout": 0.2}},
        format="json",
    )

    retried = invoke(client, "goagent.my_tool", {"input": ""}).json()
    started = time.monotonic()
    stalled = invoke(client, "rockets.stall_forever").json()

    assert (retried["status"], retried["attempts"]) == ("error", 3)
    assert "failed after 3 attempts" in retried["error"]
    assert time.monotonic() - started < 10  # the tool alone sleeps 60 s
    assert (stalled["status"], stalled["success"]) == ("timeout", False)
    assert "within 0.2 seconds" in stalled["error"]


def test_a_tool_that_needs_approval_does_not_run_and_says_why(
    catalog, alice, staff, api_for
):
    api_for(staff).patch(
        "/api/tools/goagent.search/", {"requires_approval": True}, format="json"
    )

    answer = invoke(api_for(alice), "goagent.search", {"query": "secret"})

    assert answer.status_code == 409
    assert "call it from a session" in answer.json()["detail"]
    assert gotools.SEARCHES == []
    audited = ToolCall.objects.get(tool_full_name="goagent.search")
    assert (audited.status, audited.attempts) == ("refused", 0)
    assert "needs a person" in audited.result_summary


def test_a_code_agents_own_tool_runs_directly(catalog, alice, api_for):
    body = invoke(api_for(alice), "rocketeer.launch_rocket", {"target": "moon"}).json()

    assert body["status"] == "ok"
    assert tools.LAUNCHES == ["moon"]


def test_an_unknown_tool_is_a_404(catalog, alice, api_for):
    assert invoke(api_for(alice), "goagent.nothing").status_code == 404
    assert invoke(api_for(alice), "nothing").status_code == 404


def test_an_mcp_import_runs_directly_on_a_connection_of_its_own(
    catalog, alice, staff, api_for, tmp_path
):
    tools_file = tmp_path / "tools.txt"
    tools_file.write_text("echo refuse")
    command = [sys.executable, str(MCP_SERVER), "stdio", str(tools_file)]
    registered = api_for(staff).post(
        "/api/imports/",
        {"kind": "mcp", "name": "calc_mcp", "command": command, "approve_tools": True},
        format="json",
    )
    assert registered.status_code == 201, registered.content
    client = api_for(alice)

    echoed = invoke(client, "calc_mcp.calc_mcp_echo", {"text": "hi"}).json()
    refused = invoke(client, "calc_mcp.calc_mcp_refuse", {"text": "no"}).json()

    assert echoed["status"] == "ok"
    assert echoed["result"]["content"][0]["text"] == "hi"
    assert (refused["status"], refused["success"]) == ("error", False)
    assert refused["result"]["isError"] is True
