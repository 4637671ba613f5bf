"""Stored imports (ToolImport rows) -> ADK toolsets, built once per version per process.

Every process (a server, each Celery worker) builds an import's toolset from its
row alone: an MCP server's McpToolset connects when its tools are first listed; an
OpenAPI import is built from the spec its last refresh stored, so no turn waits on
the spec's server. A refresh or any change to the row gives it a new version, and
the next agent built gets a new toolset (agents.adk.builder puts the version in an
agent's fingerprint).

Services that change rows live in toolsets.import_registry; this module only reads.

Safe under a worker's threads: the process's toolsets are looked up, built, kept
and evicted under one lock, so turns asking for an import at once share its one
toolset (tests/toolsets/imports/test_imports_threads.py).
"""

import asyncio
import atexit
import logging
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Iterable
from typing import Any

from django.conf import settings
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.mcp_tool import McpToolset

from project import sealing
from toolsets.imports.a2a import a2a_toolset
from toolsets.imports.mcp import KeptMcpToolset, kept_mcp_toolset, mcp_toolset
from toolsets.imports.openapi import openapi_toolset
from toolsets.imports.registrations import (
    A2AAgent,
    ImportFailed,
    McpServer,
    OpenApiSpec,
    public_fields,
)
from toolsets.models import ToolImport, Toolset

logger = logging.getLogger(__name__)

IMPORTED_SOURCES = (Toolset.Source.MCP, Toolset.Source.OPENAPI, Toolset.Source.A2A)
MODELS = {
    ToolImport.Kind.MCP: McpServer,
    ToolImport.Kind.OPENAPI: OpenApiSpec,
    ToolImport.Kind.A2A: A2AAgent,
}

# Import name -> (version, toolset), least recently used first.
_built: OrderedDict[str, tuple[str, BaseToolset]] = OrderedDict()
# Import name -> how many times this process closed its toolset.
_closings: dict[str, int] = {}
_lock = threading.RLock()
# Closes running as tasks of a loop (close_quietly called on it).
_closing: set[asyncio.Task] = set()

CLOSE_TIMEOUT = 10.0  # seconds a kept MCP import's sessions get to close

SEALED = "sealed"
PURPOSE = "toolcrib-imports"


def stored_registration(
    registration: McpServer | OpenApiSpec | A2AAgent,
) -> dict[str, Any]:
    """What a row keeps of a registration: what may be shown, in clear, and the
    whole registration sealed (project.sealing), since env values, headers, a URL's
    query or a command's arguments may hold secrets."""
    return {
        "origin": registration.origin,
        "public": public_fields(registration),
        SEALED: sealing.seal(PURPOSE, registration.model_dump_json()),
    }


def registration_of_row(row: ToolImport) -> McpServer | OpenApiSpec | A2AAgent:
    """The validated registration a row stores; ImportFailed if it no longer
    decrypts (TOOLCRIB_CREDENTIAL_KEY or SECRET_KEY changed)."""
    model = MODELS[row.kind]
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
    if isinstance(registration, A2AAgent):
        return a2a_toolset(dict(row.document), registration)
    return openapi_toolset(dict(row.document), registration)


def kept_toolset(row: ToolImport) -> BaseToolset:
    """A new toolset for a row, for this process's cache: an MCP one keeps its
    sessions open when a run ends (KeptMcpToolset)."""
    registration = registration_of_row(row)
    if isinstance(registration, McpServer):
        return kept_mcp_toolset(registration)
    return build_toolset(row)


def toolset_of(row: ToolImport) -> BaseToolset:
    """The toolset of a row in this process, rebuilt when the row changed.

    MCP sessions stay open across turns; at most TOOLCRIB_MCP_SESSIONS_MAX MCP
    imports are kept, the least recently used one closed past that.
    """
    version = version_of(row)
    with _lock:
        cached = _built.get(row.name)
        if cached is not None and cached[0] == version:
            _built.move_to_end(row.name)
            return cached[1]
        toolset = kept_toolset(row)
        _built[row.name] = (version, toolset)
        _built.move_to_end(row.name)
        if cached is not None:
            close_quietly(cached[1])  # an MCP stdio server of the old version stops
        _evict_over_bound()
    return toolset


def _evict_over_bound() -> None:
    kept = [name for name, (_, ts) in _built.items() if isinstance(ts, McpToolset)]
    for name in kept[: max(len(kept) - settings.TOOLCRIB_MCP_SESSIONS_MAX, 0)]:
        logger.info("MCP import closed, least recently used import=%s", name)
        forget(name)


def forget(name: str) -> None:
    """Drop an import's toolset from this process, closing it (a deleted import)."""
    with _lock:
        cached = _built.pop(name, None)
        if cached is not None:
            _closings[name] = _closings.get(name, 0) + 1
            close_quietly(cached[1])


def forget_all() -> None:
    """Close every import's toolset of this process (it stops)."""
    with _lock:
        names = list(_built)
    for name in names:
        forget(name)


def close_quietly(toolset: BaseToolset) -> None:
    """Close a toolset no longer used: a kept MCP one on the loop its sessions live
    on (the turn loop), and waiting for it; else on a loop of its own (ADK closes a
    session of another loop there). A failure only leaves one behind."""
    try:
        if isinstance(toolset, KeptMcpToolset):
            if toolset.close_on_own_loop(CLOSE_TIMEOUT):
                return
            _run_here(toolset.aclose_sessions())
            return
        _run_here(toolset.close())
    except Exception:  # noqa: BLE001 - never worth failing the caller for
        logger.warning("an imported toolset did not close cleanly", exc_info=True)


def _run_here(closing: Coroutine[Any, Any, None]) -> None:
    """Run a close on a loop of this thread's own: no thread pool, which refuses
    work once the interpreter is shutting down (atexit); as a task of this
    thread's running loop, if it has one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(closing)
        return
    task = loop.create_task(closing)
    _closing.add(task)  # held until done: the loop keeps only a weak reference
    task.add_done_callback(_closing.discard)


# A stdio server also sees its stdin close when this process exits; this closes
# its session first, where the interpreter exits normally: on the turn loop, which
# still runs then (a daemon thread), and before logging shuts down (atexit runs
# its handlers last registered first, and logging registered its own before this).
atexit.register(forget_all)


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
    """A string that changes whenever one of these imports changes, or this process
    closed its toolset (so an agent holding a closed one is built again).

    An agent about to run asks for it: these imports count as used just now.
    """
    rows = (
        ToolImport.objects.filter(name__in=list(names))
        .order_by("name")
        .only("pk", "name", "updated_at", "enabled")
    )
    return ",".join(f"{row.name}={version_of(row)}:{_kept(row.name)}" for row in rows)


def _kept(name: str) -> int:
    """How often this process closed an import's toolset; marks it used."""
    with _lock:
        if name in _built:
            _built.move_to_end(name)
        return _closings.get(name, 0)


def stored_names() -> set[str]:
    """Names an agent spec may list as toolsets besides settings' ones."""
    return set(ToolImport.objects.values_list("name", flat=True))
