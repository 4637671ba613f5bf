"""Toolcrib's own spans of a turn, and a turn's spans kept as RunSpan rows.

`TurnTrace` is the root `toolcrib.turn` span: ADK's spans (invoke_agent,
generate_content, execute_tool), governance's and the event spans nest under it
through OpenTelemetry's context. The turn recorder keeps them while the turn runs;
`TurnTrace.asave` writes them in one INSERT when it ends, whatever the ending
(`store_spans`: the rows' values, without a model instance each).
"""

import contextlib
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import Span, Status, StatusCode

from agents.models import Run, RunSpan
from agents.observability.provider import turn_recorder
from agents.redaction import redact_secrets
from project.patches.rows import Insert

logger = logging.getLogger(__name__)

tracer = trace.get_tracer("toolcrib")

TURN = "toolcrib.turn"
STORE = "toolcrib.event.store"
PUBLISH = "toolcrib.event.publish"
GOVERNANCE = "toolcrib.governance"
EXECUTE = "toolcrib.tool.execute"

# ADK's span names (google/adk/telemetry: tracing.py, _instrumentation.py) and
# the GenAI semconv operation each records, to the trace API's kinds.
OPERATION_KINDS = {
    "invoke_agent": RunSpan.Kind.AGENT,
    "invoke_workflow": RunSpan.Kind.AGENT,
    "invoke_node": RunSpan.Kind.AGENT,
    "generate_content": RunSpan.Kind.MODEL,
    "chat": RunSpan.Kind.MODEL,
    "text_completion": RunSpan.Kind.MODEL,
    "execute_tool": RunSpan.Kind.TOOL,
}
NAME_KINDS = {
    TURN: RunSpan.Kind.TURN,
    STORE: RunSpan.Kind.STORE,
    PUBLISH: RunSpan.Kind.PUBLISH,
    GOVERNANCE: RunSpan.Kind.GOVERNANCE,
    EXECUTE: RunSpan.Kind.EXECUTE,
    "call_llm": RunSpan.Kind.MODEL,
    "invocation": RunSpan.Kind.AGENT,
    "toolcrib.model.step": RunSpan.Kind.MODEL,
}


class TurnTrace:
    """A turn's root span, and the spans the recorder keeps of its trace."""

    def __init__(self, run: Run) -> None:
        self.run = run
        recorder = turn_recorder()  # installs the process's provider, once
        self.recorder = recorder if settings.TOOLCRIB_TRACES else None
        # A root: one trace per turn, whatever context started the turn.
        self.span: Span = tracer.start_span(
            TURN, context=Context(), attributes=turn_attributes(run)
        )
        self.trace_id = self.span.get_span_context().trace_id
        self.spans: list[ReadableSpan] = []
        self.ended = self.saved = False
        if self.recorder is not None and self.span.is_recording():
            self.recorder.open(self.trace_id)

    @contextlib.contextmanager
    def active(self) -> Iterator[Span]:
        """The turn span as the current one; ended on the way out."""
        try:
            with trace.use_span(self.span, end_on_exit=False):
                yield self.span
        finally:
            self.end()

    def end(self) -> None:
        """End the turn span and take its spans from the recorder (once); save()
        then stores them, before the Run's end is recorded (drive.py), so a trace
        read on run_finished is whole."""
        if self.ended:
            return
        self.ended = True
        self.span.set_attribute("toolcrib.run.status", self.run.status)
        if self.run.status == Run.Status.FAILED:
            self.span.set_status(Status(StatusCode.ERROR))
        self.span.end()
        # Popped here, with no await between: a turn cancelled on its way out
        # still leaves nothing open in the recorder.
        if self.recorder is not None:
            self.spans = self.recorder.pop(self.trace_id)

    async def asave(self) -> None:
        """See save()."""
        if not self.saved:
            await sync_to_async(self.save)()

    def save(self) -> None:
        """Store the turn's spans as RunSpan rows, in one INSERT, once; none
        kept, none written (traces off, or no SDK provider)."""
        if self.saved:
            return
        self.saved = True
        if self.spans:
            store_spans(self.run.pk, self.spans)


def turn_attributes(run: Run) -> dict[str, str]:
    """What the turn span says of the turn: its session, run, user and agent."""
    return {
        "toolcrib.session_id": str(run.session_id),
        "toolcrib.run_id": str(run.id),
        "toolcrib.user": run.user.get_username(),
        "toolcrib.agent": run.session.agent.name,
    }


# A workflow node's output on its event's store span: cut to this many characters.
NODE_OUTPUT_CHARS = 2000


def storing(
    event_id: str, *, node_path: str | None = None, output: Any = None
) -> contextlib.AbstractContextManager[Span]:
    """The span of storing one event; a workflow node's event (ADK 2.x) names its
    node path, and its output (redacted, as JSON, cut short), so the trace view
    shows what each node gave beside the node's own span."""
    attributes: dict[str, Any] = {"toolcrib.event_id": event_id}
    if node_path:
        attributes["toolcrib.node.path"] = node_path
    if output is not None:
        text = json.dumps(redact_secrets(output), default=str)
        attributes["toolcrib.node.output"] = text[:NODE_OUTPUT_CHARS]
    return tracer.start_as_current_span(STORE, attributes=attributes)


def publishing(
    *, seq: int | None, partial: bool
) -> contextlib.AbstractContextManager[Span | None]:
    """The span of publishing one stored event's frame; none for a partial one
    (a streamed answer's every chunk would bury the trace)."""
    if partial:
        return contextlib.nullcontext()
    attributes = {} if seq is None else {"toolcrib.event.seq": seq}
    return tracer.start_as_current_span(PUBLISH, attributes=attributes)


# A span's row, in the order _values_of gives them.
SPAN_ROWS = Insert(
    RunSpan,
    [
        "run",
        "span_id",
        "parent_id",
        "name",
        "kind",
        "start",
        "duration_ms",
        "status",
        "attributes",
    ],
)


def store_spans(run_id: Any, spans: Sequence[ReadableSpan]) -> None:
    """Store a turn's finished spans as its RunSpan rows, attributes redacted: one
    INSERT (a few, in one transaction, past the backend's batch size).

    The recorder is handed spans already redacted (agents.observability.redactor,
    which also masks the turn's secret values); the rule applies again here, so
    no row rests with a secret field whatever recorded it."""
    SPAN_ROWS.rows([_values_of(run_id, span) for span in spans])


def _values_of(run_id: Any, span: ReadableSpan) -> tuple[Any, ...]:
    attributes = _json_attributes(span.attributes or {})
    start, end = span.start_time or 0, span.end_time or span.start_time or 0
    return (
        run_id,
        format(span.context.span_id, "016x"),
        format(span.parent.span_id, "016x") if span.parent else "",
        span.name[:200],
        kind_of(span.name, attributes),
        datetime.fromtimestamp(start / 1e9, tz=UTC),
        (end - start) / 1e6,
        (
            RunSpan.Status.ERROR.value
            if span.status.status_code == StatusCode.ERROR
            else RunSpan.Status.OK.value
        ),
        redact_secrets(attributes),
    )


def kind_of(name: str, attributes: Mapping[str, Any]) -> str:
    """The trace API's kind of a span, from its name or GenAI operation."""
    if name in NAME_KINDS:
        return NAME_KINDS[name]
    operation = attributes.get("gen_ai.operation.name")
    if operation in OPERATION_KINDS:
        return OPERATION_KINDS[operation]
    first = name.split(" ", 1)[0]
    if first in OPERATION_KINDS:
        return OPERATION_KINDS[first]
    if name.startswith("toolcrib.governance"):
        return RunSpan.Kind.GOVERNANCE
    if name.startswith("toolcrib.tool"):
        return RunSpan.Kind.EXECUTE
    return RunSpan.Kind.OTHER


def _json_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in attributes.items()
    }
