"""Every tool of a session's agent, and for each one its user cannot use now, why,
in plain words: what the session page shows instead of letting a tool vanish.

Computed on every read from the same decisions governance makes (toolsets.access,
toolsets.conditions, toolsets.activation's choices), so it is current after a
grant, a kill switch or a toolset switched in the session. The checks, in
governance's order: access, then the agent's conditional toolsets, then the
session's active toolsets.
"""

from dataclasses import dataclass

from agents.models import Session
from agents.runtime import agent_for
from toolsets import access, reviews
from toolsets.access import Decision, Reason
from toolsets.bindings import Binding, bindings_of_tree
from toolsets.catalog import register
from toolsets.conditions import absent_toolsets
from toolsets.models import SessionToolset, Tool, Toolset


class Unavailable:
    """Why a tool is unavailable: access's reasons, and two of the session's."""

    INACTIVE = "inactive"  # its toolset is switched off in this session
    ABSENT = "absent"  # a conditional toolset whose condition does not hold
    UNREVIEWED = "unreviewed"  # an imported tool staff have not approved as it reads


@dataclass(frozen=True)
class SessionTool:
    """One tool of a session's agent: available to its user now, or why not."""

    full_name: str
    name: str
    toolset: str
    available: bool
    reason: str | None = None
    why: str | None = None
    condition_text: str = ""
    description: str = ""


def session_tools(*, session: Session) -> list[SessionTool]:
    """Every tool of the session's agent tree, once each, in tree order, for the
    session's user (the owner's, also when staff read it)."""
    if not session.user_id.isdigit() or session.agent is None:
        return []
    found = _bindings(session)
    decisions = access.explain_many(
        user_id=int(session.user_id), tools=[b.full_name for b in found]
    )
    names = {b.toolset.name for b in found}
    absent = absent_toolsets(session=session, names=names)
    inactive = _inactive(session, names)
    held = _held([b.full_name for b in found])
    return [
        _held_tool(binding)
        if binding.full_name in held
        else _tool(binding, decisions[binding.full_name], absent, inactive)
        for binding in found
    ]


def _held(names: list[str]) -> set[str]:
    rows = Tool.objects.select_related("toolset__stored_import").filter(
        full_name__in=names, toolset__stored_import__isnull=False
    )
    return {row.full_name for row in rows if reviews.is_held(row)}


def _held_tool(binding: Binding) -> SessionTool:
    return SessionTool(
        full_name=binding.full_name,
        name=binding.name,
        toolset=binding.toolset.name,
        description="",  # its text is what waits for review: not shown
        available=False,
        reason=Unavailable.UNREVIEWED,
        why="new or changed, it waits for an administrator's review",
    )


def _bindings(session: Session) -> list[Binding]:
    found = bindings_of_tree(agent_for(session.agent), app_name=session.app_name)
    unknown = set(access.uncatalogued(tools=[b.full_name for b in found]))
    if unknown:
        register(b for b in found if b.full_name in unknown)
    once: dict[str, Binding] = {}
    for binding in found:
        once.setdefault(binding.full_name, binding)
    return list(once.values())


def _inactive(session: Session, names: set[str]) -> set[str]:
    chosen = dict(
        SessionToolset.objects.filter(
            session=session, toolset__name__in=names
        ).values_list("toolset__name", "active")
    )
    defaults = Toolset.objects.filter(name__in=names).values_list(
        "name", "active_by_default"
    )
    return {name for name, default in defaults if not chosen.get(name, default)}


def _tool(
    binding: Binding,
    decision: Decision,
    absent: dict,
    inactive: set[str],
) -> SessionTool:
    toolset = binding.toolset.name
    shown = {
        "full_name": binding.full_name,
        "name": binding.name,
        "toolset": toolset,
        "description": _first_line(binding.tool.description or ""),
    }
    if not decision.allowed:
        return SessionTool(
            **shown, available=False, reason=decision.reason, why=_why(decision)
        )
    if toolset in absent:
        why = f"toolset {toolset} is only available {absent[toolset].describe()}"
        return SessionTool(**shown, available=False, reason=Unavailable.ABSENT, why=why)
    if toolset in inactive:
        why = f"toolset {toolset} switched off in this session"
        return SessionTool(
            **shown, available=False, reason=Unavailable.INACTIVE, why=why
        )
    condition = decision.condition.describe() if decision.condition else ""
    return SessionTool(**shown, available=True, condition_text=condition)


def _first_line(text: str) -> str:
    """A description's summary line, as a docstring's first line is."""
    return text.strip().split("\n", 1)[0].strip()


def _why(decision: Decision) -> str:
    """Access's refusal in a user's words."""
    if decision.reason == Reason.DENY:
        subject = decision.subject or ""
        if subject.startswith("group "):
            return f"denied for your group {subject.removeprefix('group ')} by an admin"
        return "denied to you by an admin"
    if decision.reason == Reason.DISABLED:
        if decision.rule.startswith("toolset "):
            return decision.rule.replace(" is disabled", " disabled by an admin")
        return "disabled by an admin"
    if decision.reason == Reason.POLICY:
        return "not granted to you"
    if decision.reason == Reason.MISSING:
        return "no longer in the code"
    return "not in the catalog"
