"""Toolset activation: which of an agent's toolsets are active in a session.

Every toolset of an agent is active or inactive per session: a session's own choice
(a SessionToolset row) or else the toolset's `active_by_default`. Only an active
toolset's tools are offered to the model, from the next model step after a change;
a call to an inactive toolset's tool is refused without running, audited
`inactive` (governance's activation check, toolsets.governance.checks, right
after access). docs/availability.md#toolset-activation.

Who may switch: the model, through `list_toolsets` / `activate_toolset` /
`deactivate_toolset` (offered to an agent that puts `activation_tools()` in its
tools; `names` switches several at once, all or none, as the seed's
activateToolSets(names[])), and the user, over the API. Both see only the toolsets of the session's
agent that the session's user may use now: a toolset with no tool access allows is
neither listed nor activatable, the same as an unknown one. Activation only ever
narrows access, never widens it: governance still refuses what access refuses.

Each change is stored with who made it, then recorded and published as a
`tools_changed` event in the session's stream, and gives the session a new token
in Django's cache (`version_key`): a governed model step reads that token with
access's counters, in one round trip, and reads the session's choices again only
when it changed (held per process: `_choices`).
"""

import logging
import uuid
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.core.cache import cache
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from google.adk.agents import BaseAgent
from google.adk.agents.context import Context
from google.adk.sessions import Session as AdkSession
from google.adk.tools import BaseTool, FunctionTool

from agents.adk.builder import agent_for
from agents.adk.session_rows import session_rows
from agents.events.log import arecord_and_publish
from agents.models import Session
from toolsets.access import Snapshot
from toolsets.catalog import usable_tools
from toolsets.conditions import absent_toolsets
from toolsets.models import SessionToolset, Toolset

logger = logging.getLogger(__name__)

EVENT_KIND = "tools_changed"
VERSION_KEY = "toolsets:activation"
MAX_CACHED_SESSIONS = 10_000

# Session version key -> (its token when read, toolset name -> the session's choice).
_choices: dict[str, tuple[str, dict[str, bool]]] = {}


class UnknownToolset(Exception):
    """Not a toolset of this session's agent that its user may use (or no toolset)."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        listed = ", ".join(known) or "none"
        noun = "toolsets" if ", " in name else "toolset"
        super().__init__(f"Unknown {noun} {name}. Toolsets of this agent: {listed}.")
        self.name = name
        self.known = list(known)


@dataclass(frozen=True)
class SessionToolsetView:
    """One toolset of a session's agent, as the model and the API list it."""

    name: str
    description: str
    source: str
    active: bool
    active_by_default: bool
    tools: tuple[str, ...]
    changed_by: str | None = None
    changed_at: datetime | None = None

    def for_model(self) -> dict[str, Any]:
        """The seed's ToolSet shape: name, description, source, active, tools."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "active": self.active,
            "tools": list(self.tools),
        }


@dataclass(frozen=True)
class Switch:
    """The outcome of activating or deactivating: the toolset now, and whether it
    changed (switching to the state it already had changes nothing)."""

    toolset: SessionToolsetView
    changed: bool


# Reading.


def session_toolsets(
    *, session: Session, root: BaseAgent | None = None
) -> list[SessionToolsetView]:
    """The toolsets of a session's agent that its user may use now, in agent order.

    A toolset is listed when access allows at least one of its tools to the session's
    user (the ADK user id, the owner's: also when staff look at someone's session),
    and, for a conditional one, its condition holds (toolsets.conditions).
    """
    user_id = _user_id(session)
    if user_id is None or (root is None and session.agent is None):
        return []
    root = root if root is not None else agent_for(session.agent)
    tools: dict[str, list[str]] = {}
    for item in usable_tools(user_id=user_id, root=root, app_name=session.app_name):
        tools.setdefault(item.binding.toolset.name, []).append(item.tool.name)
    for name in absent_toolsets(session=session, names=set(tools)):
        del tools[name]
    rows = {row.name: row for row in Toolset.objects.filter(name__in=list(tools))}
    choices = {
        choice.toolset.name: choice
        for choice in SessionToolset.objects.filter(
            session=session, toolset__name__in=list(tools)
        ).select_related("toolset", "changed_by")
    }
    return [
        _view(rows[name], names, choices.get(name))
        for name, names in tools.items()
        if name in rows
    ]


async def asession_toolsets(
    *, session: Session, root: BaseAgent | None = None
) -> list[SessionToolsetView]:
    """See session_toolsets()."""
    return await sync_to_async(session_toolsets)(session=session, root=root)


def _view(
    row: Toolset, tools: Sequence[str], choice: SessionToolset | None
) -> SessionToolsetView:
    return SessionToolsetView(
        name=row.name,
        description=row.description,
        source=row.source,
        active=choice.active if choice else row.active_by_default,
        active_by_default=row.active_by_default,
        tools=tuple(dict.fromkeys(tools)),
        changed_by=_username(choice.changed_by) if choice else None,
        changed_at=choice.changed_at if choice else None,
    )


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


def _user_id(session: Session) -> int | None:
    return int(session.user_id) if session.user_id.isdigit() else None


def version_key(session: AdkSession | Session) -> str:
    """The cache key of a session's activation token (ADK's scoping: app, user, id)."""
    adk_id = session.adk_id if isinstance(session, Session) else session.id
    return f"{VERSION_KEY}:{session.app_name}:{session.user_id}:{adk_id}"


async def ainactive_toolsets(
    *, session: AdkSession, names: Collection[str], snapshot: Snapshot | None = None
) -> set[str]:
    """Which of these toolsets are inactive in this ADK session now: one query; or,
    as of a snapshot that read version_key(session), none while the session's
    token is the one its choices were read under."""
    if not names:
        return set()
    if snapshot is not None:
        choices = await _session_choices(session, snapshot)
        defaults = {
            row.toolset: row.toolset_active_by_default
            for row in snapshot.tools.values()
            if row.toolset in names
        }
        return {
            name for name, default in defaults.items() if not choices.get(name, default)
        }
    chosen = SessionToolset.objects.filter(
        session__in=session_rows(session), toolset=OuterRef("pk")
    )
    rows = (
        Toolset.objects.filter(name__in=list(names))
        .annotate(chosen=Subquery(chosen.values("active")[:1]))
        .values_list("name", "active_by_default", "chosen")
    )
    return {
        name
        async for name, default, choice in rows
        if not (default if choice is None else choice)
    }


async def _session_choices(session: AdkSession, snapshot: Snapshot) -> dict[str, bool]:
    key = version_key(session)
    token = snapshot.keys.get(key)
    cached = _choices.get(key)
    if token is not None and cached is not None and cached[0] == token:
        return cached[1]
    return await sync_to_async(_read_choices)(session, key, token)


def _read_choices(session: AdkSession, key: str, token: str | None) -> dict[str, bool]:
    """The session's choices, kept under its token (read before the rows, so a
    change committed meanwhile gives a new token and a read again)."""
    if token is None:
        token = uuid.uuid4().hex
        if not cache.add(key, token, timeout=None):
            token = cache.get(key)
    rows = SessionToolset.objects.filter(session__in=session_rows(session))
    choices = dict(rows.values_list("toolset__name", "active"))
    if token is not None:
        if len(_choices) >= MAX_CACHED_SESSIONS:
            _choices.clear()
        _choices[key] = (token, choices)
    return choices


def _renew(session: Session) -> None:
    """A new activation token for the session: now, and again once committed (as
    access.invalidate, for a read between the two)."""
    key = version_key(session)
    cache.set(key, uuid.uuid4().hex, timeout=None)
    transaction.on_commit(lambda: cache.set(key, uuid.uuid4().hex, timeout=None))


# Switching.


async def aset_toolsets_active(
    *,
    session: Session,
    names: Sequence[str],
    active: bool,
    changed_by=None,
    author: str = "system",
    invocation_id: str = "",
    root: BaseAgent | None = None,
) -> list[Switch]:
    """Activate or deactivate toolsets of the session's agent in this session, all
    or none, as the seed's activateToolSets(names[]).

    Raises UnknownToolset, and changes nothing, when a name is not one of the
    toolsets listed by session_toolsets() (unknown, or none of its tools allowed to
    the user). What changes is stored, then told to the session's stream as one
    `tools_changed` event; the model sees it from its next step. Returns each
    toolset, in the order named (a name given twice counts once).
    """
    views = {
        view.name: view for view in await asession_toolsets(session=session, root=root)
    }
    wanted = list(dict.fromkeys(names))
    unknown = [name for name in wanted if name not in views]
    if unknown or not wanted:
        raise UnknownToolset(", ".join(unknown) or "(none named)", list(views))
    now = timezone.now()
    switches = [_switch_view(views[name], active, changed_by, now) for name in wanted]
    changed = [switch.toolset for switch in switches if switch.changed]
    if changed:
        await sync_to_async(_store)(session, changed, changed_by, now)
        await _tell(session, changed, author=author, invocation_id=invocation_id)
    return switches


async def aset_toolset_active(
    *,
    session: Session,
    name: str,
    active: bool,
    changed_by=None,
    author: str = "system",
    invocation_id: str = "",
    root: BaseAgent | None = None,
) -> Switch:
    """One toolset: see aset_toolsets_active()."""
    [switch] = await aset_toolsets_active(
        session=session,
        names=[name],
        active=active,
        changed_by=changed_by,
        author=author,
        invocation_id=invocation_id,
        root=root,
    )
    return switch


def set_toolsets_active(
    *, session: Session, names: Sequence[str], active: bool, changed_by=None
) -> list[Switch]:
    """See aset_toolsets_active(); for the API, where the user switches."""
    return async_to_sync(aset_toolsets_active)(
        session=session, names=names, active=active, changed_by=changed_by
    )


def set_toolset_active(
    *, session: Session, name: str, active: bool, changed_by=None
) -> Switch:
    """See aset_toolsets_active(); one toolset, for the API."""
    [switch] = set_toolsets_active(
        session=session, names=[name], active=active, changed_by=changed_by
    )
    return switch


def _switch_view(
    found: SessionToolsetView, active: bool, changed_by, now: datetime
) -> Switch:
    if found.active == active:
        return Switch(found, changed=False)
    view = SessionToolsetView(
        **{
            **asdict(found),
            "active": active,
            "changed_by": _username(changed_by),
            "changed_at": now,
        }
    )
    return Switch(view, changed=True)


def _store(
    session: Session,
    views: Sequence[SessionToolsetView],
    changed_by,
    now: datetime,
) -> None:
    rows = Toolset.objects.in_bulk([view.name for view in views], field_name="name")
    with transaction.atomic():
        _renew(session)
        for view in views:
            SessionToolset.objects.update_or_create(
                session=session,
                toolset=rows[view.name],
                defaults={
                    "active": view.active,
                    "changed_by": changed_by,
                    "changed_at": now,
                },
            )


async def _tell(
    session: Session,
    views: Sequence[SessionToolsetView],
    *,
    author: str,
    invocation_id: str,
) -> None:
    """Record and publish one `tools_changed` event: stored first, then the doorbell."""
    who = views[0].changed_by or author
    parts = [
        f"{'activated' if active else 'deactivated'} "
        f"{'toolsets' if len(names) > 1 else 'toolset'} {', '.join(names)}"
        for active, names in _by_state(views)
    ]
    await arecord_and_publish(
        session=session,
        kind=EVENT_KIND,
        invocation_id=invocation_id,
        data={
            "text": f"{who} {' and '.join(parts)}.",
            "toolsets": {view.name: view.active for view in views},
        },
    )


def _by_state(views: Sequence[SessionToolsetView]) -> list[tuple[bool, list[str]]]:
    grouped: dict[bool, list[str]] = {}
    for view in views:
        grouped.setdefault(view.active, []).append(view.name)
    return list(grouped.items())


# The model's tools.


class ActivationTool(FunctionTool):
    """One of the tools the model switches toolsets with: offered to every agent
    that includes it, in no toolset, never governed (it only narrows access)."""

    toolcrib_internal = True  # bindings.INTERNAL_TOOL_ATTR


async def _session_of(tool_context: Context) -> Session:
    # By ADK's scoping, (app, user, id): the id alone may be another user's session.
    rows = session_rows(tool_context.session)
    return await rows.select_related("agent", "owner").aget()


def _root_of(tool_context: Context) -> BaseAgent:
    agent = tool_context.get_invocation_context().agent
    while agent.parent_agent is not None:
        agent = agent.parent_agent
    return agent


async def list_toolsets(tool_context: Context) -> dict:
    """List the toolsets you can use in this conversation and whether each is active.

    Only the tools of active toolsets are offered to you. Use activate_toolset to
    get the tools of an inactive toolset, and deactivate_toolset to put a toolset
    you no longer need away.
    """
    views = await asession_toolsets(
        session=await _session_of(tool_context), root=_root_of(tool_context)
    )
    return {"status": "success", "toolsets": [view.for_model() for view in views]}


async def activate_toolset(
    tool_context: Context, name: str = "", names: list[str] | None = None
) -> dict:
    """Activate toolsets: their tools are offered to you from your next step on.

    Args:
        name: One toolset's name, as list_toolsets gives it.
        names: Several toolsets' names, to activate all of them at once.
    """
    return await _switch(tool_context, name, names, active=True)


async def deactivate_toolset(
    tool_context: Context, name: str = "", names: list[str] | None = None
) -> dict:
    """Deactivate toolsets: their tools are no longer offered from your next step on.

    Args:
        name: One toolset's name, as list_toolsets gives it.
        names: Several toolsets' names, to deactivate all of them at once.
    """
    return await _switch(tool_context, name, names, active=False)


async def _switch(
    tool_context: Context, name: str, names: list[str] | None, *, active: bool
) -> dict:
    wanted = [*([name] if name else []), *(names or [])]
    try:
        switches = await aset_toolsets_active(
            session=await _session_of(tool_context),
            names=wanted,
            active=active,
            author=tool_context.agent_name,
            invocation_id=tool_context.invocation_id,
            root=_root_of(tool_context),
        )
    except UnknownToolset as exc:
        return {"status": "error", "error_message": str(exc)}
    state = "active" if active else "inactive"
    if names is None:  # one toolset, by `name`: the shape list_toolsets' tools had
        [switch] = switches
        message = f"Toolset {name} is {state} from your next step."
        if not switch.changed:
            message = f"Toolset {name} is already {state}."
        return {
            "status": "success",
            "changed": switch.changed,
            "message": message,
            "toolset": switch.toolset.for_model(),
        }
    changed = [s.toolset.name for s in switches if s.changed]
    already = [s.toolset.name for s in switches if not s.changed]
    told = [f"{', '.join(changed)} {state} from your next step"] if changed else []
    told += [f"{', '.join(already)} already {state}"] if already else []
    return {
        "status": "success",
        "changed": changed,
        "message": f"Toolsets: {'; '.join(told)}.",
        "toolsets": [s.toolset.for_model() for s in switches],
    }


def activation_tools() -> list[BaseTool]:
    """list_toolsets, activate_toolset and deactivate_toolset, for an agent's tools."""
    return [
        ActivationTool(list_toolsets),
        ActivationTool(activate_toolset),
        ActivationTool(deactivate_toolset),
    ]
