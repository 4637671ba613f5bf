"""An MCP tool's risk as its server annotates it: a tool marked read-only is read
(never `write`, guessed from a verb the catalog does not know), one marked
destructive dangerous; a risk the code declares still wins, and a tool without
annotations is guessed from its name as before."""

from google.adk.tools import FunctionTool
from google.adk.tools.mcp_tool.mcp_tool import McpTool
from mcp.types import Tool as ListedTool
from mcp.types import ToolAnnotations

from toolsets.catalog import declared_risk, guessed_risk


def mcp_tool(name: str, **hints) -> McpTool:
    annotations = ToolAnnotations(**hints) if hints else None
    listed = ListedTool(name=name, inputSchema={}, annotations=annotations)
    return McpTool(mcp_tool=listed, mcp_session_manager=None)


def test_a_tool_its_server_marks_read_only_is_read():
    tool = mcp_tool("echo", read_only_hint=True)

    assert guessed_risk("echo") == "write"  # what the name alone would say
    assert declared_risk(tool) == "read"


def test_a_tool_its_server_marks_destructive_is_dangerous():
    assert declared_risk(mcp_tool("tidy", destructive_hint=True)) == "dangerous"


def test_a_tool_without_hints_is_left_to_its_name():
    assert declared_risk(mcp_tool("echo")) is None
    assert declared_risk(mcp_tool("echo", read_only_hint=False)) is None


def test_a_risk_the_code_declares_is_read_as_before():
    def echo(text: str) -> str:
        return text

    echo.risk = "dangerous"

    assert declared_risk(FunctionTool(echo)) == "dangerous"
