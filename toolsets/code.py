"""The code behind a catalog row: the ADK tool a Tool row names, found where a sync
finds it (toolsets.bindings).

- a toolset registered in settings: its tools, as settings list them;
- a stored import (MCP server, OpenAPI spec): a toolset of its own, built from the
  row and closed when the caller is done, as a sync lists one (an MCP session is
  tied to the event loop that opened it);
- anything else lives in a code agent: the agent whose AgentSpec names the
  toolset first (its plain tools), then every code agent (a toolset named after
  its class).

Used to run a tool outside any turn (toolsets.governance.direct) and to show its
effective policy (toolsets.policies.effective_policy).
"""

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from django.conf import settings
from django.utils.translation import gettext as _
from google.adk.tools import BaseTool

from agents.models import AgentSpec
from agents.runtime import AgentBuildError
from project.errors import NotFoundError
from toolsets.bindings import (
    Binding,
    abindings_of_code_agent,
    abindings_of_settings_toolset,
    toolset_tools,
    unregistered_toolset,
)
from toolsets.imports.registrations import ImportFailed
from toolsets.imports.stored import IMPORTED_SOURCES, build_toolset
from toolsets.models import Tool, ToolImport


class ToolGone(NotFoundError):
    """The catalog has the tool, but its code no longer does (or cannot load)."""

    code = "tool_gone"

    def __init__(self, full_name: str) -> None:
        super().__init__(
            _("The code of %(full_name)s cannot be found: it is missing.")
            % {"full_name": full_name}
        )


@asynccontextmanager
async def arunnable(row: Tool) -> AsyncIterator[Binding]:
    """The binding of a catalogued tool (its toolset loaded with it), for as long
    as the block runs; ToolGone if the code no longer has it."""
    name = row.toolset.name
    if name in settings.TOOLCRIB_TOOLSETS:
        yield _pick(row, await abindings_of_settings_toolset(name, []))
        return
    stored = await ToolImport.objects.filter(name=name, enabled=True).afirst()
    if stored is not None:
        try:
            toolset = build_toolset(stored)
        except ImportFailed as error:
            raise ToolGone(row.full_name) from error
        try:
            info = unregistered_toolset(toolset)
            listed = await toolset_tools(toolset, None)
            found = [Binding(info, called, tool, base) for called, base, tool in listed]
            yield _pick(row, found)
        finally:
            await toolset.close()
        return
    yield await _in_code_agents(row)


async def acode_tool(row: Tool) -> BaseTool | None:
    """The tool whose code declares the row's policy, without connecting to
    anything: None for an imported tool (its code declares none), or one the
    code no longer has."""
    if row.toolset.source in IMPORTED_SOURCES:
        return None
    try:
        async with arunnable(row) as binding:
            return binding.tool
    except ToolGone:
        return None


async def _in_code_agents(row: Tool) -> Binding:
    specs = AgentSpec.objects.filter(source=AgentSpec.Source.CODE, missing=False)
    ordered = sorted(
        [spec async for spec in specs], key=lambda spec: spec.name != row.toolset.name
    )
    for spec in ordered:
        try:
            found = await abindings_of_code_agent(spec, [])
        except AgentBuildError:
            continue
        binding = next((b for b in found if b.full_name == row.full_name), None)
        if binding is not None:
            return binding
    raise ToolGone(row.full_name)


def _pick(row: Tool, found: Sequence[Binding]) -> Binding:
    for binding in found:
        if binding.full_name == row.full_name:
            return binding
    raise ToolGone(row.full_name)
