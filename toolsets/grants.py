"""Changes to who may use what, and their one notification: the service functions
every caller (API, admin, commands, the catalog's sync) goes through.

Each change commits, bumps the access version counters that toolsets.access
decides under (`invalidate`, `invalidate_grants`), and rings the affected users'
socket groups with `access.changed` (kind `tools_changed`) once it has committed:
a doorbell, logged and counted rather than raised when Redis is away, since what it
rings for is already committed.
"""

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.models import Group
from django.db import transaction

from agents.timeline import streams
from toolsets.access import invalidate, invalidate_grants
from toolsets.grant_conditions import Condition
from toolsets.models import Grant, Tool, Toolset

MAX_TOOLS_IN_MESSAGE = 100


def grant_tool(
    *,
    target: Toolset | Tool,
    effect: str,
    user=None,
    group: Group | None = None,
    expires_at: datetime | None = None,
    condition: Condition | None = None,
    otherwise: str = Grant.Otherwise.DENY,
    approvals_required: int = 1,
    created_by=None,
) -> tuple[Grant, bool]:
    """Allow or deny a toolset or a tool to a user or a group.

    One grant per subject and target: granting again replaces the effect, the
    expiry and the condition. An allow on a tool may carry a condition on the
    call's arguments (checked against the tool by the caller:
    grant_conditions.check_condition). Returns the grant and whether it was created.
    """
    if (user is None) == (group is None):
        raise ValueError("a grant names exactly one of user and group")
    if condition is not None and not (
        isinstance(target, Tool) and effect == Grant.Effect.ALLOW
    ):
        raise ValueError("only an allow on a tool carries a condition")
    subject = {"user": user, "group": group}
    on = {"tool": target} if isinstance(target, Tool) else {"toolset": target}
    with transaction.atomic():
        grant = Grant.objects.filter(**subject, **on).order_by("id").first()
        created = grant is None
        if created:
            grant = Grant(**subject, **on, created_by=created_by)
        grant.effect, grant.expires_at = effect, expires_at
        grant.condition = condition.as_json() if condition is not None else None
        grant.otherwise = otherwise
        grant.approvals_required = approvals_required
        grant.save()
        invalidate_grants()
        _notify_grant(grant)
    return grant, created


def revoke(*, grant: Grant) -> None:
    """Delete a grant: its subject falls back to the other rules."""
    with transaction.atomic():
        users = affected_users(grant)
        tools = [_target_name(grant)]
        grant.delete()
        invalidate_grants()
        notify(user_ids=users, tools=tools)


def update_toolset(*, toolset: Toolset, **changes: Any) -> Toolset:
    """Change a toolset's description, default policy or kill switch."""
    with transaction.atomic():
        for key, value in changes.items():
            setattr(toolset, key, value)
        toolset.save()
        invalidate()
        notify(user_ids=None, tools=[toolset.name])
    return toolset


def update_tool(*, tool: Tool, **changes: Any) -> Tool:
    """Change a tool's description, risk or kill switch."""
    with transaction.atomic():
        for key, value in changes.items():
            setattr(tool, key, value)
        tool.save()
        invalidate()
        notify(user_ids=None, tools=[tool.full_name])
    return tool


def catalog_changed(*, tools: Sequence[str]) -> None:
    """Tools appeared, changed or went missing: everyone's decisions may change."""
    invalidate()
    notify(user_ids=None, tools=tools)


def membership_changed(*, user_ids: Collection[int]) -> None:
    """Users joined or left groups."""
    invalidate_grants()
    notify(user_ids=user_ids, tools=[])


def affected_users(grant: Grant) -> list[int]:
    """The users a grant applies to."""
    if grant.user_id:
        return [grant.user_id]
    return list(grant.group.user_set.values_list("pk", flat=True))


def _target_name(grant: Grant) -> str:
    return grant.tool.full_name if grant.tool_id else grant.toolset.name


def _notify_grant(grant: Grant) -> None:
    notify(user_ids=affected_users(grant), tools=[_target_name(grant)])


def notify(*, user_ids: Collection[int] | None, tools: Sequence[str]) -> None:
    """Once committed, tell the users' sockets that their tools changed.

    `None` means everyone (a toolset or tool changed for all): one send to the
    group every user's sockets are in, however many users there are.
    """
    if user_ids is None:
        groups = [streams.everyone_group()]
    else:
        groups = [streams.user_group(pk) for pk in sorted(set(user_ids))]
    if not groups:
        return
    message = {
        "type": streams.ACCESS_MESSAGE,
        "kind": "tools_changed",
        "tools": sorted(tools)[:MAX_TOOLS_IN_MESSAGE],
    }
    transaction.on_commit(lambda: _send(groups, message))


def _send(groups: list[str], message: dict[str, Any]) -> None:
    async_to_sync(streams.apublish_access)(groups, message)
