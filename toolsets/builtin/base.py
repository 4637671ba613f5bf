"""What every built-in toolset shares: the tool wrapper, the toolset.

A built-in tool is a plain function that raises `Refusal` (toolsets.refusals) when
it will not do what it was asked. `BuiltinTool` turns a refusal into the answer the model reads,
`{"status": "error", "error_message": ...}` (the shape GovernancePlugin uses for a
refused call), so the model can correct itself and the audit records an error.
Anything else a tool raises is a bug and propagates.
"""

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool, ToolContext
from google.adk.tools.base_toolset import BaseToolset

from toolsets.grant_conditions import URL_ARGUMENTS
from toolsets.refusals import Refusal


class BuiltinTool(FunctionTool):
    """A FunctionTool whose refusals become error answers, with a declared risk.

    The catalog reads the risk from `custom_metadata["risk"]` (read, write or
    dangerous); a grant's condition judges the arguments named in `urls` as URLs
    (toolsets.grant_conditions).
    """

    def __init__(
        self, func: Callable[..., Any], *, risk: str, urls: Sequence[str] = ()
    ) -> None:
        super().__init__(func)
        self.custom_metadata = {"risk": risk}
        if urls:
            self.custom_metadata[URL_ARGUMENTS] = list(urls)

    async def run_async(
        self, *, args: dict[str, Any], tool_context: ToolContext
    ) -> Any:
        """Run the function; a Refusal is answered, not raised."""
        try:
            return await super().run_async(args=args, tool_context=tool_context)
        except Refusal as exc:
            return exc.as_result()


class BuiltinToolset(BaseToolset):
    """A fixed list of built-in tools, minus any that `tool_filter` leaves out.

    Instances are shared by every agent, user and session: they hold no state but
    their tools, and every policy knob is read from Django settings per call.
    """

    def __init__(
        self,
        tools: Sequence[BuiltinTool],
        *,
        tool_filter: Sequence[str] | None = None,
        tool_name_prefix: str | None = None,
    ) -> None:
        super().__init__(
            tool_filter=list(tool_filter) if tool_filter is not None else None,
            tool_name_prefix=tool_name_prefix,
        )
        self._tools = list(tools)

    async def get_tools(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        """Every tool of the toolset that the filter selects."""
        return [t for t in self._tools if self._is_tool_selected(t, readonly_context)]


def kept_folder(folder: Path) -> tuple[str, Path] | None:
    """The folder of Toolcrib's own that `folder` is inside, is, or holds (its
    name and path), or None: no tool may reach the data, the media or the code."""
    for name, other in (
        ("the data folder", settings.DATA_DIR),
        ("the media folder", settings.MEDIA_ROOT),
        ("the project", settings.BASE_DIR),
    ):
        kept = Path(other).resolve()
        if folder == kept or kept in folder.parents or folder in kept.parents:
            return name, kept
    return None


def text_limit(text: str, limit: int) -> tuple[str, bool]:
    """The text cut to `limit` characters, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True
