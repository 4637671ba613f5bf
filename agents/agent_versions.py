"""A row agent's versions and its draft: every save is a numbered version.

- A save through the agents API publishes: the agent's row changes and a
  `published` version records its editable fields (`snapshot`).
- A draft is a row of its own (`AgentSpec.draft_of`), named after its agent with
  DRAFT_SUFFIX, which only staff start sessions with (agents.sessions.get_draft);
  saving it records a `draft` version of the agent. Publishing copies the draft's
  fields onto the agent, a new published version; the draft row stays, for the
  sessions that tried it. Discarding the draft removes its row; the sessions that
  tried it go on with the published agent.
- A rollback copies an old version's fields onto the agent: itself a new version.

The API validates a version's fields (agents.api.agent_serializers) before any
function here applies them; every version is also in the change audit.
"""

import difflib
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from agents.changes import record
from agents.models import DRAFT_SUFFIX, AgentSpec, AgentVersion
from project.errors import NotFoundError

# The fields a version keeps, in the order a diff lists them.
VERSIONED_FIELDS = (
    "description",
    "kind",
    "instruction",
    "model",
    "model_choices",
    "toolsets",
    "tools",
    "sub_agents",
    "max_iterations",
    "tool_choice",
    "starters",
    "history",
    "retention_days",
    "groups",
)
# Fields that name other rows: a version keeps their names.
RELATED_FIELDS = ("sub_agents", "groups")


def snapshot(spec: AgentSpec) -> dict[str, Any]:
    """The agent's editable fields, as a version keeps them and the API takes them."""
    data = {
        name: getattr(spec, name)
        for name in VERSIONED_FIELDS
        if name not in RELATED_FIELDS
    }
    data["sub_agents"] = [sub.name for sub in spec.sub_agents.all()]
    data["groups"] = sorted(group.name for group in spec.groups.all())
    return data


def draft_name(name: str) -> str:
    """The name of agent `name`'s draft."""
    return f"{name}{DRAFT_SUFFIX}"


def record_version(
    *, agent: AgentSpec, user, status: str = AgentVersion.Status.PUBLISHED, note=""
) -> AgentVersion:
    """Number and store the current fields of `agent` (or of its draft, for a draft
    version), and audit what changed since the version before."""
    draft = status == AgentVersion.Status.DRAFT
    source = AgentSpec.objects.get(draft_of=agent) if draft else agent
    with transaction.atomic():
        # Locked, so two saves at once take two numbers (SQLite: one writer).
        AgentSpec.objects.select_for_update().filter(pk=agent.pk).first()
        previous = agent.versions.first()
        latest = agent.versions.aggregate(n=Max("number"))["n"] or 0
        version = AgentVersion.objects.create(
            agent=agent,
            number=latest + 1,
            status=status,
            data=snapshot(source),
            note=note[:200],
            author=user if getattr(user, "is_authenticated", False) else None,
        )
        before = previous.data if previous is not None else {}
        changed = [row["field"] for row in field_changes(before, version.data)]
        record(
            user,
            agent,
            f"version_{status}",
            {"version": version.number, "fields": changed, "note": version.note},
        )
    return version


def get_version(*, agent: AgentSpec, number: int) -> AgentVersion:
    """Version `number` of `agent`, else NotFoundError."""
    version = agent.versions.filter(number=number).first()
    if version is None:
        raise NotFoundError(
            _("No version %(number)s of %(agent_name)s.")
            % {"number": number, "agent_name": agent.name}
        )
    return version


def ensure_draft(*, agent: AgentSpec) -> AgentSpec:
    """The agent's draft row, made from its published fields if it has none."""
    existing = AgentSpec.objects.filter(draft_of=agent).first()
    if existing is not None:
        return existing
    draft = AgentSpec.objects.create(
        name=draft_name(agent.name),
        source=AgentSpec.Source.DATABASE,
        draft_of=agent,
        **{
            name: getattr(agent, name)
            for name in VERSIONED_FIELDS
            if name not in RELATED_FIELDS
        },
    )
    apply_related(draft, snapshot(agent))
    return draft


def discard_draft(*, agent: AgentSpec, user) -> int:
    """Remove the agent's draft, unpublished; NotFoundError if it has none.

    The sessions that tried it go on with the published agent (a session keeps
    its agent row), so the draft row can go and the next draft starts afresh
    from the published fields. Returns how many sessions were moved; the
    change audit records the discard on the agent (and the row's delete).
    """
    with transaction.atomic():
        draft = AgentSpec.objects.select_for_update().filter(draft_of=agent).first()
        if draft is None:
            raise NotFoundError(_("This agent has no draft."))
        moved = draft.sessions.update(agent=agent)
        record(user, agent, "draft_discarded", {"sessions_moved": moved})
        draft.delete()
    return moved


def apply_related(spec: AgentSpec, data: Mapping[str, Any]) -> None:
    """Set the sub-agents and groups `data` names (the names were validated)."""
    if "sub_agents" in data:
        subs = AgentSpec.objects.filter(
            name__in=data["sub_agents"], draft_of__isnull=True
        )
        spec.sub_agents.set(list(subs))
    if "groups" in data:
        spec.groups.set(list(Group.objects.filter(name__in=data["groups"])))


def field_changes(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Each versioned field whose value differs, with both values."""
    return [
        {"field": name, "before": before.get(name), "after": after.get(name)}
        for name in VERSIONED_FIELDS
        if before.get(name) != after.get(name)
    ]


def diff_versions(older: AgentVersion, newer: AgentVersion) -> dict[str, Any]:
    """Field by field, what changed from `older` to `newer`; the instruction also
    as a unified line diff."""
    lines = difflib.unified_diff(
        (older.data.get("instruction") or "").splitlines(),
        (newer.data.get("instruction") or "").splitlines(),
        fromfile=f"v{older.number}",
        tofile=f"v{newer.number}",
        lineterm="",
    )
    return {
        "a": older.number,
        "b": newer.number,
        "changes": field_changes(older.data, newer.data),
        "instruction_diff": list(lines),
    }


def set_archived(*, agent: AgentSpec, archived: bool) -> AgentSpec:
    """Archive the agent (no new sessions; old ones stay readable) or restore it."""
    agent.is_active = not archived
    agent.save(update_fields=["is_active", "updated_at"])
    return agent
