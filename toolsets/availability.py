"""Availability within a turn, for tool authors: hidden and added tools, gates,
agent-wide middleware, the first call's tool choice.

All of it only narrows what access allows: governance (toolsets.governance) checks
access, then activation, before availability, so a tool the user may not use has
already been pruned from the request (and is refused at call time) whatever is
forced, exposed, added or gated here (docs/availability.md).

- Tool choice: how the first model call of each turn may use tools (`auto`,
  `none`, `required`, or one function to call first). The message's choice
  (Run.tool_choice) wins, then the agent's (AgentSpec.tool_choice), then
  settings.TOOLCRIB_FORCED_FIRST_TOOL, which maps an agent (its AgentSpec name)
  to a tool. A forced function is the only tool declared (LiteLlm ignores allowed
  names, ADK_NOTES.md §1.10); later calls are free. A function that is not
  offered (no grant, hidden) forces nothing.
- Progressive exposure: a tool marked with `hidden` is not offered until a tool
  (or a gate) of the same turn calls `add_tools(tool_context, [...])`;
  `remove_tools` hides tools again. `add_tools` also takes functions (or tools)
  the agent never declared, the loader pattern: they are wrapped as
  FunctionTools, catalogued under the adding tool's toolset (its default policy)
  and governed like the rest. Changes show from the next model step, are
  all-or-nothing per call, and are forgotten when the turn ends.
- Gating: `gated_by(check)` attaches a check to a tool function; `check(args,
  tool_context)` returns corrective feedback to refuse the call (the tool does
  not run, the model reads the feedback) or None to let it run.
- Agent-wide middleware: `agent_middleware` turns the seed's function middleware,
  `async def check(context, call_next)`, into an LlmAgent before_tool_callback.
  It sees every call of the agent (`context.function.name`,
  `context.arguments`); setting `context.result` without awaiting `call_next()`
  refuses the call with that feedback. Governance runs it as a gate.

- Policies (rate limit, result cache, validation, timeout, retries,
  concurrency) live in toolsets.policies; `rate_limited` and `cached_for` are
  importable from here too.

A call to a tool the model was not offered on that step is refused as well
(audited `not_offered`; a gate's or a middleware's refusal is audited `gated`).
The checks themselves are toolsets.governance.checks; the turn they act on lives
on the turn's GovernancePlugin (toolsets.turn).
"""

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from google.adk.agents import BaseAgent
from google.adk.tools import BaseTool, FunctionTool

from agents.models import AgentSpec, Run, Session
from toolsets.bindings import Binding, is_internal
from toolsets.policies import (  # noqa: F401 (their home before policies.py)
    cache_ttl_of,
    cached_for,
    rate_limit_of,
    rate_limited,
)
from toolsets.turn import (
    Offer,
    ToolChoice,
    Turn,
    call_key,
    turn_of,
)

HIDDEN_ATTR = "toolcrib_hidden"
GATES_ATTR = "toolcrib_gates"

Gate = Callable[[dict[str, Any], Any], Any]  # -> feedback | None, or awaitable
ToolRef = str | BaseTool | Callable[..., Any]


class ExposureError(RuntimeError):
    """add_tools / remove_tools called outside a turn."""


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


def is_hidden(tool: BaseTool) -> bool:
    """True for a tool marked `hidden`."""
    return bool(getattr(_target(tool), HIDDEN_ATTR, False))


def gates_of(tool: BaseTool) -> tuple[Gate, ...]:
    """The gates attached to a tool with `gated_by`, in order."""
    return tuple(getattr(_target(tool), GATES_ATTR, ()))


def forced_first_tool(agent: str) -> str | None:
    """The tool the first model call of a turn of this agent must call, by settings."""
    return settings.TOOLCRIB_FORCED_FIRST_TOOL.get(agent)


# The first call's tool choice.


def tool_choice_of(stored: Any) -> ToolChoice | None:
    """A tool choice as Run and AgentSpec store it (agents.inputs.parse_tool_choice)."""
    if stored is None:
        return None
    if isinstance(stored, str):
        return ToolChoice(stored)
    return ToolChoice(stored["mode"], stored.get("required_function_name"))


async def afirst_call_choice(*, run: Run | None, app_name: str) -> ToolChoice | None:
    """How the first model call of a turn may use tools: the message's choice, else
    the agent's, else TOOLCRIB_FORCED_FIRST_TOOL's; none for a turn that resumes one
    (its first call is not the turn's first)."""
    if run is not None:
        if run.message is not None:  # function responses: a resumed invocation
            return None
        if run.tool_choice is not None:
            return tool_choice_of(run.tool_choice)
        agent_choice = tool_choice_of(await _agent_tool_choice(run))
        if agent_choice is not None:
            return agent_choice
    forced = forced_first_tool(app_name)
    return ToolChoice("required", forced) if forced else None


async def _agent_tool_choice(run: Run) -> Any:
    """The tool choice of the run's agent row; no query when the turn loaded it."""
    if Run.session.is_cached(run) and Session.agent.is_cached(run.session):
        agent = run.session.agent
        return agent.tool_choice if agent is not None else None
    agents = AgentSpec.objects.filter(sessions__runs=run.pk)
    return await agents.values_list("tool_choice", flat=True).afirst()


# Agent-wide middleware.


@dataclass
class FunctionInvocation:
    """A pending call, as an agent's middleware sees it (the seed's
    FunctionInvocationContext): set `result` and return without awaiting
    `call_next()` to refuse it with that feedback."""

    function: BaseTool
    arguments: dict[str, Any]
    tool_context: Any
    result: Any = None


Middleware = Callable[
    [FunctionInvocation, Callable[[], Awaitable[None]]], Awaitable[None]
]


class AgentMiddleware:
    """An agent-wide check on every call of an LlmAgent, given to the agent as one of
    its before_tool_callbacks (`before_tool_callback=[check]`).

    Under governance it runs as a gate, after the tool's own gates: a refusal is
    audited `gated` and its feedback is what the model reads; then, when ADK calls
    it as a callback, it lets the call go. Without governance it answers the call
    itself, as a before_tool_callback does.
    """

    def __init__(self, func: Middleware) -> None:
        if not inspect.iscoroutinefunction(func):
            raise TypeError(f"{func!r}: a middleware is an async function")
        self.func = func
        functools.update_wrapper(self, func)

    async def __call__(
        self, *, tool: BaseTool, args: dict[str, Any], tool_context: Any
    ) -> dict[str, Any] | None:
        turn = turn_of(tool_context)
        call = turn.calls.get(call_key(tool_context, tool)) if turn else None
        if call is not None and call.middleware_ran:  # governance ran it already
            return None
        feedback = await arun_middleware([self], tool, args, tool_context)
        if feedback is None:
            return None
        return {"status": "error", "error_message": feedback}


def agent_middleware(func: Middleware) -> AgentMiddleware:
    """Make an async `(context, call_next)` function an agent's middleware."""
    return AgentMiddleware(func)


def middleware_of(agent: BaseAgent) -> list[AgentMiddleware]:
    """The middleware among an agent's before_tool_callbacks, in order."""
    callbacks = getattr(agent, "before_tool_callback", None) or []
    if not isinstance(callbacks, list):
        callbacks = [callbacks]
    return [cb for cb in callbacks if isinstance(cb, AgentMiddleware)]


async def arun_middleware(
    middleware: Sequence[AgentMiddleware],
    tool: BaseTool,
    args: dict[str, Any],
    tool_context: Any,
) -> str | None:
    """Run a chain of middleware on a call: the feedback of the one that stopped it,
    or None when every one called the next."""
    invocation = FunctionInvocation(tool, dict(args), tool_context)
    reached = False

    async def run(index: int) -> None:
        nonlocal reached
        if index == len(middleware):
            reached = True
            return
        await middleware[index].func(invocation, lambda: run(index + 1))

    await run(0)
    if reached:
        return None
    if invocation.result is None:
        return f"{tool.name} was refused by the agent's {middleware[0].__name__}."
    return str(invocation.result)


# The turn, from inside a tool.


def _turn(context: Any) -> Turn:
    turn = turn_of(context)
    if turn is None or not turn.offers:
        raise ExposureError("tools can only be added or removed during a turn")
    return turn


def _offer_of(context: Any) -> Offer:
    offer = _turn(context).offers.get(getattr(context, "agent_name", ""))
    if offer is None:
        raise ExposureError("tools can only be added or removed during a turn")
    return offer


def current_tools(context: Any) -> list[str]:
    """The names of the tools the agent offers now (before access is applied)."""
    offer = _offer_of(context)
    return [name for name in offer.tools if name not in offer.hidden]


def turn_data(context: Any) -> dict[str, Any]:
    """A dict that lives as long as the turn, for tools and gates to share."""
    return _turn(context).data


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


def _refs(refs: ToolRef | Iterable[ToolRef]) -> list[ToolRef]:
    """One tool or several, as the seed's add_tools takes them."""
    if isinstance(refs, str | BaseTool) or callable(refs):
        return [refs]
    return list(refs)


def _as_tool(ref: ToolRef) -> BaseTool:
    if isinstance(ref, BaseTool):
        return ref
    if not callable(ref):
        raise ValueError(f"{ref!r} is not a tool")
    return FunctionTool(ref)


def add_tools(context: Any, refs: ToolRef | Iterable[ToolRef]) -> list[str]:
    """Offer these tools from the next model step of this turn; all or nothing.

    A tool the agent has (hidden or not) is offered again; a function or tool it
    does not have is added, bound to the adding tool's toolset. Adding the same
    object again is a no-op; a different object under a name the agent already has
    (or twice in one batch) is a ValueError, and nothing changes. Returns the names
    offered now.
    """
    offer = _offer_of(context)
    batch: dict[str, BaseTool | None] = {}  # name -> a new tool, or None: the agent's
    for ref in _refs(refs):
        name = _name_of(ref)
        known = offer.tools.get(name) or batch.get(name)
        if known is not None:
            if not _same(ref, known):
                raise ValueError(f"a different tool is already named {name}")
            batch.setdefault(name, None)
            continue
        if isinstance(ref, str):
            raise ValueError(f"{name} is not a tool of this agent")
        if is_internal(name):
            raise ValueError(f"{name} is a name ADK keeps for itself")
        batch[name] = _as_tool(ref)
    new = {name: tool for name, tool in batch.items() if tool is not None}
    if new:
        adder = _adder(context)
        for name, tool in new.items():
            offer.tools[name] = tool
            offer.added[name] = Binding(adder.toolset, name, tool, name, adder.agent)
        offer.fresh.update(new)
    offer.hidden.difference_update(batch)
    return current_tools(context)


def _adder(context: Any) -> Binding:
    """The catalog binding of the tool that is adding tools: theirs is its toolset."""
    call = _turn(context).calls.get(getattr(context, "function_call_id", None) or "")
    if call is None or call.binding is None:
        raise ValueError("only a tool of the catalog, in its call, can add new tools")
    return call.binding


def remove_tools(context: Any, refs: ToolRef | Iterable[ToolRef]) -> list[str]:
    """Stop offering these tools from the next model step; unknown names are ignored.

    A tool added in this turn is forgotten (another may then take its name); one
    the agent declares is hidden until added again.
    """
    offer = _offer_of(context)
    names = {_name_of(ref) for ref in _refs(refs)} & set(offer.tools)
    for name in names & set(offer.added):
        del offer.tools[name], offer.added[name]
        offer.fresh.discard(name)
    offer.hidden.update(names & set(offer.tools))
    return current_tools(context)
