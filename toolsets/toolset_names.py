"""Which name a toolset object has in the catalog (docs/permissions.md).

A toolset registered in settings.TOOLCRIB_TOOLSETS is named by its settings key
(`registered_names`, `registered_name` for a row agent's tool); an unregistered
BaseToolset class by its class name in snake case, qualified by where it is
defined when two classes, a settings toolset or a code agent share that name
(`class_toolset_name`). Computed from settings alone, so every process names a
toolset the same way whatever it loaded first. toolsets.bindings maps an agent's
tools to these names.
"""

import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from django.conf import settings
from google.adk.agents import BaseAgent
from google.adk.tools import FunctionTool
from google.adk.tools.base_toolset import BaseToolset

from agents.models import AgentSpec
from agents.runtime import (
    AgentBuildError,
    BrokenToolset,
    load_code_agent,
    node_tools,
    resolve_toolset,
    settings_toolset_target,
    walk_nodes,
)
from toolsets.imports.registrations import registration_of


def snake_case(name: str) -> str:
    """`SimpleMathToolset` -> `simple_math_toolset`, `MCPToolset` -> `mcp_toolset`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


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
    row = await specs.values_list("toolsets", "tools").afirst() or ([], [])
    toolsets = [*row[0], *(entry["toolset"] for entry in row[1] or ())]
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


def iter_agents(root: Any) -> Iterator[Any]:
    """An agent and all its descendants, depth first: those inside workflows, and
    a workflow's tool nodes too (each with its one tool: agents.runtime.node_tools)."""
    return (node for node in walk_nodes(root) if node_tools(node))


def plain_origin(entry: Any) -> int:
    """The object settings registration is checked against."""
    if isinstance(entry, FunctionTool):
        return id(entry.func)
    return id(entry)
