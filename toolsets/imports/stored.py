"""Stored imports (ToolImport rows) -> ADK toolsets, built once per version per process.

Every process (a server, each Celery worker) builds an import's toolset from its
row alone: an MCP server's McpToolset connects when its tools are first listed; an
OpenAPI import is built from the spec its last refresh stored, so no turn waits on
the spec's server. A refresh or any change to the row gives it a new version, and
the next agent built gets a new toolset (agents.adk.builder puts the version in an
agent's fingerprint).

Services that change rows live in toolsets.imports.registry; this module only reads.
"""

import logging
from collections.abc import Iterable
from typing import Any

from asgiref.sync import async_to_sync
from google.adk.tools.base_toolset import BaseToolset

from project import sealing
from toolsets.imports.mcp import mcp_toolset
from toolsets.imports.openapi import openapi_toolset
from toolsets.imports.registrations import (
    ImportFailed,
    McpServer,
    OpenApiSpec,
    public_fields,
)
from toolsets.models import ToolImport, Toolset

logger = logging.getLogger(__name__)

IMPORTED_SOURCES = (Toolset.Source.MCP, Toolset.Source.OPENAPI)

_built: dict[str, tuple[str, BaseToolset]] = {}

SEALED = "sealed"
PURPOSE = "toolcrib-imports"


def stored_registration(registration: McpServer | OpenApiSpec) -> dict[str, Any]:
    """What a row keeps of a registration: what may be shown, in clear, and the
    whole registration sealed (project.sealing), since env values, headers, a URL's
    query or a command's arguments may hold secrets."""
    return {
        "origin": registration.origin,
        "public": public_fields(registration),
        SEALED: sealing.seal(PURPOSE, registration.model_dump_json()),
    }


def registration_of_row(row: ToolImport) -> McpServer | OpenApiSpec:
    """The validated registration a row stores; ImportFailed if it no longer
    decrypts (TOOLCRIB_CREDENTIAL_KEY or SECRET_KEY changed)."""
    model = McpServer if row.kind == ToolImport.Kind.MCP else OpenApiSpec
    data = row.registration
    if SEALED not in data:  # stored in clear (by hand, or before sealing)
        return model.model_validate(data)
    plain = sealing.unseal(PURPOSE, data[SEALED])
    if plain is None:
        raise ImportFailed(
            f"the registration of {row.name} no longer decrypts (the key changed): "
            "delete it and register it again"
        )
    return model.model_validate_json(plain)


def shown_of_row(row: ToolImport) -> tuple[str, dict[str, Any]]:
    """(origin, public fields) of a row, without decrypting anything."""
    data = row.registration
    if SEALED in data:
        return str(data.get("origin", "")), dict(data.get("public", {}))
    registration = registration_of_row(row)
    return registration.origin, public_fields(registration)


def version_of(row: ToolImport) -> str:
    """Changes when the row is saved: an MCP refresh only updates() its status
    fields, so each process keeps its toolset (and its MCP sessions)."""
    return f"{row.pk}:{row.updated_at.timestamp()}:{row.enabled}"


def build_toolset(row: ToolImport) -> BaseToolset:
    """A new toolset for a row (nothing connects yet)."""
    registration = registration_of_row(row)
    if isinstance(registration, McpServer):
        return mcp_toolset(registration)
    if not row.document:
        raise ImportFailed(f"the spec of {row.name} was never read: refresh it")
    return openapi_toolset(dict(row.document), registration)


def toolset_of(row: ToolImport) -> BaseToolset:
    """The toolset of a row in this process, rebuilt when the row changed."""
    version = version_of(row)
    cached = _built.get(row.name)
    if cached is not None and cached[0] == version:
        return cached[1]
    toolset = build_toolset(row)
    _built[row.name] = (version, toolset)
    if cached is not None:
        close_quietly(cached[1])  # an MCP stdio server of the old version stops
    return toolset


def forget(name: str) -> None:
    """Drop an import's toolset from this process, closing it (a deleted import)."""
    cached = _built.pop(name, None)
    if cached is not None:
        close_quietly(cached[1])


def close_quietly(toolset: BaseToolset) -> None:
    """Close a toolset no longer used; its sessions may live on other event loops
    (ADK closes each on its own), and a failure only leaves one behind."""
    try:
        async_to_sync(toolset.close)()
    except Exception:  # noqa: BLE001 - never worth failing the caller for
        logger.warning("an imported toolset did not close cleanly", exc_info=True)


def resolve_stored(name: str) -> list[BaseToolset] | None:
    """The toolsets an agent gets for the toolset name `name`, if it is an import.

    An enabled import: its toolset. A disabled or deleted one (its catalog row
    kept): none, and the agent runs without it, as ADK runs an agent whose MCP
    server is down. None when `name` was never imported.
    """
    row = ToolImport.objects.filter(name=name).first()
    if row is not None:
        return [toolset_of(row)] if row.enabled else []
    if Toolset.objects.filter(name=name, source__in=IMPORTED_SOURCES).exists():
        return []
    return None


def stored_versions(names: Iterable[str]) -> str:
    """A string that changes whenever one of these imports changes."""
    rows = (
        ToolImport.objects.filter(name__in=list(names))
        .order_by("name")
        .only("pk", "name", "updated_at", "enabled")
    )
    return ",".join(f"{row.name}={version_of(row)}" for row in rows)


def stored_names() -> set[str]:
    """Names an agent spec may list as toolsets besides settings' ones."""
    return set(ToolImport.objects.values_list("name", flat=True))
