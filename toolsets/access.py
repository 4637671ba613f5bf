"""Who may use which tool, and which rule decided. The one place access is decided.

Resolution, for one user and one tool (docs/permissions.md has examples):

1. a tool or toolset that is disabled, missing from code or not in the catalog: no;
2. any unexpired deny, on the user or one of their groups, for the tool or its
   toolset: no;
3. else any unexpired allow on the same: yes; the first by specificity (tool before
   toolset, user before group) decides, and with it its condition on the call's
   arguments, if it has one (toolsets.grant_conditions: governance checks it);
4. else the toolset's default policy: open (yes) or granted_only (no).

Decisions are cached per process and per user, under two version counters kept
in the database (AccessVersion, one row): one for the catalog (tools, toolsets), one
for grants and group membership. Every change bumps one of them as it commits, and
this process's own counterpart at once (what the change's transaction reads before
it commits must not be a decision cached before it), so the very next decision, in
this process or another, reads what changed again; no cache or doorbell can lose a
bump. A governed model step reads the counters once (`asnapshot`: one query, and
any cache key it needs in one round trip) and decides the step and its calls by that
reading. A warm decision makes no other query.

Safe under a worker's threads, with no lock: what is cached (the catalog, a user's
grants, the decisions of one catalog version) is built whole and then put in place,
a decision is read from, and kept in, only the cache of the versions it was asked
under, and this process's own counters are each replaced whole by a value an
itertools.count gives once (tests/toolsets/test_access_threads.py). The changes
themselves (grant, revoke, update a tool or toolset) and their notification are
toolsets.grants, which bumps the counters through `invalidate`.
"""

import itertools
import logging
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.db.models import F, Q
from django.utils import timezone

from project.patches.prepared import Param, Prepared
from toolsets.declarations import digest_of
from toolsets.grant_conditions import Condition, parse_condition
from toolsets.models import AccessVersion, Grant, Tool, Toolset

logger = logging.getLogger(__name__)

VERSION_ROW = 1
MAX_CACHED_USERS = 10_000


class Reason:
    UNKNOWN = "unknown"
    MISSING = "missing"
    DISABLED = "disabled"
    DENY = "deny"
    ALLOW = "allow"
    POLICY = "policy"


@dataclass(frozen=True)
class Decision:
    """May the user use it, and the rule that decided (text, kind, grant id).

    A grant's decision names its subject (`user alice`, `group support`); an allow
    by a grant with a condition carries it, and what a call outside it gets.
    """

    allowed: bool
    rule: str
    reason: str
    grant_id: int | None = None
    subject: str | None = None
    condition: Condition | None = None
    otherwise: str | None = None
    # A call held outside the condition: how many people must approve it.
    approvals_required: int = 1


@dataclass(frozen=True)
class CatalogTool:
    """What the catalog says of one tool, as of the catalog's version."""

    id: int
    full_name: str
    enabled: bool
    missing: bool
    toolset_id: int
    toolset: str
    toolset_enabled: bool
    toolset_missing: bool
    policy: str  # the toolset's default policy
    requires_approval: bool
    policy_override: dict  # Tool.policy: an admin's execution policy override
    approver_group: str | None  # who decides its approvals (blank: the requester)
    approval_timeout: float | None  # seconds until its approvals expire
    requester_may_approve: bool  # the requester may decide her own calls
    description: str
    toolset_active_by_default: bool  # active in a session that chose nothing
    approvals_required: int = 1  # people who must approve each call (two-person rule)
    # An imported tool (toolsets.reviews): offered only while what it declares has
    # the digest staff approved; `digest` is the catalog's own declaration's.
    reviewed: bool = False
    approved_digest: str = ""
    digest: str = ""


@dataclass(frozen=True)
class _GrantRow:
    id: int
    allow: bool
    expires_at: datetime | None
    on_tool: bool
    by_user: bool
    label: str
    subject: str = ""
    condition: Condition | None = None
    otherwise: str = Grant.Otherwise.DENY
    approvals_required: int = 1

    def live(self, now: datetime) -> bool:
        return self.expires_at is None or self.expires_at > now


# A version: the database's counter, and this process's own (see the module's doc).
Version = tuple[int, int]


@dataclass
class _Catalog:
    version: Version
    tools: dict[str, CatalogTool]


@dataclass
class _UserAccess:
    grants_version: Version
    by_tool: dict[int, list[_GrantRow]]
    by_toolset: dict[int, list[_GrantRow]]
    valid_until: datetime | None
    # The decisions made under one catalog version: (version, tool -> decision),
    # replaced whole when another version is asked for. A thread reads and fills
    # only the dict it took with its version, so turns of one user deciding at once
    # under readings a change apart never answer from each other's catalog.
    decided: tuple[Version, dict[str, Decision]]

    def is_current(self, versions: "Versions", now: datetime) -> bool:
        return self.grants_version == versions.grants and (
            self.valid_until is None or self.valid_until > now
        )

    def decisions(self, catalog_version: Version) -> dict[str, Decision]:
        """The decisions kept for this catalog version (a new, empty dict for
        another)."""
        version, decisions = self.decided
        if version != catalog_version:
            decisions = {}
            self.decided = (catalog_version, decisions)
        return decisions


@dataclass(frozen=True)
class Versions:
    """The catalog's version (tools, toolsets) and the grants' (grants, groups)."""

    catalog: Version
    grants: Version


@dataclass(frozen=True)
class Snapshot:
    """Access as of one reading of the version counters: the catalog then, and the
    cache keys read with them (`keys`, None where absent)."""

    versions: Versions
    tools: Mapping[str, CatalogTool]
    keys: Mapping[str, Any] = field(default_factory=dict)


_catalog: _Catalog | None = None
_users: dict[int, _UserAccess] = {}
# This process's own counters, bumped the moment a change is made.
_epochs = itertools.count(1)
_local_catalog = 0
_local_grants = 0

STORED_VERSIONS = Prepared(
    AccessVersion.objects.filter(pk=Param("pk", AccessVersion._meta.pk)).values_list(
        "catalog", "grants"
    )
)


# The version counters.


def versions() -> Versions:
    """The current versions (one query); every change bumps one or both."""
    catalog, grants = STORED_VERSIONS.first(pk=VERSION_ROW) or (0, 0)
    return Versions((catalog, _local_catalog), (grants, _local_grants))


def read_versions(keys: Sequence[str] = ()) -> tuple[Versions, dict[str, Any]]:
    """The current versions, and the values of `keys` in the cache (one round trip)."""
    found = cache.get_many(list(keys)) if keys else {}
    return versions(), {key: found.get(key) for key in keys}


async def asnapshot(
    *, keys: Sequence[str] = (), user_id: int | None = None
) -> Snapshot:
    """The catalog as of now, with `keys` read from the cache and `user_id`'s
    grants loaded if they changed, in one hop to the database: warm, one query
    (see the module's doc)."""
    return await sync_to_async(_snapshot)(keys, user_id)


def _snapshot(keys: Sequence[str], user_id: int | None) -> Snapshot:
    current, found = read_versions(keys)
    catalog = _load_catalog(current)
    if user_id is not None:
        _load_user(user_id, current, timezone.now())
    return Snapshot(current, catalog.tools, found)


def invalidate() -> None:
    """Forget every cached decision: in this process now, in every process once
    the transaction commits."""
    _bump_here(catalog=True)
    transaction.on_commit(lambda: _bump_stored(catalog=True))


def invalidate_grants() -> None:
    """Forget decisions after a change of grants or group membership only.

    The catalog snapshot (every tool, shared by all users) is kept.
    """
    _bump_here(catalog=False)
    transaction.on_commit(lambda: _bump_stored(catalog=False))


def forget() -> None:
    """Forget every decision this process cached; other processes keep theirs."""
    _bump_here(catalog=True)


def _bump_here(*, catalog: bool) -> None:
    global _local_catalog, _local_grants
    _local_grants = next(_epochs)
    if catalog:
        _local_catalog = next(_epochs)


def _bump_stored(*, catalog: bool) -> None:
    """Bump the database's counters, in a statement of its own after the commit.

    Logged, not raised, if it fails: the change is committed, and its request must
    not fail for it."""
    changes = {"grants": F("grants") + 1}
    if catalog:
        changes["catalog"] = F("catalog") + 1
    try:
        if not AccessVersion.objects.filter(pk=VERSION_ROW).update(**changes):
            AccessVersion.objects.get_or_create(pk=VERSION_ROW)
    except DatabaseError:
        logger.exception("access versions not bumped; decisions may be stale")


# Loading, once per version.


def _load_catalog(current: Versions) -> _Catalog:
    global _catalog
    catalog = _catalog  # read once: another thread may replace it meanwhile
    if catalog is not None and catalog.version == current.catalog:
        return catalog
    rows = Tool.objects.values_list(
        "id",
        "full_name",
        "enabled",
        "missing",
        "toolset_id",
        "toolset__name",
        "toolset__enabled",
        "toolset__missing",
        "toolset__default_policy",
        "requires_approval",
        "policy",
        "approver_group__name",
        "approval_timeout",
        "requester_may_approve",
        "description",
        "toolset__active_by_default",
        "approvals_required",
        "toolset__stored_import__id",
        "approved_digest",
        "parameters",
    )
    catalog = _Catalog(current.catalog, {row[1]: _catalog_tool(row) for row in rows})
    _catalog = catalog
    return catalog


def _load_user(user_id: int, current: Versions, now: datetime) -> _UserAccess:
    cached = _users.get(user_id)
    if cached is not None and cached.is_current(current, now):
        return cached
    in_groups = Group.objects.filter(user__id=user_id)
    rows = (
        Grant.objects.filter(Q(user_id=user_id) | Q(group__in=in_groups))
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .values_list(
            "id",
            "effect",
            "expires_at",
            "tool_id",
            "toolset_id",
            "user__username",
            "group__name",
            "tool__full_name",
            "toolset__name",
            "condition",
            "otherwise",
            "approvals_required",
        )
        .order_by("id")
    )
    by_tool: dict[int, list[_GrantRow]] = defaultdict(list)
    by_toolset: dict[int, list[_GrantRow]] = defaultdict(list)
    for row in rows:
        gid, effect, expires, tool_id, toolset_id, user, group, tool, toolset = row[:9]
        condition, otherwise = parse_condition(row[9]), row[10]
        subject = f"user {user}" if user is not None else f"group {group}"
        target = f"tool {tool}" if tool_id else f"toolset {toolset}"
        grant = _GrantRow(
            id=gid,
            allow=effect == Grant.Effect.ALLOW,
            expires_at=expires,
            on_tool=bool(tool_id),
            by_user=user is not None,
            label=f"grant #{gid}: {subject} on {target}"
            + (f" until {expires.isoformat()}" if expires else ""),
            subject=subject,
            condition=condition,
            otherwise=otherwise,
            approvals_required=row[11],
        )
        (by_tool[tool_id] if tool_id else by_toolset[toolset_id]).append(grant)
    expiries = [g.expires_at for g in _all(by_tool, by_toolset) if g.expires_at]
    if len(_users) >= MAX_CACHED_USERS:
        _users.clear()
    access = _UserAccess(
        current.grants,
        by_tool,
        by_toolset,
        min(expiries, default=None),
        (current.catalog, {}),
    )
    _users[user_id] = access
    return access


def _all(*indexes: dict[int, list[_GrantRow]]) -> Iterable[_GrantRow]:
    for index in indexes:
        for grants in index.values():
            yield from grants


def _is_warm(user_id: int, current: Versions, now: datetime) -> bool:
    cached = _users.get(user_id)
    return cached is not None and cached.is_current(current, now)


def _catalog_tool(row: tuple) -> CatalogTool:
    *fields, stored_import, approved, parameters = row
    return CatalogTool(
        *fields,
        reviewed=stored_import is not None,
        approved_digest=approved,
        digest=digest_of(fields[14], parameters) if stored_import else "",
    )


# Deciding.


def _decide(tool: str, row: CatalogTool | None, access: _UserAccess) -> Decision:
    if row is None:
        return Decision(False, f"{tool} is not in the catalog", Reason.UNKNOWN)
    if row.toolset_missing or row.missing:
        return Decision(False, f"tool {tool} is missing from code", Reason.MISSING)
    if not row.toolset_enabled:
        return Decision(False, f"toolset {row.toolset} is disabled", Reason.DISABLED)
    if not row.enabled:
        return Decision(False, f"tool {tool} is disabled", Reason.DISABLED)
    grants = access.by_tool.get(row.id, []) + access.by_toolset.get(row.toolset_id, [])
    return _by_grants(grants, row.toolset, row.policy)


def _by_grants(grants: Sequence[_GrantRow], toolset: str, policy: str) -> Decision:
    now = timezone.now()
    live = sorted(
        (g for g in grants if g.live(now)),
        key=lambda g: (not g.on_tool, not g.by_user, g.id),
    )
    for grant in live:
        if not grant.allow:
            return Decision(
                False,
                f"denied by {grant.label}",
                Reason.DENY,
                grant.id,
                subject=grant.subject,
            )
    for grant in live:
        rule = f"allowed by {grant.label}"
        if grant.condition is not None:
            rule += f", if {grant.condition.describe()}"
        return Decision(
            True,
            rule,
            Reason.ALLOW,
            grant.id,
            subject=grant.subject,
            condition=grant.condition,
            otherwise=grant.otherwise if grant.condition is not None else None,
            approvals_required=grant.approvals_required,
        )
    if policy == Toolset.Policy.OPEN:
        return Decision(True, f"toolset {toolset} is open to everyone", Reason.POLICY)
    return Decision(
        False,
        f"toolset {toolset} is granted only, and no grant allows it",
        Reason.POLICY,
    )


def explain_many(
    *, user_id: int, tools: Iterable[str], snapshot: Snapshot | None = None
) -> dict[str, Decision]:
    """The decision for each tool (by full name) for one user; as of `snapshot`
    when given (no cache read), else as of now."""
    if snapshot is None:
        current = versions()
        catalog: Mapping[str, CatalogTool] = _load_catalog(current).tools
    else:
        current, catalog = snapshot.versions, snapshot.tools
    access = _load_user(user_id, current, timezone.now())
    kept = access.decisions(current.catalog)
    decisions = {}
    for tool in tools:
        decision = kept.get(tool)
        if decision is None:
            decision = kept[tool] = _decide(tool, catalog.get(tool), access)
        decisions[tool] = decision
    return decisions


async def aexplain_many(
    *, user_id: int, tools: Collection[str], snapshot: Snapshot | None = None
) -> dict[str, Decision]:
    """See explain_many(). Warm, it answers on the event loop without a query."""
    if snapshot is None:
        snapshot = await asnapshot()
    if _is_warm(user_id, snapshot.versions, timezone.now()):
        return explain_many(user_id=user_id, tools=tools, snapshot=snapshot)
    return await sync_to_async(explain_many)(
        user_id=user_id, tools=tools, snapshot=snapshot
    )


async def acatalog_tool(full_name: str) -> CatalogTool | None:
    """The catalog's row for a tool, from the snapshot shared by every decision:
    warm, the versions' query only; any change to a Tool or Toolset row gives a
    new snapshot."""
    return (await asnapshot()).tools.get(full_name)


def explain(*, user_id: int, tool: str) -> Decision:
    """May this user use this tool (`<toolset>.<tool>`), and which rule decided."""
    return explain_many(user_id=user_id, tools=[tool])[tool]


async def aexplain(
    *, user_id: int, tool: str, snapshot: Snapshot | None = None
) -> Decision:
    """See explain()."""
    found = await aexplain_many(user_id=user_id, tools=[tool], snapshot=snapshot)
    return found[tool]


def is_allowed(*, user_id: int, tool: str) -> bool:
    """True when explain() allows."""
    return explain(user_id=user_id, tool=tool).allowed


def explain_toolset(*, user_id: int, toolset: Toolset) -> Decision:
    """The decision for the toolset as a whole: what its tools get without tool grants."""
    if toolset.missing:
        return Decision(
            False, f"toolset {toolset.name} is missing from code", Reason.MISSING
        )
    if not toolset.enabled:
        return Decision(False, f"toolset {toolset.name} is disabled", Reason.DISABLED)
    access = _load_user(user_id, versions(), timezone.now())
    grants = access.by_toolset.get(toolset.pk, [])
    return _by_grants(grants, toolset.name, toolset.default_policy)


@dataclass(frozen=True)
class ToolsetAccess:
    """One row of a user's access matrix: a toolset and each of its tools."""

    toolset: Toolset
    decision: Decision
    tools: list[tuple[str, Decision]]


def access_matrix(*, user_id: int) -> list[ToolsetAccess]:
    """Every toolset and tool of the catalog, decided for one user."""
    return access_matrices(user_ids=[user_id])[user_id]


def access_matrices(*, user_ids: Iterable[int]) -> dict[int, list[ToolsetAccess]]:
    """access_matrix() for several users at once: the catalog read once, the same
    decisions as one by one (explain_many, explain_toolset)."""
    toolsets = list(Toolset.objects.prefetch_related("tools").order_by("name"))
    return {
        user_id: _matrix(user_id=user_id, toolsets=toolsets) for user_id in user_ids
    }


def _matrix(*, user_id: int, toolsets: list[Toolset]) -> list[ToolsetAccess]:
    names = [tool.full_name for ts in toolsets for tool in ts.tools.all()]
    decisions = explain_many(user_id=user_id, tools=names)
    return [
        ToolsetAccess(
            toolset=ts,
            decision=explain_toolset(user_id=user_id, toolset=ts),
            tools=[(t.full_name, decisions[t.full_name]) for t in ts.tools.all()],
        )
        for ts in toolsets
    ]


def uncatalogued(*, tools: Iterable[str]) -> list[str]:
    """The tools (full names) the catalog has no row for."""
    catalog = _load_catalog(versions())
    return [tool for tool in tools if tool not in catalog.tools]


async def auncatalogued(*, tools: Collection[str]) -> list[str]:
    """See uncatalogued()."""
    catalog = (await asnapshot()).tools
    return [tool for tool in tools if tool not in catalog]
