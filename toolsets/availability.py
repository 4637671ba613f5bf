"""Availability within a turn, for tool authors: hidden tools, gates, exposure.

All of it only narrows what access allows: governance (toolsets.governance) checks
access, then activation, before availability, so a tool the user may not use has
already been pruned from the request (and is refused at call time) whatever is
forced, exposed or gated here (docs/availability.md).

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

A call to a tool the model was not offered on that step is refused as well
(audited `not_offered`; a gate's refusal is audited `gated`). The checks
themselves are toolsets.governance.checks; the turn they act on lives on the
turn's GovernancePlugin (toolsets.governance.turn).
"""

from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from google.adk.tools import BaseTool

from toolsets.governance.turn import Offer, Turn, turn_of
from toolsets.policies import (  # noqa: F401 (their home before policies.py)
    cache_ttl_of,
    cached_for,
    rate_limit_of,
    rate_limited,
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
    """The tool the first model call of a turn of this agent must call, if any."""
    return getattr(settings, "TOOLCRIB_FORCED_FIRST_TOOL", {}).get(agent)


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
