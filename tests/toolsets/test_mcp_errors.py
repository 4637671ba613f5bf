"""An MCP tool whose result says `isError: true` failed: the audit and the stream
say `error`, not `ok`; the model reads the server's own words and goes on."""

import sys
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from tests.toolsets import goagent
from tests.toolsets.builtin import imported
from toolsets.imports import import_mcp_server
from toolsets.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

MCP_SERVER = Path(__file__).parent / "builtin" / "mcp_server.py"


@pytest.fixture(autouse=True)
def mcp_import(tmp_path, toolcrib_settings):
    tools_file = tmp_path / "tools.txt"
    tools_file.write_text("echo refuse")
    command = [sys.executable, str(MCP_SERVER), "stdio", str(tools_file)]
    imported.calc = import_mcp_server(name="calc_mcp", command=command)
    toolcrib_settings.TOOLCRIB_AGENTS = [
        *toolcrib_settings.TOOLCRIB_AGENTS,
        "tests.toolsets.mcp_agents.mcp_caller",
    ]
    goagent.HEARD.clear()
    yield
    async_to_sync(imported.calc.close)()
    imported.calc = None


def test_an_mcp_result_marked_is_error_is_audited_and_streamed_as_error(
    catalog, alice, start_session, say, events_of
):
    session = start_session(alice, "mcp_caller")

    run = say(alice, session, "refuse boom, then echo hi")

    assert run["status"] == "succeeded"
    responses = {
        r["name"]: r
        for f in events_of(alice, session)
        for r in f["event"]["function_responses"]
    }
    refused = responses["calc_mcp_refuse"]
    assert refused["status"] == "error"
    assert refused["response"]["isError"] is True
    assert "the server refuses 'boom'" in refused["response"]["content"][0]["text"]
    assert responses["calc_mcp_echo"]["status"] == "ok"
    heard = goagent.HEARD[1][-1]  # the server's own words reach the model
    assert heard["isError"] is True
    audit = dict(ToolCall.objects.values_list("tool_full_name", "status"))
    assert audit == {
        "calc_mcp.calc_mcp_refuse": "error",
        "calc_mcp.calc_mcp_echo": "ok",
    }
    summary = ToolCall.objects.get(tool_name="calc_mcp_refuse").result_summary
    assert "the server refuses" in summary
