"""Toolcrib's Prometheus metrics: every instrument, defined once, and their exposition.

The runtime (agents) and governance (toolsets) both record here, so the instruments
live in the lowest layer. Recording is a prometheus_client increment or observation:
no query, no lock beyond the client's own. Labels are bounded: agent names are spec
names, tools catalog names, models configured model names; never a user or session.

With PROMETHEUS_MULTIPROC_DIR set (prometheus_client's own variable, read when it is
imported), each process writes its values to files there and any process's
exposition reads them all: for a web server or worker pool of several processes.
"""

from collections.abc import Iterable, Iterator

from django.conf import settings
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    start_http_server,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = CONTENT_TYPE_LATEST

# A turn waits for models and tools: seconds to minutes.
TURN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600)
MODEL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120)
TOOL_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

TURNS = Counter(
    "toolcrib_turns",
    "Turns ended, by agent and how they ended (succeeded, failed, waiting, cancelled).",
    ["agent", "status"],
)
TURN_DURATION = Histogram(
    "toolcrib_turn_duration_seconds",
    "A turn's time from its start to its end.",
    ["agent"],
    buckets=TURN_BUCKETS,
)
MODEL_CALL_DURATION = Histogram(
    "toolcrib_model_call_duration_seconds",
    "A model call's time, from the request to its last (non-partial) response.",
    ["model"],
    buckets=MODEL_BUCKETS,
)
TOOL_CALL_DURATION = Histogram(
    "toolcrib_tool_call_duration_seconds",
    "A tool call's time, for calls that ran (audit outcomes ok, error, timeout, "
    "cancelled).",
    ["tool"],
    buckets=TOOL_BUCKETS,
)
TOOL_CALLS = Counter(
    "toolcrib_tool_calls",
    "Governed tool calls, by tool and audit outcome (the ToolCall status).",
    ["tool", "outcome"],
)
TOOL_DENIALS = Counter(
    "toolcrib_tool_denials",
    "Tool calls denied by access (a grant or the default): audit outcome denied.",
    ["tool"],
)
TOKENS = Counter(
    "toolcrib_tokens",
    "Model tokens used by turns, by agent and direction (input, output).",
    ["agent", "direction"],
)
OPEN_SOCKETS = Gauge(
    "toolcrib_open_sockets",
    "Websockets open now, by stream (session, agent, firehose, inbox).",
    ["kind"],
    multiprocess_mode="livesum",
)
RUNS_RECOVERED = Counter(
    "toolcrib_runs_recovered",
    "Unfinished runs a dead process left, found by a sweep, by what became of them "
    "(failed_lost, requeued, failed_not_taken).",
    ["outcome"],
)
RETENTION_REMOVED = Counter(
    "toolcrib_retention_removed",
    "Rows the retention job removed, by kind (sessions, events, runs, tool calls, "
    "...; agents.retention).",
    ["kind"],
)
PUBLISH_FAILURES = Counter(
    "toolcrib_publish_failures",
    "Channel-layer publishes that failed (the event is stored; clients replay it).",
)
SSO_RECHECKS = Counter(
    "toolcrib_sso_rechecks",
    "Re-checks of a provider user against the sign-in provider, by outcome (current, "
    "offboarded, sign_in_again, unreachable).",
    ["outcome"],
)

# The audit outcomes of a call that ran, so its duration is the tool's.
RAN = frozenset({"ok", "error", "timeout", "cancelled"})
# The audit outcome counted as a denial (toolsets/audit.py's "denied by access").
DENIED = "denied"


def observe_turn(
    *, agent: str, status: str, seconds: float, input_tokens: int, output_tokens: int
) -> None:
    """Count one ended turn, its duration and its tokens."""
    TURNS.labels(agent, status).inc()
    TURN_DURATION.labels(agent).observe(seconds)
    if input_tokens:
        TOKENS.labels(agent, "input").inc(input_tokens)
    if output_tokens:
        TOKENS.labels(agent, "output").inc(output_tokens)


def observe_model_call(*, model: str, seconds: float) -> None:
    """Time one model call."""
    MODEL_CALL_DURATION.labels(model).observe(seconds)


def observe_tool_call(*, tool: str, outcome: str, seconds: float) -> None:
    """Count one audited tool call; its time if it ran, a denial if it was one."""
    TOOL_CALLS.labels(tool, outcome).inc()
    if outcome in RAN:
        TOOL_CALL_DURATION.labels(tool).observe(seconds)
    if outcome == DENIED:
        TOOL_DENIALS.labels(tool).inc()


def socket_opened(*, kind: str) -> None:
    OPEN_SOCKETS.labels(kind).inc()


def socket_closed(*, kind: str) -> None:
    OPEN_SOCKETS.labels(kind).dec()


def count_publish_failure() -> None:
    PUBLISH_FAILURES.inc()


def count_sso_recheck(*, outcome: str) -> None:
    SSO_RECHECKS.labels(outcome).inc()


class _Joined:
    """Several collectors read as one registry, for one exposition."""

    def __init__(self, collectors: Iterable[Collector]) -> None:
        self.collectors = list(collectors)

    def collect(self) -> Iterator[Metric]:
        for collector in self.collectors:
            yield from collector.collect()


def process_registry() -> Collector:
    """This process's metrics; with PROMETHEUS_MULTIPROC_DIR, every process's."""
    if not settings.PROMETHEUS_MULTIPROC_DIR:
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


def exposition(*, extra: Iterable[Collector] = ()) -> bytes:
    """The text exposition of the metrics, with `extra` collectors read now."""
    return generate_latest(_Joined([process_registry(), *extra]))


def serve_worker_metrics(*, port: int) -> None:
    """Serve this process's metrics over HTTP on `port` (a Celery worker's)."""
    start_http_server(port, registry=process_registry())


def mark_process_dead(*, pid: int) -> None:
    """Drop a finished pool process's live gauges (multiprocess mode only)."""
    if settings.PROMETHEUS_MULTIPROC_DIR:
        multiprocess.mark_process_dead(pid)
