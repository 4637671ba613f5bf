"""The runtime's retention jobs: old sessions, removed whole, and the gateway's
ended requests.

A session is as old as its last activity (`updated_at`, which every stored event
moves: a message, a turn's start and end, a tool's result, an upload), never its
start: one still in use is never cut. Past its agent's days (`AgentSpec.retention_days`, else
TOOLCRIB_RETENTION_DAYS; 0 keeps it forever) it goes whole: its events, runs and
their spans, requests, standing approvals, its own artifacts (rows and files) and
its state, which lives on its row. A session with a queued or running run, or a
pending request, is never removed, however old: it is in use. A user's `user:`
state, artifacts and memory are hers, not the session's, and stay.

Sessions go in batches of at most TOOLCRIB_RETENTION_BATCH rows (a session's
events counted by its `last_seq`), each batch one transaction that checks again,
under the sessions' row locks, that each is still removable. A session larger than
a batch is closed first (no turn starts in a closed session), then taken apart, a
batch of events (then spans, then runs) per transaction, oldest first, each
checking that it is still closed and removable, and removed with the rest last.
"""

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models import Count as Counted
from django.db.models import Exists, Min, Model, OuterRef, Q, QuerySet

from agents.adk.artifacts import artifact_storage, delete_files
from agents.models import (
    AgentSpec,
    Artifact,
    Event,
    Request,
    Run,
    RunSpan,
    Session,
    StandingApproval,
)
from agents.retention.jobs import Batch, Count, Scope

# What a session costs a batch beyond its events: its runs, requests, row.
SESSION_ROWS = 10
# Candidates read by one scan of the sessions, in batches' worth.
CANDIDATE_BATCHES = 20
# A large session's rows taken apart before the session itself: model, the field
# naming its session, the order.
TAKEN_APART: list[tuple[type[Model], str, tuple[str, ...]]] = [
    (Event, "session_id", ("seq",)),
    (RunSpan, "run__session_id", ("run_id", "start", "pk")),
    (Run, "session_id", ("created_at", "pk")),  # spans gone: nothing cascades
]
GATEWAY = "(gateway)"


def kind_of(model: type[Model]) -> str:
    """How a report names a model's rows: its plural ("events", "runs")."""
    return str(model._meta.verbose_name_plural)


def removable(*, agent: Q, cutoff: datetime) -> QuerySet[Session]:
    """Sessions of `agent` idle since before `cutoff`, with no queued or running
    run and no pending request."""
    unfinished = Run.objects.filter(
        session=OuterRef("pk"), status__in=[Run.Status.QUEUED, Run.Status.RUNNING]
    )
    pending = Request.objects.filter(
        session=OuterRef("pk"), status=Request.Status.PENDING
    )
    return Session.objects.filter(agent, updated_at__lt=cutoff).filter(
        ~Exists(unfinished), ~Exists(pending)
    )


class Group:
    """The sessions one retention period applies to: one agent's, or those with no
    agent row (TOOLCRIB_RETENTION_DAYS)."""

    def __init__(self, *, label: str, agent: Q, cutoff: datetime) -> None:
        self.label, self.agent, self.cutoff = label, agent, cutoff

    def sessions(self) -> QuerySet[Session]:
        return removable(agent=self.agent, cutoff=self.cutoff)


def groups(scope: Scope) -> list[Group]:
    """Each agent's sessions with its cutoff, for agents whose sessions expire."""
    default = settings.TOOLCRIB_RETENTION_DAYS
    specs = AgentSpec.objects.order_by("name").only("pk", "name", "retention_days")
    if scope.agent is not None:
        specs = specs.filter(name=scope.agent)
    found = []
    for spec in specs:
        days = default if spec.retention_days is None else spec.retention_days
        if days > 0:
            found.append(
                Group(
                    label=spec.name, agent=Q(agent=spec.pk), cutoff=scope.cutoff(days)
                )
            )
    if default > 0:
        rowless = Q(agent__isnull=True)
        if scope.agent is not None:
            rowless &= Q(app_name=scope.agent)
        found.append(Group(label="", agent=rowless, cutoff=scope.cutoff(default)))
    return found


class SessionsRetention:
    """Sessions past their agent's retention, each removed whole (see above)."""

    kind = kind_of(Session)

    def plan(self, *, scope: Scope) -> list[Count]:
        return [count for group in groups(scope) for count in _plan(group)]

    def remove(self, *, scope: Scope, batch: Batch) -> Iterator[list[Count]]:
        for group in groups(scope):
            yield from _remove_group(group, scope=scope, batch=batch)


def _plan(group: Group) -> list[Count]:
    sessions = group.sessions()
    found = sessions.aggregate(rows=Counted("pk"), oldest=Min("updated_at"))
    if not found["rows"]:
        return []
    label = group.label
    counts = [Count(kind_of(Session), label, found["rows"], found["oldest"])]
    ids = sessions.values("pk")
    for model, rows in [
        (Event, Event.objects.filter(session__in=ids)),
        (Run, Run.objects.filter(session__in=ids)),
        (RunSpan, RunSpan.objects.filter(run__session__in=ids)),
        (Request, Request.objects.filter(session__in=ids)),
    ]:
        counts.append(Count(kind_of(model), label, rows.count()))
    artifacts = Artifact.objects.filter(Exists(_owning(sessions)))
    counts.append(Count(kind_of(Artifact), label, artifacts.count()))
    return counts


def _owning(sessions: QuerySet[Session]) -> QuerySet[Session]:
    """Of `sessions`, the one an outer Artifact row belongs to (ADK's keys)."""
    return sessions.filter(
        app_name=OuterRef("app_name"),
        user_id=OuterRef("user_id"),
        adk_id=OuterRef("session_key"),
    )


def _remove_group(group: Group, *, scope: Scope, batch: Batch) -> Iterator[list[Count]]:
    """The group's removable sessions, oldest activity first: read a page of
    candidates in one scan, then removed batch by batch (each checked again)."""
    left_alone: set[str] = set()  # found in use again by their batch
    while True:
        candidates = list(
            group.sessions()
            .exclude(pk__in=left_alone)
            .order_by("updated_at", "pk")
            .values_list("pk", "last_seq")[: batch.size * CANDIDATE_BATCHES]
        )
        if not candidates:
            return
        while candidates:
            first, last_seq = candidates[0]
            if last_seq + SESSION_ROWS > batch.size:
                yield from _take_apart(first, group, scope=scope, batch=batch)
                ids = [first]
            else:
                ids = _filled(candidates, batch.size)
            candidates = candidates[len(ids) :]
            removed, counts = _remove_whole(ids, group, batch=batch)
            left_alone.update(set(ids) - removed)
            if counts:
                yield counts


def _filled(picked: Sequence[tuple[str, int]], size: int) -> list[str]:
    """The first sessions whose rows fit in one batch."""
    ids, rows = [], 0
    for pk, last_seq in picked:
        rows += last_seq + SESSION_ROWS
        if ids and rows > size:
            break
        ids.append(pk)
    return ids


def _remove_whole(
    ids: list[str], group: Group, *, batch: Batch
) -> tuple[set[str], list[Count]]:
    """Remove the sessions `ids` still removable, with all they hold: archived
    first, outside any transaction, then deleted in one, those unchanged since
    (a session that came back into use stays); the ids removed, and what went."""
    seen = {
        session.pk: session
        for session in group.sessions().filter(pk__in=ids).order_by("updated_at", "pk")
    }
    if not seen:
        return set(), []
    if batch.archive is not None:
        _archive_sessions(batch, list(seen.values()))
    with batch.transaction():
        _lock(list(seen))
        still = group.sessions().filter(pk__in=list(seen))
        sessions = [
            seen[pk]
            for pk, updated_at in still.values_list("pk", "updated_at")
            if updated_at == seen[pk].updated_at
        ]
        if not sessions:
            return set(), []
        artifacts = _artifacts_of(sessions)
        paths = [row.storage_path for row in artifacts if row.storage_path]
        Artifact.objects.filter(pk__in=[row.pk for row in artifacts]).delete()
        gone = [session.pk for session in sessions]
        _, deleted = Session.objects.filter(pk__in=gone).delete()
        transaction.on_commit(lambda: delete_files(paths))
    oldest = min(session.updated_at for session in sessions)
    counts = [Count(kind_of(Session), group.label, len(sessions), oldest)]
    counts += [
        Count(kind_of(Artifact), group.label, len(artifacts)),
        *(
            Count(_kind_of_label(label), group.label, rows)
            for label, rows in deleted.items()
            if label != Session._meta.label
        ),
    ]
    return set(gone), counts


def _archive_sessions(batch: Batch, sessions: list[Session]) -> None:
    """Everything the sessions hold, parents first, on the disk before any of it
    is deleted; artifact files copied beside."""
    ids = [session.pk for session in sessions]
    artifacts = _artifacts_of(sessions)
    paths = [row.storage_path for row in artifacts if row.storage_path]
    archive = batch.archive
    assert archive is not None
    archive.write(sessions)
    archive.write(Run.objects.filter(session__in=ids).order_by("session", "created_at"))
    archive.write(
        RunSpan.objects.filter(run__session__in=ids).order_by("run", "start", "pk")
    )
    archive.write(
        Request.objects.filter(session__in=ids).order_by("session", "created_at")
    )
    archive.write(StandingApproval.objects.filter(session__in=ids).order_by("pk"))
    archive.write(Event.objects.filter(session__in=ids).order_by("session", "seq"))
    archive.write(artifacts)
    archive.copy_files(storage=artifact_storage(), paths=paths)
    archive.flush()


def _artifacts_of(sessions: Iterable[Session]) -> list[Artifact]:
    """The sessions' own artifacts (not their users' `user:` ones), read by three
    IN lists (no OR per session: SQLite bounds an expression's depth), matched
    here on ADK's (app, user, session) key."""
    keys = {(s.app_name, s.user_id, s.adk_id) for s in sessions}
    app_names, users, ids = (sorted({key[i] for key in keys}) for i in range(3))
    found = Artifact.objects.filter(
        app_name__in=app_names, user_id__in=users, session_key__in=ids
    ).order_by("session_key", "filename", "version")
    return [
        row for row in found if (row.app_name, row.user_id, row.session_key) in keys
    ]


def _take_apart(
    pk: str, group: Group, *, scope: Scope, batch: Batch
) -> Iterator[list[Count]]:
    """Close a large session, then remove its events, spans and runs a batch at a
    time; stops if it is no longer removable."""
    with batch.transaction():
        _lock([pk])
        if not group.sessions().filter(pk=pk).exists():
            return
        Session.objects.filter(pk=pk, closed_at__isnull=True).update(
            closed_at=scope.now
        )
    for model, session_field, order in TAKEN_APART:
        rows = model.objects.filter(**{session_field: pk}).order_by(*order)
        while ids := batch.take(rows):
            with batch.transaction():
                _lock([pk])
                if not group.sessions().filter(pk=pk, closed_at__isnull=False).exists():
                    return
                model.objects.filter(pk__in=ids).delete()
            yield [Count(kind_of(model), group.label, len(ids))]


def _lock(ids: Sequence[str]) -> None:
    """Lock the sessions' rows for this transaction (a turn's start takes the same
    lock), before they are checked: on PostgreSQL a check in the locking statement
    itself would judge by what it saw before it waited (its subqueries are not
    read again), missing the run a turn's start had just committed."""
    rows = Session.objects.filter(pk__in=ids).order_by("pk").select_for_update()
    list(rows.values_list("pk", flat=True))


def _kind_of_label(label: str) -> str:
    return kind_of(apps.get_model(label))


class GatewayRequestsRetention:
    """The MCP gateway's approval requests (no session), answered or expired more
    than TOOLCRIB_RETENTION_DAYS ago; a pending one stays."""

    kind = kind_of(Request)

    def _rows(self, scope: Scope) -> QuerySet[Request] | None:
        days = settings.TOOLCRIB_RETENTION_DAYS
        if days <= 0 or scope.agent is not None:
            return None
        return Request.objects.filter(
            session__isnull=True, created_at__lt=scope.cutoff(days)
        ).exclude(status=Request.Status.PENDING)

    def plan(self, *, scope: Scope) -> list[Count]:
        rows = self._rows(scope)
        if rows is None:
            return []
        found = rows.aggregate(rows=Counted("pk"), oldest=Min("created_at"))
        return [Count(self.kind, GATEWAY, found["rows"], found["oldest"])]

    def remove(self, *, scope: Scope, batch: Batch) -> Iterator[list[Count]]:
        rows = self._rows(scope)
        if rows is None:
            return
        while ids := batch.take(rows.order_by("created_at", "pk")):
            with batch.transaction():
                gone, _ = Request.objects.filter(pk__in=ids).delete()
            yield [Count(self.kind, GATEWAY, gone)]


SESSIONS = SessionsRetention()
GATEWAY_REQUESTS = GatewayRequestsRetention()
