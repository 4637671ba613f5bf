"""Toolsets imported from MCP servers and OpenAPI specs, built as ADK toolsets.

An administrator registers an import: an MCP server (`McpServer`: a stdio command,
or a streamable HTTP URL) or an OpenAPI spec (`OpenApiSpec`: inline text, a file
or a URL). A registration is a small validated pydantic model, so it can be
stored as JSON and rebuilt anywhere. `import_mcp_server()` and
`import_openapi_spec()` validate one and return the ADK toolset (McpToolset,
OpenAPIToolset); `atoolset_for()` does the same for a stored registration, reusing
one toolset per registration per process (an MCP toolset pools its sessions;
callers asking at once, from any thread, get the first one kept);
`arefresh()` re-reads the server's tool list or the spec.

Each toolset remembers its registration (`registration_of()`), and its tools are
prefixed with the import's name unless `prefix` says otherwise, so two servers'
`search` tools never collide.

Modules: `registrations` (the models), `mcp`, `openapi`; this one holds what
works for any import, and re-exports the API. Imports an administrator stores at
run time (ToolImport rows, /api/imports/): `stored` builds their toolsets in each
process; toolsets.import_registry registers, refreshes and deletes them (it syncs
the catalog, which sits above this package), toolsets.import_admin is their admin.
"""

from typing import Any

from asgiref.sync import async_to_sync
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from pydantic import BaseModel

from toolsets.imports.mcp import import_mcp_server, mcp_toolset
from toolsets.imports.openapi import (
    aimport_openapi_spec,
    aopenapi_toolset,
    import_openapi_spec,
)
from toolsets.imports.registrations import (
    ImportFailed,
    McpServer,
    OpenApiSpec,
    Registration,
    registration_of,
)

__all__ = [
    "ImportFailed",
    "ImportedTool",
    "McpServer",
    "OpenApiSpec",
    "Registration",
    "aimport_openapi_spec",
    "alist_tools",
    "arefresh",
    "atoolset_for",
    "import_mcp_server",
    "import_openapi_spec",
    "mcp_toolset",
    "refresh",
    "registration_of",
]


async def atoolset_for(registration: Registration) -> BaseToolset:
    """The toolset of a registration, built once per process and reused."""
    key = _key(registration)
    toolset = _toolsets.get(key)
    if toolset is None:
        # Two callers (threads, or tasks around the await) may both build one:
        # the first kept is everyone's. The other never connected, so nothing of
        # it needs closing.
        toolset = _toolsets.setdefault(key, await _abuild(registration))
    return toolset


_toolsets: dict[str, BaseToolset] = {}


def _key(registration: Registration) -> str:
    return f"{registration.source}:{registration.model_dump_json()}"


async def _abuild(registration: Registration) -> BaseToolset:
    if isinstance(registration, McpServer):
        return mcp_toolset(registration)
    return await aopenapi_toolset(registration)


class ImportedTool(BaseModel):
    """One tool of an import, as the catalog would record it."""

    name: str
    description: str
    parameters: dict[str, Any]


async def alist_tools(toolset: BaseToolset) -> list[ImportedTool]:
    """The tools of a toolset now, by the names the model calls (prefix included).

    Asks `get_tools` itself: `get_tools_with_prefix(None)` would answer from ADK's
    per-invocation cache, where every call without a context shares one entry.
    """
    try:
        tools = await toolset.get_tools(None)
    except (ConnectionError, OSError, TimeoutError) as exc:
        raise ImportFailed(f"the tools could not be listed: {exc}") from exc
    prefix = f"{toolset.tool_name_prefix}_" if toolset.tool_name_prefix else ""
    return [_described(tool, prefix) for tool in tools]


def _described(tool: BaseTool, prefix: str) -> ImportedTool:
    declaration = tool._get_declaration()
    schema: dict[str, Any] = {}
    if declaration is not None and declaration.parameters_json_schema:
        schema = dict(declaration.parameters_json_schema)
    elif declaration is not None and declaration.parameters:
        schema = declaration.parameters.model_dump(mode="json", exclude_none=True)
    description = (declaration.description if declaration else "") or tool.description
    return ImportedTool(
        name=prefix + tool.name, description=description or "", parameters=schema
    )


async def arefresh(
    toolset: BaseToolset,
) -> tuple[BaseToolset, list[ImportedTool]]:
    """Re-read an import: the toolset to use from now on, and its tools.

    An MCP toolset drops its sessions (a stdio server is started anew), lists,
    and drops the session it listed with too: a refresh usually runs on a
    throwaway event loop (async_to_sync), and a session left on a closed loop
    would keep its stdio server running. An OpenAPI toolset is rebuilt from its
    spec's source.
    """
    registration = registration_of(toolset)
    if registration is None:
        raise ImportFailed("not an imported toolset")
    if isinstance(registration, McpServer):
        await toolset.close()
        try:
            tools = await alist_tools(toolset)
        finally:
            await toolset.close()
        return toolset, tools
    fresh = await aopenapi_toolset(registration)
    if _toolsets.get(_key(registration)) is toolset:
        _toolsets[_key(registration)] = fresh
    return fresh, await alist_tools(fresh)


def refresh(toolset: BaseToolset) -> tuple[BaseToolset, list[ImportedTool]]:
    """See arefresh()."""
    return async_to_sync(arefresh)(toolset)
