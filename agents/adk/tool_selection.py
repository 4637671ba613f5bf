"""Single tools of a toolset: a row agent may take some tools of a toolset, not all.

A row agent lists whole toolsets in `toolsets` and single tools in `tools`
(`[{"toolset": ..., "tool": ...}]`). Its tools are the whole toolsets' and, for
each other toolset named in `tools`, only the named ones: plain functions and
tools are picked by name; a BaseToolset (a built-in, an MCP or OpenAPI import) is
wrapped in a SelectedTools that lists only the named tools. ADK offers the model
only what the agent's tools list, so a tool left out is never offered, and a call
of it is answered "not found" by ADK before governance or the tool runs.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from asgiref.sync import async_to_sync
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool
from google.adk.tools.base_toolset import BaseToolset


class SelectedTools(BaseToolset):
    """Only the named tools of another toolset, which stays its owner's to close.

    Governance names the tools after the toolset they come from: it reads
    `source_toolset` (toolsets.bindings).
    """

    def __init__(self, source: BaseToolset, names: Iterable[str]) -> None:
        super().__init__(
            tool_filter=sorted(set(names)), tool_name_prefix=source.tool_name_prefix
        )
        self.source_toolset = source

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        tools = await self.source_toolset.get_tools(readonly_context)
        return [t for t in tools if self._is_tool_selected(t, readonly_context)]

    async def close(self) -> None:
        """Nothing: the source toolset is shared, and closed by its owner."""


def selections(tools: Sequence[Mapping[str, str]]) -> dict[str, list[str]]:
    """Toolset name -> the names of the tools picked from it, in order."""
    picked: dict[str, list[str]] = {}
    for entry in tools:
        picked.setdefault(entry["toolset"], []).append(entry["tool"])
    return picked


def entry_name(entry: Any) -> str:
    """The name the model calls a plain tool by (a function's, or a BaseTool's)."""
    if isinstance(entry, BaseTool):
        return entry.name
    return getattr(entry, "__name__", str(entry))


def select(entries: Sequence[Any], names: Sequence[str]) -> list[Any]:
    """The entries of a toolset (functions, tools, toolsets) narrowed to `names`."""
    wanted = set(names)
    kept: list[Any] = []
    for entry in entries:
        if isinstance(entry, BaseToolset):
            kept.append(SelectedTools(entry, wanted))
        elif entry_name(entry) in wanted:
            kept.append(entry)
    return kept


def tool_names(entries: Sequence[Any]) -> set[str]:
    """Every tool name a toolset's entries offer; a BaseToolset is listed now.

    Raises:
        Exception: Whatever listing a toolset raises (an MCP server down, say).
    """
    names: set[str] = set()
    for entry in entries:
        if isinstance(entry, BaseToolset):
            names |= {tool.name for tool in async_to_sync(entry.get_tools)(None)}
        else:
            names.add(entry_name(entry))
    return names
