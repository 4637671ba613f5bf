"""The turn recorder: a SpanProcessor that keeps the finished spans of the traces
turns have opened, in memory, until the turn pops them at its end.

Only a trace a turn opened is kept, at most `max_spans` spans of it: a span that
ends after its turn popped the trace (a straggling tool thread) is dropped, so
nothing outlives the turn, whether it succeeded, failed or was cancelled.
"""

import threading

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor


class TurnRecorder(SpanProcessor):
    """Finished spans per open trace id, bounded, popped by the turn."""

    def __init__(self, *, max_spans: int) -> None:
        self.max_spans = max_spans
        self._open: dict[int, list[ReadableSpan]] = {}
        self._lock = threading.Lock()

    def open(self, trace_id: int) -> None:
        """Start keeping the spans of `trace_id`."""
        with self._lock:
            self._open[trace_id] = []

    def pop(self, trace_id: int) -> list[ReadableSpan]:
        """The spans kept for `trace_id`, in the order they ended; forgets it."""
        with self._lock:
            return self._open.pop(trace_id, [])

    def is_open(self, trace_id: int) -> bool:
        return trace_id in self._open

    def __len__(self) -> int:
        """How many traces are open: turns running in this process."""
        return len(self._open)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        trace_id = span.context.trace_id
        with self._lock:
            spans = self._open.get(trace_id)
            if spans is not None and len(spans) < self.max_spans:
                spans.append(span)

    def shutdown(self) -> None:
        with self._lock:
            self._open.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
