"""Code toolsets (settings) and code agents -> Toolset and Tool rows.

`sync_catalog()` (`manage.py sync_tools`) brings the catalog up to date; which
toolset each tool belongs to is decided in toolsets.bindings. A tool that
disappears from code is marked missing, never deleted, so grants and the audit
keep pointing at it. A sync never changes what admins chose (policy, kill
switches, a risk the code does not declare).
"""

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import IntegrityError, transaction
from google.adk.agents import BaseAgent
from google.adk.tools import BaseTool, FunctionTool

from agents.models import AgentSpec
from agents.runtime import AgentBuildError
from toolsets import access, grants, reviews
from toolsets.bindings import (
    Binding,
    ToolsetInfo,
    abindings_of_code_agent,
    abindings_of_imports,
    abindings_of_settings,
    bindings_of_tree,
    broken_toolsets,
)
from toolsets.models import Tool, ToolImport, Toolset

logger = logging.getLogger(__name__)

READ_VERBS = frozenset(
    "analyze count describe fetch find get list lookup read search show view".split()
)
DANGEROUS_VERBS = frozenset(
    "delete destroy drop erase exec execute explode kill purge remove shell wipe".split()
)
RISKS = frozenset(Tool.Risk.values)


@dataclass
class SyncReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.missing)


def declaration_of(tool: BaseTool) -> tuple[str, dict[str, Any]]:
    """The description and the JSON schema of the arguments of a tool."""
    declaration = tool._get_declaration()
    if declaration is None:
        return tool.description or "", {}
    schema: dict[str, Any] = {}
    if declaration.parameters_json_schema:
        schema = dict(declaration.parameters_json_schema)
    elif declaration.parameters:
        schema = declaration.parameters.model_dump(mode="json", exclude_none=True)
    return declaration.description or tool.description or "", schema


def declared_risk(tool: BaseTool) -> str | None:
    """A risk the code declares: `custom_metadata={"risk": ...}` or `func.risk`;
    else what an MCP tool's annotations say (annotated_risk)."""
    risk = (tool.custom_metadata or {}).get("risk")
    if risk is None and isinstance(tool, FunctionTool):
        risk = getattr(tool.func, "risk", None)
    if risk is None:
        risk = annotated_risk(tool)
    return risk if risk in RISKS else None


def annotated_risk(tool: BaseTool) -> str | None:
    """An MCP tool's own word on its risk (ADK's McpTool keeps the tool as the
    server listed it): `readOnlyHint` is read, `destructiveHint` dangerous. A tool
    its server marks read-only is never guessed `write` from its name."""
    raw = getattr(tool, "raw_mcp_tool", None)
    annotations = getattr(raw, "annotations", None)
    if annotations is None:
        return None
    if _hint(annotations, "read_only_hint", "readOnlyHint"):
        return Tool.Risk.READ
    if _hint(annotations, "destructive_hint", "destructiveHint"):
        return Tool.Risk.DANGEROUS
    return None


def _hint(annotations: Any, *names: str) -> bool:
    """Whether a hint is set true (the MCP SDK names it in snake or camel case)."""
    return any(getattr(annotations, name, None) is True for name in names)


def guessed_risk(name: str) -> str:
    """read for get_/list_/..., dangerous for delete_/exec_/..., write otherwise."""
    verb = name.split("_", 1)[0].lower()
    if verb in READ_VERBS:
        return Tool.Risk.READ
    if verb in DANGEROUS_VERBS:
        return Tool.Risk.DANGEROUS
    return Tool.Risk.WRITE


# Writing rows.


def sync_catalog() -> SyncReport:
    """Bring the catalog up to date with the code: create, update, mark missing."""
    report = SyncReport()
    found = async_to_sync(abindings_of_settings)(report.failed)
    for spec in AgentSpec.objects.filter(source=AgentSpec.Source.CODE, missing=False):
        try:
            found += async_to_sync(abindings_of_code_agent)(spec, report.failed)
        except AgentBuildError:
            logger.exception("code agent failed to load agent=%s", spec.name)
            report.failed.append(spec.name)
    found += async_to_sync(abindings_of_imports)(report.failed)
    # A disabled import is not listed, but its rows stay as they were.
    disabled = ToolImport.objects.filter(enabled=False).values_list("name", flat=True)
    with transaction.atomic():
        _write(found, report, refresh=True)
        _keep_broken(broken_toolsets())
        _mark_missing(found, report, keep_toolsets={*report.failed, *disabled})
    if report.changed:
        grants.catalog_changed(tools=report.created + report.updated + report.missing)
    return report


def _keep_broken(broken: Mapping[str, str]) -> None:
    """A settings toolset whose code fails to import keeps its row, or gets one:
    the catalog lists it with its error (toolsets.bindings.broken_toolsets) and its
    tools as they were, until its code loads again."""
    rows = {t.name: t for t in Toolset.objects.filter(name__in=list(broken))}
    for name in broken:
        info = ToolsetInfo(name=name, origin=settings.TOOLCRIB_TOOLSETS[name])
        row = _upsert_toolset(info, rows, refresh=False)
        if row.missing:
            Toolset.objects.filter(pk=row.pk).update(missing=False)


def register(bindings: Iterable[Binding], *, refresh: bool = False) -> SyncReport:
    """Create the rows of bindings the catalog does not know yet; touch nothing else
    (with `refresh`, bring theirs up to date too, as a sync does).

    Runs when a running agent offers a tool that no sync has seen (a toolset added to
    settings since the last sync, say): such a tool gets its toolset's default policy.
    A tool added at run time (availability.add_tools) is refreshed: no sync sees it,
    so the last one marked it missing.
    """
    found, report = list(bindings), SyncReport()
    try:
        with transaction.atomic():
            _write(found, report, refresh=refresh)
    except IntegrityError:
        # Another turn registered the same tools first; what is left is written now.
        report = SyncReport()
        with transaction.atomic():
            _write(found, report, refresh=refresh)
    if report.changed:
        # Only the catalog caught up with what already ran: nobody's tools changed.
        access.invalidate()
    return report


def sync_toolset(
    info: ToolsetInfo, bindings: Iterable[Binding]
) -> tuple[Toolset, SyncReport]:
    """Bring one toolset up to date (an import registered or refreshed).

    Its row is created if need be, even with no tools; its tools are created or
    updated, and those not in `bindings` marked missing. Other toolsets are left
    alone.
    """
    found, report = list(bindings), SyncReport()
    with transaction.atomic():
        rows = {t.name: t for t in Toolset.objects.filter(name=info.name)}
        toolset = _upsert_toolset(info, rows, refresh=True)
        _write(found, report, refresh=True)
        gone = toolset.tools.filter(missing=False).exclude(
            full_name__in=[b.full_name for b in found]
        )
        report.missing += list(gone.values_list("full_name", flat=True))
        gone.update(missing=True)
    if report.changed:
        grants.catalog_changed(tools=report.created + report.updated + report.missing)
    return toolset, report


def mark_toolset_missing(toolset: Toolset) -> list[str]:
    """Mark a toolset and its tools missing (its import was deleted); kept for
    grants and audit."""
    with transaction.atomic():
        tools = list(toolset.tools.filter(missing=False))
        toolset.tools.filter(missing=False).update(missing=True)
        Toolset.objects.filter(pk=toolset.pk).update(missing=True)
    names = [tool.full_name for tool in tools]
    grants.catalog_changed(tools=names)
    return names


def _write(found: Sequence[Binding], report: SyncReport, *, refresh: bool) -> None:
    toolsets = {t.name: t for t in Toolset.objects.all()}
    tools = {t.full_name: t for t in Tool.objects.all()}
    seen: set[str] = set()
    for binding in found:
        if binding.full_name in seen:
            continue
        seen.add(binding.full_name)
        toolset = _upsert_toolset(binding.toolset, toolsets, refresh=refresh)
        _upsert_tool(binding, toolset, tools, report, refresh=refresh)


def _upsert_toolset(
    info: ToolsetInfo, rows: dict[str, Toolset], *, refresh: bool
) -> Toolset:
    row = rows.get(info.name)
    if row is None:
        row = Toolset.objects.create(
            name=info.name,
            description=info.description,
            source=info.source,
            origin=info.origin,
            **{
                "default_policy": settings.TOOLCRIB_TOOLSET_DEFAULT_POLICY,
                **info.defaults,
            },
        )
        rows[info.name] = row
        return row
    wanted = {
        "description": info.description,
        "source": info.source,
        "origin": info.origin,
        "missing": False,
    }
    if refresh and any(getattr(row, key) != value for key, value in wanted.items()):
        for key, value in wanted.items():
            setattr(row, key, value)
        row.save()
    return row


def _upsert_tool(
    binding: Binding,
    toolset: Toolset,
    rows: dict[str, Tool],
    report: SyncReport,
    *,
    refresh: bool,
) -> None:
    description, schema = declaration_of(binding.tool)
    risk = declared_risk(binding.tool)
    row = rows.get(binding.full_name)
    if row is None:
        Tool.objects.create(
            toolset=toolset,
            name=binding.name,
            full_name=binding.full_name,
            description=description,
            parameters=schema,
            risk=risk or guessed_risk(binding.base_name or binding.name),
        )
        report.created.append(binding.full_name)
        return
    if not refresh:
        return
    wanted = {"description": description, "parameters": schema, "missing": False}
    if risk:
        wanted["risk"] = risk
    if any(getattr(row, key) != value for key, value in wanted.items()):
        for key, value in wanted.items():
            setattr(row, key, value)
        row.save()
        report.updated.append(binding.full_name)


def _mark_missing(
    found: Sequence[Binding], report: SyncReport, *, keep_toolsets: set[str]
) -> None:
    """Mark what the code no longer has; toolsets of agents that failed to load stay."""
    names = {b.full_name for b in found}
    toolset_names = {b.toolset.name for b in found} | keep_toolsets
    gone = (
        Tool.objects.filter(missing=False)
        .exclude(full_name__in=names)
        .exclude(toolset__name__in=keep_toolsets)
    )
    report.missing += list(gone.values_list("full_name", flat=True))
    gone.update(missing=True)
    Toolset.objects.filter(missing=False).exclude(name__in=toolset_names).update(
        missing=True
    )


def tools_by_full_name(names: Iterable[str]) -> Mapping[str, Tool]:
    """Tool rows (with their toolset) by full name."""
    rows = Tool.objects.select_related("toolset__stored_import").filter(
        full_name__in=list(names)
    )
    return {row.full_name: row for row in rows}


@dataclass(frozen=True)
class UsableTool:
    binding: Binding
    tool: Tool
    decision: access.Decision


def usable_tools(*, user_id: int, root: BaseAgent, app_name: str) -> list[UsableTool]:
    """The tools of an agent tree that a user may use now, in tree order."""
    bindings = bindings_of_tree(root, app_name=app_name)
    unknown = set(access.uncatalogued(tools=[b.full_name for b in bindings]))
    if unknown:
        register(b for b in bindings if b.full_name in unknown)
    rows = tools_by_full_name(b.full_name for b in bindings)
    decisions = access.explain_many(user_id=user_id, tools=rows)
    usable, seen = [], set()
    for b in bindings:
        if b.full_name in seen or not decisions.get(b.full_name, _NO).allowed:
            continue
        if reviews.is_held(rows[b.full_name]):  # never offered until approved
            continue
        seen.add(b.full_name)
        usable.append(UsableTool(b, rows[b.full_name], decisions[b.full_name]))
    return usable


_NO = access.Decision(False, "not in the catalog", access.Reason.UNKNOWN)
