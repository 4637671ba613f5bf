"""Staff review of imported tools: what each one declares, and what staff approved.

An imported tool (its toolset is a ToolImport's: an MCP server or an OpenAPI spec
staff connected) is offered to the model, and callable, only while what it
declares (its description and argument schema, as one digest:
toolsets.declarations) is what staff approved. A new tool starts unreviewed; a
tool whose declaration changed since it was approved is held until staff look
again, since a changed description is how a tool is poisoned. Governance compares
at every model step and call (governance.checks.Review); a refresh compares when
it re-reads the server (import_registry).

A tool's state: `new` (never approved), `changed` (its declaration differs from
the approved one) or `approved`.
"""

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from agents.changes import record
from toolsets import grants
from toolsets.declarations import digest_of
from toolsets.models import Tool

logger = logging.getLogger(__name__)

NEW = "new"
CHANGED = "changed"
APPROVED = "approved"


def state_of(tool: Tool) -> str:
    """`new`, `changed` or `approved`: whether staff approved what it declares."""
    if not tool.approved_digest:
        return NEW
    if tool.approved_digest != digest_of(tool.description, tool.parameters):
        return CHANGED
    return APPROVED


def is_reviewed(tool: Tool) -> bool:
    """Whether a tool is held to staff review: it comes from a stored import."""
    return hasattr(tool.toolset, "stored_import")


def is_held(tool: Tool) -> bool:
    """An imported tool not offered as the catalog reads it now (new or changed);
    read `tool.toolset.stored_import` with select_related to spare a query."""
    return is_reviewed(tool) and state_of(tool) != APPROVED


def approve_tool(*, tool: Tool, by: AbstractBaseUser | None) -> Tool:
    """Approve what a tool declares now; it is offered again (if access allows)."""
    previous = tool.approved_digest
    tool.approved_digest = digest_of(tool.description, tool.parameters)
    tool.approved_description = tool.description
    tool.approved_parameters = dict(tool.parameters)
    tool.approved_by, tool.approved_at = by, timezone.now()
    with transaction.atomic():
        tool.save(
            update_fields=[
                "approved_digest",
                "approved_description",
                "approved_parameters",
                "approved_by",
                "approved_at",
                "updated_at",
            ]
        )
        record(
            by,
            tool,
            "tool declaration approved",
            {"digest": tool.approved_digest, "previous_digest": previous},
        )
    grants.catalog_changed(tools=[tool.full_name])
    logger.info("tool declaration approved tool=%s", tool.full_name)
    return tool


def approve_on_import(*, tools: Iterable[Tool], by: AbstractBaseUser | None) -> None:
    """Approve tools as staff registered them, having read them elsewhere (the
    API's `approve_tools`)."""
    for tool in tools:
        approve_tool(tool=tool, by=by)


def record_declared(
    *, full_name: str, description: str, parameters: Mapping[str, Any]
) -> bool:
    """A server declares a tool otherwise than the catalog says (a turn listed it):
    keep what it declares now, for staff to review. True if the row changed."""
    with transaction.atomic():
        tool = (
            Tool.objects.select_for_update()
            .filter(full_name=full_name, missing=False)
            .first()
        )
        if tool is None:
            return False
        if digest_of(tool.description, tool.parameters) == digest_of(
            description, parameters
        ):
            return False
        old = tool.description
        Tool.objects.filter(pk=tool.pk).update(
            description=description,
            parameters=dict(parameters),
            updated_at=timezone.now(),
        )
        record(
            None,
            tool,
            "tool declaration changed",
            {
                "seen": "at run time",
                "old_description": old,
                "new_description": description,
            },
        )
    grants.catalog_changed(tools=[full_name])
    logger.warning("imported tool declaration changed tool=%s", full_name)
    return True


@dataclass(frozen=True)
class DeclarationChange:
    """One tool whose description or schema a refresh found changed."""

    full_name: str
    description_changed: bool
    parameters_changed: bool


def changes_between(
    before: Mapping[str, tuple[str, Mapping[str, Any]]], after: Iterable[Tool]
) -> list[DeclarationChange]:
    """The tools whose declaration differs from `before` (full name -> (description,
    parameters)), among `after`."""
    changed = []
    for tool in after:
        old = before.get(tool.full_name)
        if old is None:
            continue
        description = old[0] != tool.description
        parameters = dict(old[1]) != dict(tool.parameters)
        if description or parameters:
            changed.append(DeclarationChange(tool.full_name, description, parameters))
    return changed
