"""A run's trace for the API: its stored spans nested (parents before children,
each named for the ADK agent it belongs to) and the waits for a person its
requests made, created to decided or expired."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel

from agents.models import Request, Run, RunSpan
from agents.redaction import redact_secrets

AGENT_ATTRIBUTE = "gen_ai.agent.name"
# A request's end is its answer; one not answered yet waits on.
ENDED_BADLY = (Request.Status.EXPIRED, Request.Status.REJECTED)


@dataclass
class Node:
    """One span of the trace, as read, before it is rendered."""

    id: str
    parent: str
    name: str
    kind: str
    start: datetime
    duration_ms: float
    status: str
    attributes: dict[str, Any]
    children: list["Node"] = field(default_factory=list)


class TraceTokens(BaseModel):
    input: int
    output: int
    total: int


class TraceRun(BaseModel):
    """The run a trace is of."""

    id: str
    session: str
    agent: str
    status: str
    model: str
    started_at: datetime | None
    finished_at: datetime | None
    duration_ms: float | None
    tokens: TraceTokens
    model_calls: int
    tool_calls: int


class TraceSpan(BaseModel):
    """One span: parents come before their children."""

    id: str
    parent: str | None
    name: str
    kind: str  # turn, agent, model, tool, governance, execute, store, publish, wait, other
    agent: str | None  # the ADK agent it belongs to: its own or its ancestor's
    start: datetime
    offset_ms: float  # from the turn span's start
    duration_ms: float
    status: Literal["ok", "error"]
    attributes: dict[str, Any]


class Trace(BaseModel):
    """`GET /api/runs/{id}/trace/`: the run and its spans, sorted by start."""

    run: TraceRun
    spans: list[TraceSpan]
    traces: Literal["off"] | None = None  # present when traces were not recorded


def run_trace(run: Run) -> dict[str, Any]:
    """The run and its spans, as `GET /api/runs/{id}/trace/` answers."""
    nodes = [_node_of(span) for span in run.spans.order_by("start", "id")]
    if not nodes and not settings.TOOLCRIB_TRACES:
        return Trace(run=run_summary(run), spans=[], traces="off").model_dump(
            mode="json"
        )
    turn = next((node for node in nodes if node.kind == RunSpan.Kind.TURN), None)
    nodes += _waits(run, parent=turn.id if turn else "")
    ordered = _nested(nodes)
    origin = turn.start if turn else (ordered[0][0].start if ordered else None)
    trace = Trace(
        run=run_summary(run),
        spans=[_rendered(node, agent, origin) for node, agent in ordered],
    )
    return trace.model_dump(mode="json", exclude={"traces"})


def run_summary(run: Run) -> TraceRun:
    """The run, as the trace's head."""
    return TraceRun(
        id=str(run.id),
        session=run.session_id,
        agent=run.session.agent.name,
        status=run.status,
        model=run.model,
        started_at=run.started_at,
        finished_at=run.finished_at,
        duration_ms=_duration_ms(run.started_at, run.finished_at),
        tokens=TraceTokens(
            input=run.prompt_tokens,
            output=run.completion_tokens,
            total=run.total_tokens,
        ),
        model_calls=run.model_calls,
        tool_calls=run.tool_calls,
    )


def _node_of(span: RunSpan) -> Node:
    return Node(
        id=span.span_id,
        parent=span.parent_id,
        name=span.name,
        kind=span.kind,
        start=span.start,
        duration_ms=span.duration_ms,
        status=span.status,
        # Stored redacted; read through the rule again, as events are, for a row
        # stored before the rule reached it.
        attributes=redact_secrets(span.attributes),
    )


def _waits(run: Run, *, parent: str) -> list[Node]:
    """A span per request of the run: waiting for a person, from the request to
    its answer or expiry (to now while it is pending)."""
    requests = Request.objects.filter(run=run).order_by("created_at", "pk")
    return [_wait_of(request, parent=parent) for request in requests]


def _wait_of(request: Request, *, parent: str) -> Node:
    end = request.answered_at or timezone.now()
    return Node(
        id=f"wait-{request.pk}",
        parent=parent,
        name=f"wait {request.kind} {request.tool_name}".strip(),
        kind=RunSpan.Kind.WAIT,
        start=request.created_at,
        duration_ms=_duration_ms(request.created_at, end) or 0.0,
        status="error" if request.status in ENDED_BADLY else "ok",
        attributes={
            "toolcrib.request.kind": request.kind,
            "toolcrib.request.status": request.status,
            "gen_ai.tool.name": request.tool_name,
            AGENT_ATTRIBUTE: request.agent,
        },
    )


def _nested(nodes: Sequence[Node]) -> list[tuple[Node, str | None]]:
    """Nodes by start, a parent before its children when they start together;
    each with its agent: its own gen_ai.agent.name, else its nearest ancestor's."""
    by_id = {node.id: node for node in nodes}
    children: dict[str, list[Node]] = defaultdict(list)
    roots: list[Node] = []
    for node in nodes:
        if node.parent and node.parent in by_id:
            children[node.parent].append(node)
        else:
            roots.append(node)
    placed: list[tuple[datetime, int, int, Node, str | None]] = []
    stack = [(node, None, 0) for node in roots]
    while stack:
        node, inherited, depth = stack.pop()
        agent = node.attributes.get(AGENT_ATTRIBUTE) or inherited
        placed.append((node.start, depth, len(placed), node, agent))
        stack.extend((child, agent, depth + 1) for child in children[node.id])
    placed.sort(key=lambda item: item[:3])
    return [(node, agent) for *_, node, agent in placed]


def _rendered(node: Node, agent: str | None, origin: datetime | None) -> TraceSpan:
    return TraceSpan(
        id=node.id,
        parent=node.parent or None,
        name=node.name,
        kind=node.kind,
        agent=agent,
        start=node.start,
        offset_ms=_duration_ms(origin, node.start) or 0.0,
        duration_ms=node.duration_ms,
        status=node.status,
        attributes=node.attributes,
    )


def _duration_ms(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start).total_seconds() * 1000, 3)
