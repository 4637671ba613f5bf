"""Agent specs (code or rows) -> ADK agent trees, cached and rebuilt when a spec changes.

Safe under a worker's threads: a code agent (one object per process) has its
AgentTools adopted under a lock, once; a tree built by two turns at once is built
twice, each whole, and either is kept (tests/agents/adk/test_builder_threads.py).
"""

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Any, Protocol

from django.conf import settings
from django.db.models import QuerySet
from django.utils.module_loading import import_string
from google.adk.agents import BaseAgent, LlmAgent, LoopAgent, SequentialAgent
from google.adk.tools import BaseTool, FunctionTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.workflow import BaseNode

from agents.adk.agent_tools import AgentToolError, adopt_agent_tools
from agents.adk.nodes import children, is_workflow, node_tools, walk
from agents.adk.tool_selection import select, selections
from agents.inputs import parse_history, parse_starters
from agents.models import HISTORY_DEFAULT, AgentSpec
from project.patches.prepared import Param, Prepared

logger = logging.getLogger(__name__)

MAX_DEPTH = 8


class AgentBuildError(Exception):
    """An agent spec cannot be turned into an ADK agent (bad path, cycle, ...)."""

    code = "AGENT_NOT_LOADED"  # a failed turn's error code (docs/events.md)
    # What a user who is not staff reads: the error itself names code, and the
    # message of whatever the agent's code raised.
    public_message = (
        "This agent cannot run now: its code does not load. An administrator sees "
        "why on the Agents page."
    )


class BrokenToolset(AgentBuildError):
    """The code of a toolset TOOLCRIB_TOOLSETS names fails to import.

    Only the agents that list it fail; every other agent, the catalog and the
    server go on (the catalog shows the error: toolsets.bindings.broken_toolsets).
    """

    def __init__(self, name: str, path: str, error: str) -> None:
        self.name, self.path, self.error = name, path, error
        super().__init__(f"toolset {name!r} ({path}) failed to load: {error}")
        # Its name, not its code's path or error (staff see those on the catalog).
        self.public_message = (
            f"This agent cannot run now: its toolset {name!r} does not load. An "
            "administrator sees why in the tool catalog (/api/toolsets/)."
        )


@dataclass(frozen=True)
class BuiltAgent:
    spec_name: str
    fingerprint: str
    root: BaseNode  # an agent, or a Workflow (agents.adk.nodes)


_cache: dict[str, BuiltAgent] = {}


class ToolsetSource(Protocol):
    """What TOOLCRIB_TOOLSET_SOURCE names: the toolsets settings do not list."""

    def resolve(self, name: str) -> list[Any] | None:
        """The tools or toolsets for `name`; None if the source does not know it."""

    def versions(self, names: Iterable[str]) -> str:
        """A string that changes whenever one of these toolsets changes."""

    def names(self) -> set[str]:
        """Every name the source knows."""


def toolset_source() -> ToolsetSource:
    """The object settings.TOOLCRIB_TOOLSET_SOURCE names, imported when asked."""
    return import_string(settings.TOOLCRIB_TOOLSET_SOURCE)


# Dotted path of a code agent whose module failed to import -> the error.
_unimportable: dict[str, str] = {}

# Adopting changes a code agent in place, and a module's agent is one object per
# process: one thread adopts a tree while the others wait (the second finds it
# adopted and changes nothing).
_adopting = threading.Lock()


def load_code_agent(dotted_path: str) -> BaseNode:
    """Import an ADK agent defined in code, by dotted path, ready to run: its
    AgentTools adopted (agents.adk.agent_tools), its tools' names checked.

    An agent, or any other ADK node that runs as a root under `adk api_server`: a
    `Workflow` graph (ADK 2.x), whose agents and tools are walked as sub-agents'
    are (agents.adk.nodes).

    Raises:
        AgentBuildError: It does not import (remembered until the process
            restarts, as a module that imported stays imported), its factory
            raises, it is no agent, or one of its agents has two tools of one name.
    """
    agent = _import_agent(dotted_path)
    if callable(agent) and not isinstance(agent, BaseNode):
        try:
            agent = agent()
        except Exception as exc:  # noqa: BLE001 - as _import_agent says
            raise AgentBuildError(load_failure(dotted_path, exc)) from exc
    if not isinstance(agent, BaseNode):
        raise AgentBuildError(f"{dotted_path} is not an ADK agent or workflow")
    with _adopting:
        _adopt(agent, dotted_path)
    check_tool_names(agent)
    return agent


def _import_agent(dotted_path: str) -> Any:
    if dotted_path in _unimportable:
        raise AgentBuildError(_unimportable[dotted_path])
    try:
        return import_string(dotted_path)
    # Any error a module's own code raises, not only ImportError: an extra agent is
    # an operator's code, and one that breaks stops no other agent.
    except Exception as exc:  # noqa: BLE001
        error = _unimportable[dotted_path] = load_failure(dotted_path, exc)
        raise AgentBuildError(error) from exc


def load_failure(dotted_path: str, exc: Exception) -> str:
    """Which agent failed to load, and the exception's type and message.

    Never the traceback: its source lines may hold secrets, and staff read this in
    the agents API and the logs.
    """
    return f"{dotted_path} failed to load: {type(exc).__name__}: {exc}"


def _adopt(agent: BaseNode, source: str) -> None:
    try:
        adopt_agent_tools(agent)
    except AgentToolError as exc:
        raise AgentBuildError(f"{source}: {exc}") from exc


def check_tool_names(root: BaseNode) -> None:
    """Refuse a tree in which one agent declares two tools of one name: ADK would
    declare both to the model and run only the last.

    Tools of a BaseToolset are listed only when the agent runs: governance checks
    those (toolsets.bindings).

    Raises:
        AgentBuildError: Says which agent, which name, and what the two tools are.
    """
    for agent in walk(root):
        seen: dict[str, Any] = {}
        for entry in node_tools(agent):
            if isinstance(entry, BaseToolset):
                continue
            name = tool_name(entry)
            if name in seen:
                raise AgentBuildError(
                    f"agent {agent.name} has two tools named {name!r} "
                    f"({describe_tool(seen[name])} and {describe_tool(entry)}); "
                    "rename one"
                )
            seen[name] = entry


def tool_name(entry: Any) -> str:
    """The name the model calls a tool by (a function's, or a BaseTool's own)."""
    if isinstance(entry, BaseTool):
        return entry.name
    return getattr(entry, "__name__", str(entry))


def describe_tool(entry: Any) -> str:
    """Where a tool comes from, for an error message: module.function or its class."""
    target = getattr(entry, "func", entry)
    module = getattr(target, "__module__", "")
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}.{qualname}" if module else qualname


def resolve_toolset(name: str) -> list[Any]:
    """The ADK tools or toolsets registered in settings, or imported, as `name`."""
    paths = settings.TOOLCRIB_TOOLSETS
    if name not in paths:
        stored = toolset_source().resolve(name)  # e.g. an MCP import an admin stored
        if stored is None:
            raise AgentBuildError(f"unknown toolset {name!r}")
        return stored
    target = settings_toolset_target(name)
    if isinstance(target, ModuleType):
        return [
            FunctionTool(func)
            for attr, func in vars(target).items()
            if callable(func)
            and not attr.startswith("_")
            and func.__module__ == target.__name__
        ]
    if isinstance(target, (BaseTool, BaseToolset)):
        return [target]
    if callable(target):
        return [FunctionTool(target)]
    raise AgentBuildError(f"toolset {name!r} is not a tool, toolset or module")


# (name, path) of a settings toolset whose code failed to import -> the error.
_broken: dict[tuple[str, str], str] = {}


def settings_toolset_target(name: str) -> Any:
    """The object TOOLCRIB_TOOLSETS registers as `name`: a module, tool or toolset.

    Raises:
        BrokenToolset: Its code fails to import (remembered until the process
            restarts, as a module that imported stays imported).
    """
    path = settings.TOOLCRIB_TOOLSETS[name]
    if (name, path) in _broken:
        raise BrokenToolset(name, path, _broken[(name, path)])
    try:
        return import_string(path)
    # Any error a module's own code raises on import, not only ImportError: an
    # extra toolset is an operator's code, and one that breaks stops nothing else.
    except Exception as exc:  # noqa: BLE001
        error = _broken[(name, path)] = f"{type(exc).__name__}: {exc}"
        logger.error("toolset failed to load name=%s error=%s", name, error)
        raise BrokenToolset(name, path, error) from exc


def fingerprint(spec: AgentSpec, depth: int = 0) -> str:
    """A string that changes whenever the spec or any sub-agent spec changes."""
    if depth > MAX_DEPTH:
        raise AgentBuildError(f"agent {spec.name}: sub-agents nest too deep or loop")
    parts = [f"{spec.pk}:{spec.updated_at.timestamp()}"]
    code_toolsets = settings.TOOLCRIB_TOOLSETS
    named = {*(spec.toolsets or ()), *(t["toolset"] for t in spec.tools or ())}
    imported = named - set(code_toolsets)
    if imported:
        parts.append(toolset_source().versions(imported))  # refreshed: a new toolset
    parts += [fingerprint(sub, depth + 1) for sub in sub_agents(spec)]
    return "|".join(parts)


# A spec's sub-agents, as spec.sub_agents.all() reads them (by name), in a query
# compiled once a process: the fingerprint reads them every turn.
SUB_AGENTS = Prepared(
    AgentSpec.objects.filter(parents=Param("parent", AgentSpec._meta.pk))
)


def sub_agents(spec: AgentSpec) -> list[AgentSpec]:
    """The spec's sub-agent specs, in order."""
    return SUB_AGENTS.fetch(parent=spec.pk)


def build_agent(spec: AgentSpec, *, depth: int = 0, as_sub: bool = False) -> BaseNode:
    """Turn one spec (and its sub-agents) into a fresh ADK agent."""
    if depth > MAX_DEPTH:
        raise AgentBuildError(f"agent {spec.name}: sub-agents nest too deep or loop")
    if spec.source == AgentSpec.Source.CODE:
        agent = load_code_agent(spec.dotted_path)
        if not (as_sub or getattr(agent, "parent_agent", None)):
            return agent
        if is_workflow(agent):
            raise AgentBuildError(
                f"agent {spec.name}: a workflow cannot be a sub-agent; give it to "
                "an agent as a tool in the agent's code"
            )
        # An ADK agent has one parent: a code agent reused under another gets a copy,
        # whose AgentTools must run the copy's own sub-agents.
        copy = agent.clone()
        _adopt(copy, spec.dotted_path)
        return copy
    subs = [build_agent(sub, depth=depth + 1, as_sub=True) for sub in sub_agents(spec)]
    agent = _build_row_agent(spec, subs)
    check_tool_names(agent)
    return agent


def _build_row_agent(spec: AgentSpec, subs: Sequence[BaseAgent]) -> BaseAgent:
    name = spec.name.replace("-", "_")
    description = spec.description
    if spec.kind == AgentSpec.Kind.SEQUENTIAL:
        return SequentialAgent(
            name=name, description=description, sub_agents=list(subs)
        )
    if spec.kind == AgentSpec.Kind.LOOP:
        return LoopAgent(
            name=name,
            description=description,
            sub_agents=list(subs),
            max_iterations=spec.max_iterations,
        )
    tools: list[Any] = []
    for toolset in spec.toolsets:
        tools += resolve_toolset(toolset)
    for toolset, names in selections(spec.tools or ()).items():
        if toolset not in spec.toolsets:  # taken whole already
            tools += select(resolve_toolset(toolset), names)
    kwargs: dict[str, Any] = {}
    if spec.model:
        kwargs["model"] = spec.model
    return LlmAgent(
        name=name,
        description=description,
        instruction=spec.instruction,
        tools=tools,
        sub_agents=list(subs),
        **kwargs,
    )


def agent_for(spec: AgentSpec) -> BaseNode:
    """The ADK agent tree for a spec, built once per version of the spec."""
    key = fingerprint(spec)
    cached = _cache.get(spec.name)
    if cached and cached.fingerprint == key:
        return cached.root
    root = build_agent(spec)
    _cache[spec.name] = BuiltAgent(spec_name=spec.name, fingerprint=key, root=root)
    return root


def describe_agent(agent: BaseNode) -> dict[str, Any]:
    """Name, description, model, sub-agents and declared tool names of an ADK agent;
    for a workflow, its nodes as its sub-agents."""
    model = getattr(agent, "model", "")
    if not isinstance(model, str):
        model = getattr(model, "model", "")
    tools = []
    for tool in node_tools(agent):
        if isinstance(tool, BaseToolset):
            tools.append({"toolset": type(tool).__name__})
        else:
            name = getattr(tool, "name", None) or getattr(tool, "__name__", str(tool))
            tools.append({"name": name})
    return {
        "name": agent.name,
        "description": agent.description,
        "model": model or settings.TOOLCRIB_DEFAULT_MODEL,
        "tools": tools,
        "sub_agents": [describe_agent(sub) for sub in children(agent)],
    }


def sync_code_agents() -> list[AgentSpec]:
    """Create or update the AgentSpec row of every agent registered in settings.

    Returns the rows of the agents that load. One that does not is logged and kept
    as a `missing` row (created if need be), so staff see it and its error
    (code_agent_error); every other agent loads and syncs.
    """
    seen = []
    for path in settings.TOOLCRIB_AGENTS:
        name = path.rsplit(".", 1)[-1]
        try:
            agent = load_code_agent(path)
        except AgentBuildError as exc:
            logger.error("code agent failed to load path=%s error=%s", path, exc)
            _keep_broken(name, path)
            continue
        spec, _ = AgentSpec.objects.update_or_create(
            name=name,
            defaults={
                "source": AgentSpec.Source.CODE,
                "dotted_path": path,
                "description": agent.description,
                "instruction": _instruction_text(agent),
                "kind": kind_of(agent),
                "starters": code_agent_starters(path),
                "history": code_agent_history(path),
                "missing": False,
            },
        )
        seen.append(spec)
    AgentSpec.objects.filter(source=AgentSpec.Source.CODE).exclude(
        pk__in=[spec.pk for spec in seen]
    ).update(missing=True)
    return seen


def _keep_broken(name: str, path: str) -> None:
    """A missing row for a code agent that does not load; a row agent of the same
    name is left alone."""
    spec = AgentSpec.objects.filter(name=name).first()
    if spec is None:
        AgentSpec.objects.create(
            name=name, source=AgentSpec.Source.CODE, dotted_path=path, missing=True
        )
    elif spec.source == AgentSpec.Source.CODE:
        spec.dotted_path, spec.missing = path, True
        spec.save(update_fields=["dotted_path", "missing", "updated_at"])


def unloaded_code_agents() -> QuerySet[AgentSpec]:
    """The code agents of settings that the last sync kept missing: they did not
    load (sync_code_agents)."""
    return AgentSpec.objects.filter(
        source=AgentSpec.Source.CODE,
        missing=True,
        dotted_path__in=settings.TOOLCRIB_AGENTS,
    )


def code_agent_error(spec: AgentSpec) -> str | None:
    """Why a spec of unloaded_code_agents() does not load in this process; None for
    every other spec, and for one that loads now."""
    unloaded = (
        spec.source == AgentSpec.Source.CODE
        and spec.missing
        and spec.dotted_path in settings.TOOLCRIB_AGENTS
    )
    if not unloaded:
        return None
    try:
        load_code_agent(spec.dotted_path)
    except AgentBuildError as exc:
        return str(exc)
    return None


def broken_code_agents() -> dict[str, str]:
    """Name -> error of each code agent of settings that does not load."""
    errors = {spec.name: code_agent_error(spec) for spec in unloaded_code_agents()}
    return {name: error for name, error in errors.items() if error}


def code_agent_starters(dotted_path: str) -> list[str]:
    """The conversation starters a code agent's module declares for it.

    A module lists them in `STARTERS`, a dict from the name the agent is
    registered under (the last part of its dotted path) to its prompts; bad ones
    are logged and dropped, since a typo must not keep the agent from loading.
    """
    module_path, name = dotted_path.rsplit(".", 1)
    declared = getattr(import_module(module_path), "STARTERS", None) or {}
    try:
        return parse_starters(list(declared.get(name, [])))
    except (AttributeError, TypeError, ValueError):
        logger.exception("bad conversation starters path=%s", dotted_path)
        return []


def code_agent_history(dotted_path: str) -> int | None:
    """How many of a session's latest events a code agent's turn reads.

    A module sets it in `HISTORY`, a dict from the name the agent is registered
    under to a number of events, or None for every event (agents.adk.history); an
    agent it leaves out, or gives a bad value (logged), has HISTORY_DEFAULT.
    """
    module_path, name = dotted_path.rsplit(".", 1)
    declared = getattr(import_module(module_path), "HISTORY", None) or {}
    if name not in declared:
        return HISTORY_DEFAULT
    try:
        return parse_history(declared[name])
    except ValueError:
        logger.exception("bad history path=%s", dotted_path)
        return HISTORY_DEFAULT


def kind_of(agent: BaseNode) -> str:
    """The spec kind of a code agent: llm, loop, sequential or workflow."""
    if is_workflow(agent):
        return AgentSpec.Kind.WORKFLOW
    if isinstance(agent, LlmAgent):
        return AgentSpec.Kind.LLM
    if isinstance(agent, LoopAgent):
        return AgentSpec.Kind.LOOP
    return AgentSpec.Kind.SEQUENTIAL


def _instruction_text(agent: BaseNode) -> str:
    instruction = getattr(agent, "instruction", "")
    return instruction if isinstance(instruction, str) else ""
