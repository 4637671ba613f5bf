"""Conditional toolsets: a toolset an agent has only while its session's state or its
user's group says so (the ToolSet seed's "return AdminTools only in adminMode").

settings.TOOLCRIB_CONDITIONAL_TOOLSETS maps an agent (its AgentSpec name) to the
toolsets it has on a condition, each `{"state": key}`, `{"group": name}` or both:

    TOOLCRIB_CONDITIONAL_TOOLSETS = {
        "inventory": {"inventory_admin": {"state": "user:is_admin"}},
        "support": {"billing_tools": {"group": "billing"}},
    }

- `state`: the value under that key is truthy, in the session's state as the agent
  sees it (a plain key, or `user:` / `app:` / `temp:` prefixed; `temp:` only holds
  within a turn);
- `group`: the session's user is a member of that Django group;
- both: both hold.

Governance asks on every model step (the activation check, toolsets.governance.checks),
so a tool that sets the state key changes what the model is offered from its next
step. A toolset whose condition does not hold is not the agent's at that step: its
tools are not offered, a call to one is refused (audited `inactive`), and the model's
list_toolsets and the session's toolsets API neither list it nor switch it. It only
ever narrows: a toolset the condition allows is still under access and activation.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ImproperlyConfigured

from agents.adk.session_state import session_state
from agents.models import Session


@dataclass(frozen=True)
class Condition:
    """When an agent has a conditional toolset: a state key is truthy, the user is in
    a group, or both."""

    state: str | None = None
    group: str | None = None

    def describe(self) -> str:
        parts = []
        if self.state:
            parts.append(f"while {self.state} is set")
        if self.group:
            parts.append(f"for members of {self.group}")
        return " and ".join(parts)


def conditions_for(agent: str) -> dict[str, Condition]:
    """The conditional toolsets of an agent (its AgentSpec name), by toolset name.

    Raises:
        ImproperlyConfigured: A condition is not `{"state"?: str, "group"?: str}`.
    """
    declared = settings.TOOLCRIB_CONDITIONAL_TOOLSETS.get(agent) or {}
    conditions = {}
    for toolset, condition in declared.items():
        try:
            conditions[toolset] = Condition(**condition)
        except TypeError as exc:
            raise ImproperlyConfigured(
                f"TOOLCRIB_CONDITIONAL_TOOLSETS[{agent!r}][{toolset!r}]: {exc}"
            ) from None
        if not (conditions[toolset].state or conditions[toolset].group):
            raise ImproperlyConfigured(
                f"TOOLCRIB_CONDITIONAL_TOOLSETS[{agent!r}][{toolset!r}] says neither "
                "a state key nor a group"
            )
    return conditions


async def aabsent_toolsets(
    *,
    agent: str,
    user_id: int | None,
    state: Mapping[str, Any],
    names: Collection[str],
) -> dict[str, Condition]:
    """Which of these toolsets the agent does not have now, with the condition that
    failed: at most one query (the user's groups), none for an agent without
    conditional toolsets."""
    conditions = {name: c for name, c in conditions_for(agent).items() if name in names}
    if not conditions:
        return {}
    groups = {c.group for c in conditions.values() if c.group}
    member_of = await _agroups_of(user_id, groups)
    return {
        name: condition
        for name, condition in conditions.items()
        if not _holds(condition, state, member_of)
    }


def absent_toolsets(
    *, session: Session, names: Collection[str]
) -> dict[str, Condition]:
    """See aabsent_toolsets(); for a stored session, by its stored state."""
    conditions = {
        name: c for name, c in conditions_for(session.app_name).items() if name in names
    }
    if not conditions:
        return {}
    groups = {c.group for c in conditions.values() if c.group}
    user_id = int(session.user_id) if session.user_id.isdigit() else None
    member_of = _groups_of(user_id, groups)
    state = _flat(session_state(session=session))
    return {
        name: condition
        for name, condition in conditions.items()
        if not _holds(condition, state, member_of)
    }


def _holds(condition: Condition, state: Mapping[str, Any], groups: set[str]) -> bool:
    if condition.state and not state.get(condition.state):
        return False
    return not condition.group or condition.group in groups


def _flat(scoped: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Stored state by scope, keyed as the agent sees it (user:, app: prefixes)."""
    return {
        **scoped["session"],
        **{f"user:{key}": value for key, value in scoped["user"].items()},
        **{f"app:{key}": value for key, value in scoped["app"].items()},
    }


def _groups_of(user_id: int | None, groups: set[str]) -> set[str]:
    if user_id is None or not groups:
        return set()
    found = Group.objects.filter(user__id=user_id, name__in=groups)
    return set(found.values_list("name", flat=True))


async def _agroups_of(user_id: int | None, groups: set[str]) -> set[str]:
    if user_id is None or not groups:
        return set()
    found = Group.objects.filter(user__id=user_id, name__in=groups)
    return {name async for name in found.values_list("name", flat=True)}
