"""Availability within a turn: forced first call, progressive exposure, gating.

All of it only narrows what GovernancePlugin already allows: AvailabilityPlugin
runs after it, so a tool the user may not use has already been pruned from the
request (and is refused at call time) whatever is forced, exposed or gated here
(docs/availability.md).

- Forced first call: settings.TOOLCRIB_FORCED_FIRST_TOOL maps an agent (its
  AgentSpec name) to a tool. The first model call of each turn gets
  tool_config ANY with only that tool allowed, and only that tool declared
  (LiteLlm ignores allowed names, ADK_NOTES.md §1.10). Later calls are free. If
  the tool is not offered (no grant, hidden), nothing is forced.
- Progressive exposure: a tool marked with `hidden` is not offered until a tool
  (or a gate) of the same turn calls `add_tools(tool_context, [...])`;
  `remove_tools` hides tools again. Changes show from the next model step and are
  forgotten when the turn ends. Only the agent's own tools can be exposed: a tool
  outside the catalog could not be governed.
- Gating: `gated_by(check)` attaches a check to a tool function; `check(args,
  tool_context)` returns corrective feedback to refuse the call (the tool does
  not run, the model reads the feedback) or None to let it run.

- Policies (rate limit, result cache, validation, timeout, retries,
  concurrency) live in toolsets.policies; `rate_limited` and `cached_for` are
  importable from here too.

A call to a tool the model was not offered on that step is refused as well.
"""

import inspect
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from google.adk.agents.context import Context
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.tools import BaseTool
from google.genai import types

from toolsets import execution
from toolsets.bindings import abindings_for_invocation, is_internal
from toolsets.models import ToolCall
from toolsets.plugin import prune_request
from toolsets.policies import (  # noqa: F401 (their home before policies.py)
    CACHED_FLAG,
    cache_ttl_of,
    cached_for,
    rate_limit_of,
    rate_limited,
)

logger = logging.getLogger(__name__)

PLUGIN_NAME = "toolcrib_availability"
HIDDEN_ATTR = "toolcrib_hidden"
GATES_ATTR = "toolcrib_gates"
MAX_TURNS = 10_000

Gate = Callable[[dict[str, Any], Any], Any]  # -> feedback | None, or awaitable
ToolRef = str | BaseTool | Callable[..., Any]


class ExposureError(RuntimeError):
    """add_tools / remove_tools called outside a turn."""


@dataclass
class Offer:
    """One agent's tools in one turn, as tools change them."""

    tools: dict[str, BaseTool] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)
    offered: set[str] | None = None
    full_names: dict[str, str] = field(default_factory=dict)


@dataclass
class Turn:
    """One invocation (turn): each agent's offer, and data its tools share."""

    agents: dict[str, Offer] = field(default_factory=dict)
    model_calls: int = 0
    data: dict[str, Any] = field(default_factory=dict)


_turns: "OrderedDict[str, Turn]" = OrderedDict()


# Marking tools.


def hidden(func: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a tool function as not offered until a tool of the turn exposes it."""
    setattr(func, HIDDEN_ATTR, True)
    return func


def gated_by(*gates: Gate) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Attach gates to a tool function: each may refuse a call with feedback."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, GATES_ATTR, (*getattr(func, GATES_ATTR, ()), *gates))
        return func

    return mark


def _target(tool: BaseTool) -> Any:
    return getattr(tool, "func", tool)


def _is_hidden(tool: BaseTool) -> bool:
    return bool(getattr(_target(tool), HIDDEN_ATTR, False))


def _gates(tool: BaseTool) -> tuple[Gate, ...]:
    return tuple(getattr(_target(tool), GATES_ATTR, ()))


def forced_first_tool(agent: str) -> str | None:
    """The tool the first model call of a turn of this agent must call, if any."""
    return getattr(settings, "TOOLCRIB_FORCED_FIRST_TOOL", {}).get(agent)


# The turn, from inside a tool.


def _turn_of(context: Any) -> Turn:
    invocation_id = getattr(context, "invocation_id", None) if context else None
    turn = _turns.get(invocation_id) if invocation_id else None
    if turn is None or not turn.agents:
        raise ExposureError("tools can only be added or removed during a turn")
    return turn


def _offer_of(context: Any) -> Offer:
    offer = _turn_of(context).agents.get(getattr(context, "agent_name", ""))
    if offer is None:
        raise ExposureError("tools can only be added or removed during a turn")
    return offer


def current_tools(context: Any) -> list[str]:
    """The names of the tools the agent offers now (before access is applied)."""
    offer = _offer_of(context)
    return [name for name in offer.tools if name not in offer.hidden]


def turn_data(context: Any) -> dict[str, Any]:
    """A dict that lives as long as the turn, for tools and gates to share."""
    return _turn_of(context).data


def _name_of(ref: ToolRef) -> str:
    if isinstance(ref, str):
        return ref
    if isinstance(ref, BaseTool):
        return ref.name
    name = getattr(ref, "__name__", None)
    if not name:
        raise ValueError(f"{ref!r} is not a tool")
    return name


def _same(ref: ToolRef, tool: BaseTool) -> bool:
    if isinstance(ref, str):
        return True
    return ref is tool or ref is _target(tool)


def add_tools(context: Any, refs: Iterable[ToolRef]) -> list[str]:
    """Offer these tools from the next model step of this turn; all or nothing.

    A tool already offered is a no-op; a different tool under a name the agent
    already has, or a tool the agent does not have, is a ValueError and nothing
    changes. Returns the names offered now.
    """
    offer = _offer_of(context)
    names = []
    for ref in refs:
        name = _name_of(ref)
        tool = offer.tools.get(name)
        if tool is None:
            raise ValueError(f"{name} is not a tool of this agent")
        if not _same(ref, tool):
            raise ValueError(f"a different tool is already named {name}")
        names.append(name)
    offer.hidden.difference_update(names)
    return current_tools(context)


def remove_tools(context: Any, refs: Iterable[ToolRef]) -> list[str]:
    """Stop offering these tools from the next model step; unknown names are ignored."""
    offer = _offer_of(context)
    names = {_name_of(ref) for ref in refs}
    offer.hidden.update(names & set(offer.tools))
    return current_tools(context)


# The plugin.


def _start(invocation_id: str) -> Turn:
    turn = _turns.get(invocation_id)
    if turn is None:
        turn = _turns[invocation_id] = Turn()
        while len(_turns) > MAX_TURNS:
            _turns.popitem(last=False)
    return turn


class AvailabilityPlugin(BasePlugin):
    """Forced first call, progressive exposure and gates, inside what access allows."""

    def __init__(self, name: str = PLUGIN_NAME) -> None:
        super().__init__(name)

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        _start(invocation_context.invocation_id)
        return None

    async def after_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> None:
        _turns.pop(invocation_context.invocation_id, None)

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        turn = _start(callback_context.invocation_id)
        offer = turn.agents.get(callback_context.agent_name)
        if offer is None:  # this agent's first step in the turn
            found = await abindings_for_invocation(callback_context)
            tools = {name: binding.tool for name, binding in found.items()}
            hidden_names = {name for name, tool in tools.items() if _is_hidden(tool)}
            offer = turn.agents[callback_context.agent_name] = Offer(
                tools, hidden_names
            )
            offer.full_names = {n: b.full_name for n, b in found.items()}
        turn.model_calls += 1
        hidden_now = offer.hidden & set(llm_request.tools_dict)
        if hidden_now:
            prune_request(llm_request, hidden_now)
        forced = forced_first_tool(callback_context.session.app_name)
        if turn.model_calls == 1 and forced and forced in llm_request.tools_dict:
            force(llm_request, forced)
        offer.offered = set(llm_request.tools_dict)
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict | None:
        if is_internal(tool.name, tool):
            return None
        turn = _turns.get(tool_context.invocation_id)
        offer = turn.agents.get(tool_context.agent_name) if turn else None
        if offer is None or offer.offered is None:
            return None
        if tool.name not in offer.offered:
            execution.note_outcome(tool_context, tool, ToolCall.Status.ERROR, 0)
            return _refusal(f"Tool {tool.name} is not available at this step.")
        for gate in _gates(offer.tools.get(tool.name, tool)):
            feedback = gate(dict(tool_args), tool_context)
            if inspect.isawaitable(feedback):
                feedback = await feedback
            if feedback:
                execution.note_outcome(tool_context, tool, ToolCall.Status.GATED, 0)
                return execution.refusal(feedback, ToolCall.Status.GATED)
        return None


def force(llm_request: LlmRequest, name: str) -> None:
    """Make this call call `name`: only it declared, tool_config ANY on it."""
    others = {n for n in llm_request.tools_dict if n != name}
    prune_request(llm_request, others)
    llm_request.config.tool_config = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=[name]
        )
    )


def _refusal(message: str) -> dict:
    return {"status": "error", "error_message": message}
