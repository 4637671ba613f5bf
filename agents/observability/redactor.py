"""Spans and log records without secrets, before anything keeps or exports them.

An SDK span is read-only once it ends, and the tracer provider hands every span
processor that same object: a processor cannot redact it for the ones after it.
So RedactingSpanProcessor wraps the processors that keep or export spans (the
turn recorder, the OTLP batch exporter: agents.observability.provider) and hands
them a copy whose attributes, and its events' attributes, went through
agents.redaction.redact_outgoing(): every secret field at any depth (JSON texts
included: ADK's `gcp.vertex.agent.llm_request`, `tool_call_args`, ...), and the
running turn's secret values in every text (noted by agents.adk.secret_values:
the state ADK rendered into an instruction). The copy is made in the thread that
ends the span, in the turn's context, before any batch leaves.

A log record stays writable while processors see it: RedactingLogProcessor,
first of the logger provider's processors, redacts ADK's GenAI log events (their
body and attributes) in place before the OTLP batch processor after it.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk._logs import LogRecordProcessor, ReadWriteLogRecord
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor

from agents.redaction import redact_outgoing


class RedactingSpanProcessor(SpanProcessor):
    """Hands the processors it wraps each ended span with its secrets redacted."""

    def __init__(self, processors: Sequence[SpanProcessor]) -> None:
        self.processors = tuple(processors)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        for processor in self.processors:
            processor.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        shown = redacted_span(span)
        for processor in self.processors:
            processor.on_end(shown)

    def shutdown(self) -> None:
        for processor in self.processors:
            processor.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        flushed = [p.force_flush(timeout_millis) for p in self.processors]
        return all(flushed)


def redacted_span(span: ReadableSpan) -> ReadableSpan:
    """The span itself if nothing in it is secret, else a copy without secrets."""
    attributes = _attributes(span.attributes)
    events = [_redacted_event(event) for event in span.events]
    if attributes is None and all(
        shown is event for shown, event in zip(events, span.events, strict=True)
    ):
        return span
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=span.attributes if attributes is None else attributes,
        events=events,
        links=span.links,
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def _redacted_event(event: Event) -> Event:
    attributes = _attributes(event.attributes)
    if attributes is None:
        return event
    return Event(event.name, attributes=attributes, timestamp=event.timestamp)


def _attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The attributes redacted; None if redacting changes nothing."""
    if not attributes:
        return None
    given = {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in attributes.items()
    }
    shown = redact_outgoing(given)
    return None if shown == given else shown


class RedactingLogProcessor(LogRecordProcessor):
    """Redacts each log record in place, for the processors registered after it."""

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        record = log_record.log_record
        if record.body is not None:
            record.body = redact_outgoing(record.body)
        attributes = _attributes(record.attributes)
        if attributes is not None:
            record.attributes = attributes

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
