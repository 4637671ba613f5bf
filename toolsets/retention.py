"""The audit's retention job: tool-call rows older than TOOLCRIB_RETENTION_AUDIT_DAYS.

The audit has a period of its own, apart from sessions' (an audit must often be
kept for longer than the conversations it records), and one for every agent: a
team that keeps its audit for a year keeps every agent's. A call still held for a
person's decision (`awaiting_approval`) stays, however old. Named in
TOOLCRIB_RETENTION_JOBS; agents.retention.jobs runs it (docs/retention.md).
"""

from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count as Counted
from django.db.models import Min, QuerySet

from agents.runtime import Batch, Count, Scope
from toolsets.models import ToolCall


class AuditRetention:
    """Tool calls (the audit) started before the audit's retention, a batch at a
    time, oldest first."""

    kind = str(ToolCall._meta.verbose_name_plural)

    def _rows(self, scope: Scope) -> QuerySet[ToolCall] | None:
        days = settings.TOOLCRIB_RETENTION_AUDIT_DAYS
        if days <= 0:
            return None
        rows = ToolCall.objects.filter(started_at__lt=scope.cutoff(days)).exclude(
            status=ToolCall.Status.AWAITING_APPROVAL
        )
        if scope.agent is not None:
            rows = rows.filter(agent=scope.agent)
        return rows

    def plan(self, *, scope: Scope) -> list[Count]:
        rows = self._rows(scope)
        if rows is None:
            return []
        by_agent = (
            rows.order_by("agent")
            .values("agent")
            .annotate(rows=Counted("pk"), oldest=Min("started_at"))
        )
        return [
            Count(self.kind, found["agent"], found["rows"], found["oldest"])
            for found in by_agent
        ]

    def remove(self, *, scope: Scope, batch: Batch) -> Iterator[list[Count]]:
        rows = self._rows(scope)
        if rows is None:
            return
        while taken := _take(rows.order_by("started_at", "pk"), batch=batch):
            with batch.transaction():
                ToolCall.objects.filter(pk__in=[pk for pk, _, _ in taken]).delete()
            yield _by_agent(self.kind, taken)


def _take(rows: QuerySet[ToolCall], *, batch: Batch) -> list[tuple]:
    """A batch of calls as (pk, agent, started_at), archived first, outside any
    transaction (whole rows read only then); as Batch.take, with what the report
    counts by."""
    if batch.archive is None:
        return list(rows.values_list("pk", "agent", "started_at")[: batch.size])
    calls = list(rows[: batch.size])
    batch.archive.write(calls)
    batch.archive.flush()
    return [(call.pk, call.agent, call.started_at) for call in calls]


def _by_agent(kind: str, calls: list[tuple]) -> list[Count]:
    counts: dict[str, Count] = {}
    for _, agent, started_at in calls:  # oldest first: an agent's first is its oldest
        count = counts.setdefault(agent, Count(kind, agent, 0, started_at))
        count.rows += 1
    return list(counts.values())


AUDIT = AuditRetention()
