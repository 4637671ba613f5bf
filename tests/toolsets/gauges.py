"""A BaseToolset the tests register in settings and use inside a code agent."""

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset

from tests.toolsets.tools import audited_read, read_gauge


class GaugeToolset(BaseToolset):
    """Gauges of the rocket."""

    def __init__(self, prefix: str | None = "gauges") -> None:
        super().__init__(tool_name_prefix=prefix)
        self._tools: list[BaseTool] = [
            FunctionTool(read_gauge),
            FunctionTool(audited_read),
        ]

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        """Both tools, minus any the filter leaves out."""
        return [t for t in self._tools if self._is_tool_selected(t, readonly_context)]


gauges = GaugeToolset()


class FlakyToolset(BaseToolset):
    """A remote toolset whose server is sometimes down."""

    down = False

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        """One tool, or ConnectionError while the server is down."""
        if FlakyToolset.down:
            raise ConnectionError("server down")
        return [FunctionTool(read_gauge)]


flaky = FlakyToolset()
