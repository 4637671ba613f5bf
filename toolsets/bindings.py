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

The names of settings toolsets and of toolset classes are worked out in
toolsets.toolset_names; the catalog row a toolset starts with, here.

A tool is named `<toolset>.<tool>`, where `<tool>` is the name the model calls
(prefix included). ADK's own machinery (transfer_to_agent, adk_request_*, ...) is
never part of the catalog.
"""

import logging
from dataclasses import dataclass, field
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
    node_tools,
    path_names,
    resolve_toolset,
    settings_toolset_target,
)
from toolsets.imports.registrations import (
    Registration,
    failure_of,
    registration_of,
)
from toolsets.imports.stored import build_toolset
from toolsets.models import ToolImport, Toolset
from toolsets.toolset_names import (
    class_toolset_name,
    code_root_names,
    iter_agents,
    registered_name,
    registered_names,
)

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


def first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0].strip()


# Toolset and tool descriptions.


def catalog_defaults(toolset: object) -> dict[str, Any]:
    """Fields a toolset's catalog row starts with, e.g. shell: disabled, granted only.

    For the catalog to apply when it first creates the row; an administrator's
    later changes are never overwritten.
    """
    return dict(getattr(toolset, "catalog_defaults", None) or {})


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
    if registration.source == Toolset.Source.A2A:
        # Delegating sends the user's words to another platform: granted only.
        return ToolsetInfo(
            name=registration.name,
            description=f"Delegation to the remote A2A agent at {registration.origin}.",
            source=registration.source,
            origin=registration.origin,
            defaults={"default_policy": Toolset.Policy.GRANTED_ONLY},
        )
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


def plain_tool(entry: Any) -> BaseTool:
    return entry if isinstance(entry, BaseTool) else FunctionTool(entry)


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
    for entry in node_tools(agent):
        if isinstance(entry, BaseToolset):
            # Some tools of a toolset (agents.adk.tool_selection) are its tools.
            origin = getattr(entry, "source_toolset", entry)
            names = registered.get(id(origin))
            info = settings_toolset(names[0]) if names else unregistered_toolset(origin)
            for called, base, tool in await listed_tools(entry, info, context, failed):
                bindings.append(Binding(info, called, tool, base, agent.name))
            continue
        tool = plain_tool(entry)
        if is_internal(tool.name, tool):
            continue
        if owner is not None:
            info = code_agent_toolset(owner, agent)
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


# A code agent's plain-tool toolset, by (AgentSpec name, dotted path): a model step
# maps every plain tool of its agent, and the toolset's description is its root's,
# which only a restart changes (a code agent is imported once). Shared by the
# process's threads: a dict's get and set are atomic; two threads that miss at once
# both build the same value.
_code_agent_toolsets: dict[tuple[str, str], ToolsetInfo] = {}


def code_agent_toolset(owner: str, agent: Any) -> ToolsetInfo:
    """agent_toolset() of the code agent `owner`, as settings register it (read
    once a process); else of `agent`'s own root (a workflow's nodes have no
    parent to climb to)."""
    for path in settings.TOOLCRIB_AGENTS:
        if path.rsplit(".", 1)[-1] == owner:
            info = _code_agent_toolsets.get((owner, path))
            if info is None:
                try:
                    root = load_code_agent(path)
                except AgentBuildError:
                    break
                info = _code_agent_toolsets[(owner, path)] = agent_toolset(owner, root)
            return info
    return agent_toolset(owner, _root_of(agent))


def _root_of(agent: Any) -> Any:
    while getattr(agent, "parent_agent", None) is not None:
        agent = agent.parent_agent
    return agent


def owner_of(agent: Any, *, app_name: str, path: str | None = None) -> str | None:
    """The code AgentSpec whose plain-tool toolset an agent's plain tools belong to.

    The highest code agent on the way from the root: a code agent's sub-agents
    share its toolset, even when they are registered on their own too. Inside a
    workflow (ADK 2.x) an agent or tool node has no parent: the highest code agent
    named on its node `path` (`wf@1/review@1`) owns it.
    """
    chain = [agent]
    while getattr(chain[-1], "parent_agent", None) is not None:
        chain.append(chain[-1].parent_agent)
    names = path_names(path) + [node.name for node in reversed(chain)]
    roots = code_root_names()
    for name in names:
        specs = roots.get(name)
        if specs:
            return app_name if app_name in specs else specs[0]
    return None


async def abindings_for_invocation(
    context: Context, agent: Any = None, tool: BaseTool | None = None
) -> dict[str, Binding]:
    """Tool name -> binding, for the agent running in this invocation (`agent`, when
    the caller has it at hand), right now; given the `tool` of a workflow's tool
    node (is_tool_node_call: no model asked for it), that tool's binding."""
    app_name = context.session.app_name
    path = getattr(context, "node_path", None)
    if tool is not None:
        agent = ToolNodeOwner(tool, path)
    elif agent is None:
        agent = context.get_invocation_context().agent
    if agent is None:
        return {}
    owner = owner_of(agent, app_name=app_name, path=path)
    found = await abindings_of_agent(agent, owner=owner, context=context)
    return {binding.name: binding for binding in found}


def is_tool_node_call(context: Context) -> bool:
    """Whether a call is a workflow's tool node running its tool (no model asked
    for it): no agent runs it, or the node path ends in another name than the
    running agent's (a workflow an agent calls as a tool runs under that agent)."""
    agent = context.get_invocation_context().agent
    if agent is None:
        return True
    names = path_names(getattr(context, "node_path", None))
    return bool(names) and names[-1] != agent.name


class ToolNodeOwner:
    """A workflow's tool node as the agent its one tool is bound to: named by its
    node path's last name, with no parent (its owner is read from the path)."""

    def __init__(self, tool: BaseTool, path: str | None) -> None:
        names = path_names(path)
        self.name = names[-1] if names else tool.name
        self.description = ""
        self.tools = [tool]


async def abindings_of_tree(root: Any, *, app_name: str) -> list[Binding]:
    """Every binding of an agent tree, as the catalog and /agents/{name}/tools/ see it;
    the agents and tool nodes of its workflows too (agents.adk.nodes)."""
    found: list[Binding] = []
    top = owner_of(root, app_name=app_name)
    for agent in iter_agents(root):
        owner = owner_of(agent, app_name=app_name) or top
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
