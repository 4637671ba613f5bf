"""Who may use which model: model grants decided, kept per version, and changed.

A grant allows or denies a model (as agents name it: `openai/gpt-4o-mini`,
`lab/llama3`) or every model of one connection or provider (`lab/*`) to a user
or a group, until an optional expiry. The rules are tool grants' (toolsets.access,
docs/permissions.md), a connection standing where a toolset does:

1. any live deny, on the user or one of her groups, for the model or its
   connection: no (a connection-wide deny is not punched through by an allow);
2. else any live allow on the same: yes;
3. else the default: yes, unless the model's connection is "granted only" (set
   on the Models page, as a toolset's policy is) or TOOLCRIB_MODELS_NEED_GRANT is
   set for every model.

The rule named is the most specific grant: the model before its connection, the
user before a group. An expired grant is as if it did not exist.

Every change (a grant saved or deleted, a user joining or leaving a group, a
connection's "granted only" switched: agents.connections) writes a
new stamp into the one ModelGrantsVersion row in its transaction. A reader keeps
the grants it loaded while the stamp is unchanged (one query a decision), and a
user's groups once per stamp (one query more, once), so a change holds from the
next model step of every running turn, in every process. Safe from many threads:
a snapshot's grants are immutable and the snapshot is swapped whole; a user's
groups are put in it whole, under the lock (tests/agents/test_model_grants_threads.py).
"""

import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.utils import timezone

from agents.models import ModelConnection, ModelGrant, ModelGrantsVersion
from project.errors import DomainError
from project.patches.prepared import Param, Prepared

VERSION_ROW = 1
EVERY_MODEL = "/*"


class ModelNotGranted(DomainError):
    """The user may not use the model: a grant denies it, or none allows it."""

    code = "MODEL_NOT_GRANTED"
    field = "model"


@dataclass(frozen=True)
class ModelDecision:
    """Whether a user may use a model, and the rule that says so, in words."""

    allowed: bool
    rule: str
    grant_id: int | None = None
    subject: str = ""

    def refusal(self, model: str) -> str:
        """What a refused user reads: the model, and the grant (or default) why."""
        return f"You may not use the model {model}: {self.rule}."


@dataclass(frozen=True)
class _GrantRow:
    id: int
    allow: bool
    model: str
    expires_at: datetime | None
    by_user: bool
    subject: str

    def matches(self, model: str) -> bool:
        if self.model.endswith(EVERY_MODEL):
            return model.startswith(self.model[:-1])
        return self.model == model

    def live(self, now: datetime) -> bool:
        return self.expires_at is None or self.expires_at > now

    @property
    def label(self) -> str:
        until = f" until {self.expires_at.isoformat()}" if self.expires_at else ""
        return f"grant #{self.id} ({self.subject} on {self.model}{until})"


@dataclass(frozen=True)
class _Snapshot:
    stamp: object
    by_user: dict[int, tuple[_GrantRow, ...]]
    by_group: dict[int, tuple[_GrantRow, ...]]
    # The connections whose models need an allow (ModelConnection.granted_only).
    granted_only: frozenset[str] = frozenset()
    # A user's group ids as of `stamp`, filled as users are first decided for.
    groups: dict[int, frozenset[int]] = field(default_factory=dict)


_UNLOADED = object()
_lock = threading.Lock()
_current = _Snapshot(stamp=_UNLOADED, by_user={}, by_group={})


# The version row's stamp, read before every model step of every turn: compiled
# once a process (project.patches.prepared), where the ORM built and compiled the
# query again on every read.
STAMP = Prepared(
    ModelGrantsVersion.objects.filter(
        pk=Param("pk", ModelGrantsVersion._meta.pk)
    ).values_list("stamp")
)


def read_stamp() -> uuid.UUID | None:
    """The version row's stamp; None before any change was made."""
    row = STAMP.first(pk=VERSION_ROW)
    return None if row is None else row[0]


def bump_version() -> None:
    """A new stamp, in the caller's transaction: every process reads grants again."""
    stamp = uuid.uuid4()
    if not ModelGrantsVersion.objects.filter(pk=VERSION_ROW).update(stamp=stamp):
        ModelGrantsVersion.objects.update_or_create(
            pk=VERSION_ROW, defaults={"stamp": stamp}
        )


def forget() -> None:
    """Drop the kept grants (tests that empty the tables)."""
    global _current
    with _lock:
        _current = _Snapshot(stamp=_UNLOADED, by_user={}, by_group={})


def _snapshot() -> _Snapshot:
    global _current
    stamp = read_stamp()
    kept = _current
    if kept.stamp == stamp:
        return kept
    with _lock:
        if _current.stamp == stamp:  # another thread loaded it meanwhile
            return _current
        _current = _load(stamp)
        return _current


def _load(stamp: object) -> _Snapshot:
    by_user: dict[int, list[_GrantRow]] = {}
    by_group: dict[int, list[_GrantRow]] = {}
    rows = ModelGrant.objects.values_list(
        "id",
        "effect",
        "model",
        "expires_at",
        "user_id",
        "user__username",
        "group_id",
        "group__name",
    )
    for gid, effect, model, expires_at, user_id, username, group_id, group in rows:
        row = _GrantRow(
            id=gid,
            allow=effect == ModelGrant.Effect.ALLOW,
            model=model,
            expires_at=expires_at,
            by_user=user_id is not None,
            subject=f"user {username}" if user_id is not None else f"group {group}",
        )
        if user_id is not None:
            by_user.setdefault(user_id, []).append(row)
        else:
            by_group.setdefault(group_id, []).append(row)
    return _Snapshot(
        stamp=stamp,
        by_user={k: tuple(v) for k, v in by_user.items()},
        by_group={k: tuple(v) for k, v in by_group.items()},
        granted_only=frozenset(
            ModelConnection.objects.filter(granted_only=True).values_list(
                "name", flat=True
            )
        ),
    )


def _groups_of(snapshot: _Snapshot, user_id: int) -> frozenset[int]:
    kept = snapshot.groups.get(user_id)
    if kept is not None:
        return kept
    if not snapshot.by_group:  # no group grants: her groups decide nothing
        return frozenset()
    ids = frozenset(Group.objects.filter(user__id=user_id).values_list("id", flat=True))
    with _lock:
        snapshot.groups[user_id] = ids
    return ids


def explain(*, user_id: int, model: str) -> ModelDecision:
    """Whether the user may use `model` now, and the rule (see the module's doc)."""
    snapshot = _snapshot()
    grants = list(snapshot.by_user.get(user_id, ()))
    for group_id in _groups_of(snapshot, user_id):
        grants += snapshot.by_group.get(group_id, ())
    connection = model.split("/", 1)[0] if "/" in model else ""
    return decide(
        grants=grants,
        model=model,
        granted_only=connection in snapshot.granted_only,
    )


async def aexplain(*, user_id: int, model: str) -> ModelDecision:
    """See explain()."""
    return await sync_to_async(explain)(user_id=user_id, model=model)


def decide(
    *, grants: Iterable[_GrantRow], model: str, granted_only: bool = False
) -> ModelDecision:
    """The decision of the live grants that match `model`, else the default:
    refused when its connection is `granted_only` or every model needs a grant."""
    now = timezone.now()
    live = sorted(
        (g for g in grants if g.matches(model) and g.live(now)),
        key=lambda g: (g.model.endswith(EVERY_MODEL), not g.by_user, g.id),
    )
    for grant in live:
        if not grant.allow:
            return ModelDecision(
                False, f"denied by {grant.label}", grant.id, grant.subject
            )
    if live:  # every live grant left is an allow
        first = live[0]
        return ModelDecision(True, f"allowed by {first.label}", first.id, first.subject)
    if granted_only:
        return ModelDecision(
            False,
            f"its connection {model.split('/', 1)[0]} is granted only, "
            "and no grant allows it to you or your groups",
        )
    if settings.TOOLCRIB_MODELS_NEED_GRANT:
        return ModelDecision(
            False,
            "models need a grant here, and no grant allows it to you or your groups",
        )
    return ModelDecision(True, "models are open to everyone unless a grant denies one")


def grant_model(
    *,
    model: str,
    effect: str,
    user=None,
    group: Group | None = None,
    expires_at: datetime | None = None,
    created_by=None,
) -> tuple[ModelGrant, bool]:
    """Allow or deny a model to a user or a group: one grant per subject and model,
    so granting again replaces the effect and the expiry. Returns the grant and
    whether it was created."""
    if (user is None) == (group is None):
        raise ValueError("a grant names exactly one of user and group")
    with transaction.atomic():
        grant = ModelGrant.objects.filter(user=user, group=group, model=model).first()
        created = grant is None
        if created:
            grant = ModelGrant(
                user=user, group=group, model=model, created_by=created_by
            )
        grant.effect, grant.expires_at = effect, expires_at
        grant.save()
        bump_version()
    return grant, created


def update_grant(*, grant: ModelGrant, changes: dict) -> ModelGrant:
    """Change a grant's subject, model, effect or expiry."""
    with transaction.atomic():
        for key, value in changes.items():
            setattr(grant, key, value)
        grant.save()
        bump_version()
    return grant


def revoke_grant(*, grant: ModelGrant) -> None:
    """Delete a grant: its subject falls back to the other rules."""
    with transaction.atomic():
        grant.delete()
        bump_version()


def _bump(**kwargs) -> None:
    bump_version()


def _membership_changed(sender, action, **kwargs) -> None:
    if action in {"post_add", "post_remove", "pre_clear"}:
        bump_version()


def connect() -> None:
    """Read grants again after a change that passed no service here: a grant saved
    by hand or deleted with its user or group, or a group membership changed
    (from AgentsConfig.ready)."""
    post_save.connect(_bump, sender=ModelGrant, dispatch_uid="model-grants-save")
    post_delete.connect(_bump, sender=ModelGrant, dispatch_uid="model-grants-delete")
    m2m_changed.connect(
        _membership_changed,
        sender=get_user_model().groups.through,
        dispatch_uid="model-grants-membership",
    )
