"""Which catalog toolset each tool of an agent belongs to, and under which name.

Decided the same way when the catalog is synced and when a running agent's tools
are mapped to catalog rows (docs/permissions.md):

- a toolset registered in settings.TOOLCRIB_TOOLSETS is named by its settings key;
- a BaseToolset instance that is not registered is named after its class in snake
  case (`SimpleMathToolset` -> `simple_math_toolset`), qualified by where the
  class is defined when another class of a code agent, a settings toolset or a
  code agent has that name too (`billing__admin_tools`);
- the plain tools (functions, BaseTool instances) of a code agent, and of all its
  sub-agents, form a toolset named after the code agent's AgentSpec;
- the plain tools of a row agent come from settings toolsets, and keep their names;
- an imported toolset (MCP / OpenAPI) that is not registered in settings is named
  after its registration: the import an admin stored (toolsets.imports.stored).

A tool is named `<toolset>.<tool>`, where `<tool>` is the name the model calls
(prefix included). ADK's own machinery (transfer_to_agent, adk_request_*, ...) is
never part of the catalog.
"""

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.core import checks
from google.adk.agents import BaseAgent
from google.adk.agents.context import Context
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools import BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset

from agents.models import AgentSpec
from agents.runtime import (
    AgentBuildError,
    BrokenToolset,
    load_code_agent,
    resolve_toolset,
    settings_toolset_target,
)
from toolsets.builtin import catalog_defaults
from toolsets.imports.registrations import (
    Registration,
    failure_of,
    registration_of,
)
from toolsets.imports.stored import build_toolset
from toolsets.models import ToolImport, Toolset

logger = logging.getLogger(__name__)

INTERNAL_TOOL_NAMES = frozenset(
    {"transfer_to_agent", "set_model_response", "finish_task"}
)
INTERNAL_TOOL_PREFIX = "adk_request_"
# Sub-agents that ADK exposes as tools (mode="single_turn" / "task"): agents, not tools.
INTERNAL_TOOL_CLASSES = frozenset({"_SingleTurnAgentTool", "_TaskAgentTool"})
# A tool object with this attribute True is Toolcrib's own machinery too (the
# toolset activation tools of toolsets.activation): never catalogued nor governed.
INTERNAL_TOOL_ATTR = "toolcrib_internal"


@dataclass(frozen=True)
class ToolsetInfo:
    """A toolset as code defines it, before it is a row."""

    name: str
    description: str = ""
    source: str = Toolset.Source.LOCAL
    origin: str = ""
    # Fields the row starts with (e.g. shell: disabled); never applied again later.
    defaults: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Binding:
    """One tool of one ADK agent, and the catalog toolset it belongs to."""

    toolset: ToolsetInfo
    name: str
    tool: BaseTool = field(compare=False)
    base_name: str = ""
    agent: str = ""

    @property
    def full_name(self) -> str:
        return f"{self.toolset.name}.{self.name}"


def is_internal(name: str, tool: BaseTool | None = None) -> bool:
    """True for ADK's own machinery, which is never governed."""
    if name in INTERNAL_TOOL_NAMES or name.startswith(INTERNAL_TOOL_PREFIX):
        return True
    if tool is None:
        return False
    if getattr(tool, INTERNAL_TOOL_ATTR, False) is True:
        return True
    return type(tool).__name__ in INTERNAL_TOOL_CLASSES


def snake_case(name: str) -> str:
    """`SimpleMathToolset` -> `simple_math_toolset`, `MCPToolset` -> `mcp_toolset`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0].strip()


# Settings: which objects are registered under which toolset name.

_registered: tuple[tuple, dict[int, tuple[str, ...]]] | None = None


def registered_names() -> dict[int, tuple[str, ...]]:
    """id() of every registered toolset object or function -> its settings names."""
    global _registered
    items = tuple(sorted(settings.TOOLCRIB_TOOLSETS.items()))
    if _registered is not None and _registered[0] == items:
        return _registered[1]
    index: dict[int, tuple[str, ...]] = {}
    for name, _ in items:
        try:
            target = settings_toolset_target(name)
        except BrokenToolset:
            continue  # none of its tools can run, so none needs a name
        if isinstance(target, ModuleType):
            ids = [id(tool.func) for tool in resolve_toolset(name)]
        else:
            ids = [plain_origin(target)]  # a FunctionTool counts by its function
        for key in ids:
            index[key] = (*index.get(key, ()), name)
    _registered = (items, index)
    return index


_row_toolsets: dict[int, tuple[BaseAgent, list[str]]] = {}
MAX_ROW_AGENTS = 1000


async def row_agent_toolsets(agent: BaseAgent) -> list[str]:
    """The settings toolsets a row agent was built with, read once per built agent."""
    cached = _row_toolsets.get(id(agent))
    if cached is not None and cached[0] is agent:
        return cached[1]
    names = {agent.name, agent.name.replace("_", "-")}
    specs = AgentSpec.objects.filter(source=AgentSpec.Source.DATABASE, name__in=names)
    toolsets = await specs.values_list("toolsets", flat=True).afirst() or []
    if len(_row_toolsets) >= MAX_ROW_AGENTS:
        _row_toolsets.clear()
    _row_toolsets[id(agent)] = (agent, toolsets)
    return toolsets


async def registered_name(agent: BaseAgent, entry: Any) -> str | None:
    """The settings name a row agent's tool came from.

    A function registered under several names (a module and the function alone,
    say) belongs to the one the agent was built with.
    """
    names = registered_names().get(plain_origin(entry), ())
    if len(names) > 1:
        used = await row_agent_toolsets(agent)
        names = tuple(name for name in names if name in used) or names
    return names[0] if names else None


_code_roots: tuple[tuple, dict[str, list[str]]] | None = None


def code_root_names() -> dict[str, list[str]]:
    """ADK name of each code agent's root -> the AgentSpec names it is registered as."""
    global _code_roots
    paths = tuple(settings.TOOLCRIB_AGENTS)
    if _code_roots is not None and _code_roots[0] == paths:
        return _code_roots[1]
    roots: dict[str, list[str]] = {}
    for path in paths:
        try:
            agent = load_code_agent(path)
        except AgentBuildError:
            continue
        roots.setdefault(agent.name, []).append(path.rsplit(".", 1)[-1])
    _code_roots = (paths, roots)
    return roots


# Unregistered toolset classes: their names.

_class_names: tuple[tuple, dict[str, str]] | None = None


def class_origin(cls: type) -> str:
    """Where a class is defined, `module.qualname`: the same in every process."""
    return f"{cls.__module__}.{cls.__qualname__}"


def class_toolset_name(cls: type) -> str:
    """The catalog name of an unregistered toolset class.

    Its class name in snake case, unless another toolset class held by a code
    agent has that snake name too, or a settings toolset or a code agent's
    AgentSpec is named so: then it is qualified by where it is defined, with the
    fewest trailing parts of its module path that tell the colliding classes
    apart (`billing.AdminTools` -> `billing__admin_tools`).
    """
    names = class_toolset_names()
    return names.get(class_origin(cls)) or snake_case(cls.__name__)


def class_toolset_names() -> dict[str, str]:
    """Origin of every unregistered toolset class a code agent holds -> its name.

    Computed from settings alone (TOOLCRIB_AGENTS, TOOLCRIB_TOOLSETS), so every
    process names a class the same way whatever it loaded first.
    """
    global _class_names
    key = (
        tuple(settings.TOOLCRIB_AGENTS),
        tuple(sorted(settings.TOOLCRIB_TOOLSETS.items())),
    )
    if _class_names is not None and _class_names[0] == key:
        return _class_names[1]
    groups: dict[str, set[str]] = {}
    for origin, name in _held_classes():
        groups.setdefault(snake_case(name), set()).add(origin)
    taken = set(settings.TOOLCRIB_TOOLSETS)
    taken |= {path.rsplit(".", 1)[-1] for path in settings.TOOLCRIB_AGENTS}
    names: dict[str, str] = {}
    for snake, origins in groups.items():
        if len(origins) == 1 and snake not in taken:
            names.update(dict.fromkeys(origins, snake))
        else:
            names.update(qualified_names(snake, sorted(origins)))
    _class_names = (key, names)
    return names


def _held_classes() -> Iterator[tuple[str, str]]:
    """(origin, class name) of each unregistered, non-imported BaseToolset in the
    trees of the code agents of settings."""
    registered = registered_names()
    for path in settings.TOOLCRIB_AGENTS:
        try:
            root = load_code_agent(path)
        except AgentBuildError:
            continue
        for agent in iter_agents(root):
            for entry in getattr(agent, "tools", None) or []:
                if not isinstance(entry, BaseToolset) or id(entry) in registered:
                    continue
                if registration_of(entry) is None:
                    yield class_origin(type(entry)), type(entry).__name__


def qualified_names(snake: str, origins: list[str]) -> dict[str, str]:
    """Each origin -> `<where>__<snake>`, `<where>` the fewest trailing parts of
    its module (and enclosing classes) that no other origin shares."""
    paths = [
        [snake_case(part) for part in origin.split(".")[:-1] if part != "<locals>"]
        for origin in origins
    ]
    longest = max(len(path) for path in paths)
    for size in range(1, longest + 1):
        wheres = ["_".join(path[-size:]) for path in paths]
        if len(set(wheres)) == len(wheres):
            break
    return {o: f"{w}__{snake}" for o, w in zip(origins, wheres, strict=True)}


# Toolset and tool descriptions.


def source_of(obj: Any, path: str = "") -> str:
    """builtin, mcp, openapi or local, from the settings path or the class."""
    if path.startswith("toolsets.builtin"):
        return Toolset.Source.BUILTIN
    module = type(obj).__module__
    if "mcp_tool" in module or "Mcp" in type(obj).__name__:
        return Toolset.Source.MCP
    if "openapi_tool" in module or "OpenAPI" in type(obj).__name__:
        return Toolset.Source.OPENAPI
    return Toolset.Source.LOCAL


def broken_toolsets() -> dict[str, str]:
    """Toolsets registered in settings whose code fails to import -> the error."""
    broken = {}
    for name in settings.TOOLCRIB_TOOLSETS:
        try:
            settings_toolset_target(name)
        except BrokenToolset as error:
            broken[name] = error.error
    return broken


def check_toolsets(app_configs: Any = None, **kwargs: Any) -> list[checks.Warning]:
    """System check: a warning, never an error, for each toolset that fails to load."""
    return [
        checks.Warning(
            f"Toolset {name!r} fails to load and is left out: {error}",
            hint="Fix its module or its TOOLCRIB_EXTRA_TOOLSETS entry; every other "
            "toolset and agent works meanwhile.",
            id="toolsets.W002",
        )
        for name, error in broken_toolsets().items()
    ]


def settings_toolset(name: str) -> ToolsetInfo:
    """The toolset registered in settings under `name`.

    Raises:
        BrokenToolset: Its code fails to import.
    """
    path = settings.TOOLCRIB_TOOLSETS[name]
    target = settings_toolset_target(name)
    return ToolsetInfo(
        name=name,
        description=first_line(target.__doc__),
        source=source_of(target, path),
        origin=path,
        defaults=catalog_defaults(target),
    )


def class_toolset(toolset: BaseToolset) -> ToolsetInfo:
    """An unregistered BaseToolset, named after its class (see class_toolset_name)."""
    cls = type(toolset)
    return ToolsetInfo(
        name=class_toolset_name(cls),
        description=first_line(cls.__doc__),
        source=source_of(toolset),
        origin=f"{cls.__module__}.{cls.__qualname__}",
        defaults=catalog_defaults(toolset),
    )


def import_toolset(registration: Registration) -> ToolsetInfo:
    """An imported toolset, named after its registration."""
    kind = "MCP server" if registration.source == Toolset.Source.MCP else "OpenAPI"
    return ToolsetInfo(
        name=registration.name,
        description=f"Tools imported from the {kind} at {registration.origin}.",
        source=registration.source,
        origin=registration.origin,
    )


def unregistered_toolset(toolset: BaseToolset) -> ToolsetInfo:
    """A toolset not in settings: an import's, or one named after its class."""
    registration = registration_of(toolset)
    if registration is not None:
        return import_toolset(registration)
    return class_toolset(toolset)


def agent_toolset(spec_name: str, agent: BaseAgent) -> ToolsetInfo:
    """The plain tools of a code agent."""
    return ToolsetInfo(
        name=spec_name,
        description=f"Tools of the {spec_name} agent. {agent.description}".strip(),
        source=Toolset.Source.LOCAL,
        origin=f"agent {spec_name}",
    )


# Walking agents: which toolset each of their tools belongs to.


def iter_agents(root: BaseAgent) -> Iterator[BaseAgent]:
    """An agent and all its descendants, depth first."""
    yield root
    for sub in root.sub_agents:
        yield from iter_agents(sub)


def plain_tool(entry: Any) -> BaseTool:
    return entry if isinstance(entry, BaseTool) else FunctionTool(entry)


def plain_origin(entry: Any) -> int:
    """The object settings registration is checked against."""
    if isinstance(entry, FunctionTool):
        return id(entry.func)
    return id(entry)


async def toolset_tools(
    toolset: BaseToolset, context: ReadonlyContext | None
) -> list[tuple[str, str, BaseTool]]:
    """(name as the model calls it, name without prefix, tool) for a toolset's tools.

    With a context, ADK's own per-invocation cache answers; without one the prefix is
    applied here, so that listing never disturbs a running invocation's cache.
    """
    if context is not None:
        tools = await toolset.get_tools_with_prefix(context)
        prefix = f"{toolset.tool_name_prefix}_" if toolset.tool_name_prefix else ""
        return [(t.name, t.name.removeprefix(prefix), t) for t in tools]
    tools = await toolset.get_tools(None)
    if not toolset.tool_name_prefix:
        return [(t.name, t.name, t) for t in tools]
    return [(f"{toolset.tool_name_prefix}_{t.name}", t.name, t) for t in tools]


async def listed_tools(
    toolset: BaseToolset,
    info: ToolsetInfo,
    context: ReadonlyContext | None,
    failed: list[str] | None,
) -> list[tuple[str, str, BaseTool]]:
    """toolset_tools(), or nothing when the toolset cannot list its tools.

    ADK runs an agent without a toolset whose listing fails (an MCP server that is
    down, say), so its tools cannot be offered anyway. The failure is logged and,
    for a sync, recorded so that its rows are not marked missing.
    """
    try:
        return await toolset_tools(toolset, context)
    except Exception:  # noqa: BLE001 - any listing failure drops the toolset, as ADK does
        logger.exception("toolset failed to list its tools toolset=%s", info.name)
        if failed is not None:
            failed.append(info.name)
        return []


async def abindings_of_agent(
    agent: BaseAgent,
    *,
    owner: str | None,
    context: ReadonlyContext | None = None,
    failed: list[str] | None = None,
) -> list[Binding]:
    """The catalog bindings of one agent's own tools (not its sub-agents').

    `owner` is the AgentSpec name of the code agent whose tree this agent is in,
    or None inside a row agent.
    """
    registered = registered_names()
    bindings: list[Binding] = []
    for entry in getattr(agent, "tools", None) or []:
        if isinstance(entry, BaseToolset):
            names = registered.get(id(entry))
            info = settings_toolset(names[0]) if names else unregistered_toolset(entry)
            for called, base, tool in await listed_tools(entry, info, context, failed):
                bindings.append(Binding(info, called, tool, base, agent.name))
            continue
        tool = plain_tool(entry)
        if is_internal(tool.name, tool):
            continue
        if owner is not None:
            info = agent_toolset(owner, _root_of(agent))
        elif name := await registered_name(agent, entry):
            info = settings_toolset(name)
        else:
            continue  # a row agent's tool from nowhere: left unmapped, so refused
        bindings.append(Binding(info, tool.name, tool, tool.name, agent.name))
    _refuse_clashes(agent, bindings)
    return bindings


def _refuse_clashes(agent: BaseAgent, found: list[Binding]) -> None:
    """Refuse an agent with two tools of one name (a toolset's among them): ADK would
    declare both and run only the last. The builder refuses plain tools' clashes when
    it loads the agent; a toolset's tools are known only once listed."""
    seen: dict[str, Binding] = {}
    for binding in found:
        other = seen.setdefault(binding.name, binding)
        if other is not binding:
            raise AgentBuildError(
                f"agent {agent.name} has two tools named {binding.name!r} (in "
                f"toolsets {other.toolset.name} and {binding.toolset.name}); rename "
                "one, or give a toolset a tool_name_prefix"
            )


def _root_of(agent: BaseAgent) -> BaseAgent:
    while agent.parent_agent is not None:
        agent = agent.parent_agent
    return agent


def owner_of(agent: BaseAgent, *, app_name: str) -> str | None:
    """The code AgentSpec whose plain-tool toolset an agent's plain tools belong to.

    The highest code agent on the way from the root: a code agent's sub-agents
    share its toolset, even when they are registered on their own too.
    """
    chain = [agent]
    while chain[-1].parent_agent is not None:
        chain.append(chain[-1].parent_agent)
    roots = code_root_names()
    for node in reversed(chain):
        specs = roots.get(node.name)
        if specs:
            return app_name if app_name in specs else specs[0]
    return None


async def abindings_for_invocation(
    context: Context, agent: BaseAgent | None = None
) -> dict[str, Binding]:
    """Tool name -> binding, for the agent running in this invocation (`agent`, when
    the caller has it at hand), right now."""
    agent = agent if agent is not None else context.get_invocation_context().agent
    owner = owner_of(agent, app_name=context.session.app_name)
    found = await abindings_of_agent(agent, owner=owner, context=context)
    return {binding.name: binding for binding in found}


async def abindings_of_tree(root: BaseAgent, *, app_name: str) -> list[Binding]:
    """Every binding of an agent tree, as the catalog and /agents/{name}/tools/ see it."""
    found: list[Binding] = []
    for agent in iter_agents(root):
        owner = owner_of(agent, app_name=app_name)
        found += await abindings_of_agent(agent, owner=owner)
    return found


def bindings_of_tree(root: BaseAgent, *, app_name: str) -> list[Binding]:
    """See abindings_of_tree()."""
    return async_to_sync(abindings_of_tree)(root, app_name=app_name)


async def abindings_of_settings(failed: list[str]) -> list[Binding]:
    """Every tool of every toolset registered in settings.

    A toolset whose code fails to import is added to `failed` (its rows stay as
    they were) and the others are listed.
    """
    found: list[Binding] = []
    for name in settings.TOOLCRIB_TOOLSETS:
        try:
            found += await abindings_of_settings_toolset(name, failed)
        except BrokenToolset:
            failed.append(name)
    return found


async def abindings_of_settings_toolset(name: str, failed: list[str]) -> list[Binding]:
    """Every tool of the toolset registered in settings as `name`."""
    info = settings_toolset(name)
    found: list[Binding] = []
    for entry in resolve_toolset(name):
        if isinstance(entry, BaseToolset):
            for called, base, tool in await listed_tools(entry, info, None, failed):
                found.append(Binding(info, called, tool, base))
        else:
            tool = plain_tool(entry)
            found.append(Binding(info, tool.name, tool, tool.name))
    return found


async def abindings_of_code_agent(spec: AgentSpec, failed: list[str]) -> list[Binding]:
    """Every tool of a code agent's tree."""
    root = load_code_agent(spec.dotted_path)
    found: list[Binding] = []
    for agent in iter_agents(root):
        found += await abindings_of_agent(agent, owner=spec.name, failed=failed)
    return found


async def abindings_of_imports(failed: list[str]) -> list[Binding]:
    """Every tool of every enabled stored import, as its server or spec says now.

    An import that cannot be listed (its server is down, say) is added to `failed`
    and its error recorded on its row; the tools of every other one are listed.
    """
    found: list[Binding] = []
    async for row in ToolImport.objects.filter(enabled=True):
        try:
            listed, info = await alist_import(row)
        except Exception as exc:  # noqa: BLE001 - one import down never stops a sync
            logger.warning("import failed to list its tools import=%s", row.name)
            failed.append(row.name)
            await _record(row, error=failure_of(exc))
            continue
        found += [Binding(info, called, tool, base) for called, base, tool in listed]
        await _record(row, error="")
    return found


async def alist_import(
    row: ToolImport,
) -> tuple[list[tuple[str, str, BaseTool]], ToolsetInfo]:
    """toolset_tools() of a stored import, on a toolset of its own.

    Not the process's shared one: listing here often runs on a throwaway event
    loop (async_to_sync), and an MCP session left on a closed loop would keep its
    stdio server running. This one is closed once listed.
    """
    toolset = build_toolset(row)
    try:
        return await toolset_tools(toolset, None), unregistered_toolset(toolset)
    finally:
        await toolset.close()


async def _record(row: ToolImport, *, error: str) -> None:
    # update(), not save(): a new updated_at would make every process rebuild it.
    await ToolImport.objects.filter(pk=row.pk).aupdate(last_error=error)
