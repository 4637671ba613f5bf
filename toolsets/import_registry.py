"""Register, refresh and delete the imports an administrator stores (ToolImport rows).

The API (toolsets.api.imports) and the admin both go through these. A registration
is read before anything is stored: an MCP server that does not answer, or a spec
that cannot be fetched, is refused with ImportFailed and leaves no row behind. Its
tools then go into the catalog like any code toolset's (toolsets.catalog): the
toolset's default policy, grants, kill switches and the audit all apply.
"""

import logging
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone
from google.adk.tools.base_toolset import BaseToolset

from agents.changes import record
from toolsets import catalog, reviews
from toolsets.bindings import Binding, import_toolset, toolset_tools
from toolsets.imports.a2a import a2a_toolset, aload_card
from toolsets.imports.mcp import mcp_toolset
from toolsets.imports.openapi import aload_spec, openapi_toolset
from toolsets.imports.registrations import (
    A2AAgent,
    ImportFailed,
    McpServer,
    Registration,
    failure_of,
)
from toolsets.imports.stored import (
    IMPORTED_SOURCES,
    forget,
    registration_of_row,
    stored_registration,
)
from toolsets.models import Tool, ToolImport, Toolset

logger = logging.getLogger(__name__)


class ImportNameTaken(ImportFailed):
    """Another toolset (in code, or another import) already has this name."""


@dataclass(frozen=True)
class Reading:
    """What a registration's server or spec says now."""

    bindings: list[Binding]
    document: dict[str, Any]


async def aread(registration: Registration) -> Reading:
    """List a registration's tools now, on a toolset of its own (closed after)."""
    document: dict[str, Any] = {}
    if isinstance(registration, McpServer):
        toolset: BaseToolset = mcp_toolset(registration)
    elif isinstance(registration, A2AAgent):
        document = await aload_card(registration)
        toolset = a2a_toolset(document, registration)
    else:
        document = await aload_spec(registration)
        toolset = _openapi(document, registration)
    info = import_toolset(registration)
    try:
        listed = await toolset_tools(toolset, None)
    except ImportFailed:
        raise
    except Exception as exc:  # noqa: BLE001 - MCP transports fail in many ways
        logger.warning("import could not be listed import=%s", registration.name)
        raise ImportFailed(_listing_failure(registration, exc)) from exc
    finally:
        await toolset.close()
    bindings = [Binding(info, called, tool, base) for called, base, tool in listed]
    return Reading(bindings=bindings, document=document)


def _listing_failure(registration: Registration, exc: BaseException) -> str:
    """Why the tools could not be listed, in words an admin can act on."""
    detail = failure_of(exc)
    if not (isinstance(registration, McpServer) and registration.command):
        return f"the tools could not be listed: {detail}"
    if any(isinstance(e, FileNotFoundError) for e in _causes(exc)):
        return (
            "The tools could not be listed: there is no program "
            f"{registration.command[0]} on the server (give its full path?)."
        )
    return (
        "The tools could not be listed: the command exited (or wrote something "
        f"else) before it answered as an MCP server on its standard output ({detail})."
    )


def _causes(exc: BaseException | None) -> list[BaseException]:
    """An exception, the groups' members and the causes under it, at most 20."""
    found: list[BaseException] = []
    todo = [exc]
    while todo and len(found) < 20:
        current = todo.pop()
        if current is None or current in found:
            continue
        found.append(current)
        todo.extend(getattr(current, "exceptions", ()) or ())
        todo.extend((current.__cause__, current.__context__))
    return found


def _openapi(document: dict[str, Any], registration: Registration) -> BaseToolset:
    try:
        return openapi_toolset(document, registration)
    except ImportFailed:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise ImportFailed(f"the spec could not be turned into tools: {exc}") from exc


def check_name_free(name: str) -> None:
    """Refuse a name that a code toolset or another import already uses."""
    if name in settings.TOOLCRIB_TOOLSETS:
        raise ImportNameTaken(f"a toolset in settings is already named {name!r}")
    if ToolImport.objects.filter(name=name).exists():
        raise ImportNameTaken(f"an import is already named {name!r}")
    # A deleted import's toolset (missing, kept for its grants) is taken over.
    taken = Toolset.objects.filter(name=name).exclude(
        source__in=IMPORTED_SOURCES, missing=True
    )
    if taken.exists():
        raise ImportNameTaken(f"a toolset is already named {name!r}")


def register_import(
    *,
    registration: Registration,
    created_by: AbstractBaseUser | None,
    enabled: bool = True,
    approve_tools: bool = False,
) -> ToolImport:
    """Read a registration, then store it and catalog its tools; all or nothing.

    Its tools start held for review (toolsets.reviews): none is offered until
    staff approve it, unless `approve_tools` says they approve them as read now.
    """
    check_name_free(registration.name)
    reading = async_to_sync(aread)(registration)
    row = store_import(
        registration=registration,
        reading=reading,
        created_by=created_by,
        enabled=enabled,
    )
    if approve_tools and row.toolset is not None:
        reviews.approve_on_import(
            tools=row.toolset.tools.filter(missing=False), by=created_by
        )
    return row


def store_import(
    *,
    registration: Registration,
    reading: Reading,
    created_by: AbstractBaseUser | None,
    enabled: bool = True,
    row: ToolImport | None = None,
) -> ToolImport:
    """Store a registration already read (aread()) and catalog its tools.

    `row`: an unsaved ToolImport to fill in (the admin's); else a new one.
    """
    row = row if row is not None else ToolImport()
    row.name, row.kind = registration.name, registration.source
    row.registration = stored_registration(registration)
    row.document, row.enabled, row.created_by = reading.document, enabled, created_by
    row.last_refreshed_at, row.last_error = timezone.now(), ""
    try:
        with transaction.atomic():
            row.save()
            row.toolset, _ = catalog.sync_toolset(
                import_toolset(registration), reading.bindings
            )
            row.save(update_fields=["toolset"])
    except IntegrityError as exc:  # registered by someone else meanwhile
        row.pk = None
        raise ImportNameTaken(
            f"an import is already named {registration.name!r}"
        ) from exc
    logger.info("import registered import=%s kind=%s", row.name, row.kind)
    return row


@dataclass(frozen=True)
class Refreshed:
    """What a refresh found: tools new, gone (missing), and whose description or
    argument schema changed (held for review until approved again)."""

    created: list[str]
    missing: list[str]
    changed: list[reviews.DeclarationChange]


def refresh_import(*, row: ToolImport, by: AbstractBaseUser | None = None) -> Refreshed:
    """Re-read an import's server or spec and bring its catalog rows up to date.

    New tools appear (held for review), changed ones are updated (held for review
    if their declaration changed), vanished ones are marked missing. On failure
    the error is recorded on the row, the catalog left as it was, and
    ImportFailed raised.
    """
    registration = registration_of_row(row)
    before = {
        tool.full_name: (tool.description, tool.parameters)
        for tool in Tool.objects.filter(toolset=row.toolset_id, missing=False)
    }
    try:
        reading = async_to_sync(aread)(registration)
    except ImportFailed as exc:
        ToolImport.objects.filter(pk=row.pk).update(last_error=str(exc))
        row.refresh_from_db()
        raise
    now = timezone.now()
    changes: dict[str, Any] = {"last_error": "", "last_refreshed_at": now}
    if row.kind in (ToolImport.Kind.OPENAPI, ToolImport.Kind.A2A):
        # A new spec or card: every process builds a new toolset (a new version). An MCP
        # toolset lists its tools live, so its processes keep their sessions.
        changes |= {"document": reading.document, "updated_at": now}
    with transaction.atomic():
        toolset, report = catalog.sync_toolset(
            import_toolset(registration), reading.bindings
        )
        ToolImport.objects.filter(pk=row.pk).update(toolset=toolset, **changes)
    row.refresh_from_db()
    changed = reviews.changes_between(before, toolset.tools.filter(missing=False))
    logger.info(
        "import refreshed import=%s created=%s missing=%s changed=%s",
        row.name,
        len(report.created),
        len(report.missing),
        len(changed),
    )
    refreshed = Refreshed(report.created, report.missing, changed)
    record(
        by,
        row,
        "import refreshed",
        {
            "added": refreshed.created,
            "removed": refreshed.missing,
            "changed": [change.full_name for change in changed],
        },
    )
    return refreshed


def delete_import(*, row: ToolImport) -> None:
    """Delete an import; its toolset and tools stay, missing, for grants and audit."""
    toolset = row.toolset
    with transaction.atomic():
        row.delete()
        if toolset is not None:
            catalog.mark_toolset_missing(toolset)
    forget(row.name)
    logger.info("import deleted import=%s", row.name)
