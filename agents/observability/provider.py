"""The process's OpenTelemetry providers, installed once, on the first turn.

Built as ADK's own setup (google.adk.telemetry.setup) builds them, with one
difference: every span passes the redactor (agents.observability.redactor)
before any processor keeps or exports it. ADK's setup adds its OTLP exporter
beside the processors it is given, where it would see each span before any
redaction, so the providers are built here, from the SDK's public API: an SDK
TracerProvider whose one processor is the redactor, wrapping the turn recorder
and, when OpenTelemetry's standard variables name an endpoint
(OTEL_EXPORTER_OTLP_ENDPOINT, ..._TRACES_ENDPOINT), an OTLP/HTTP batch exporter;
with ..._METRICS_ENDPOINT or ..._LOGS_ENDPOINT too, ADK's GenAI metrics and log
events go out the same way, each log record redacted first.

With traces off and no endpoint nothing is installed, and every span stays
OpenTelemetry's no-op. A provider some other code installed first (an operator's
`opentelemetry-instrument`) is kept, and the recorder is added to it behind the
redactor; that provider's own exporters are the operator's (docs/observability.md).

Safe under a worker's threads: the first turn installs it under a lock while the
others wait, and the recorder is in place before any turn can read it installed;
an install that raised is tried again by the next turn
(tests/agents/observability/test_provider_threads.py).
"""

import logging
import threading

from django.conf import settings
from opentelemetry import _logs, metrics, trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
    OTLPMetricExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agents.observability.recorder import TurnRecorder
from agents.observability.redactor import RedactingLogProcessor, RedactingSpanProcessor

logger = logging.getLogger(__name__)

DEFAULT_SERVICE_NAME = "toolcrib"

_lock = threading.Lock()
_installed = False
_recorder: TurnRecorder | None = None


def turn_recorder() -> TurnRecorder | None:
    """The process's turn recorder, the provider installed on the first call;
    None when no SDK provider records this process's spans."""
    if not _installed:
        _install()
    return _recorder


def _install() -> None:
    global _installed, _recorder
    with _lock:
        if _installed:
            return
        if settings.TOOLCRIB_TRACES or settings.TOOLCRIB_OTLP_EXPORT:
            _recorder = _installed_recorder()
        # Said last, once the recorder is in place: a turn that reads it set (with
        # no lock) reads the recorder too. An install that raised says nothing.
        _installed = True


def _installed_recorder() -> TurnRecorder:
    recorder = TurnRecorder(max_spans=settings.TOOLCRIB_TRACE_MAX_SPANS)
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        current.add_span_processor(RedactingSpanProcessor([recorder]))
    else:
        _set_providers(recorder, resource())
    logger.info(
        "tracing installed traces=%s otlp=%s",
        settings.TOOLCRIB_TRACES,
        settings.TOOLCRIB_OTLP_EXPORT,
    )
    return recorder


def _set_providers(recorder: TurnRecorder, otel_resource: Resource) -> None:
    """Set the process's tracer provider, and the meter and logger providers an
    OTLP endpoint asks for (as ADK's setup does, which sets none already set)."""
    processors: list[SpanProcessor] = [recorder]
    if settings.TOOLCRIB_OTLP_EXPORT:
        processors.append(BatchSpanProcessor(OTLPSpanExporter()))
    tracer_provider = TracerProvider(resource=otel_resource)
    tracer_provider.add_span_processor(RedactingSpanProcessor(processors))
    trace.set_tracer_provider(tracer_provider)
    if settings.TOOLCRIB_OTLP_METRICS:
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
        metrics.set_meter_provider(
            # Not collected on exit, as ADK's: points too close together.
            MeterProvider(
                metric_readers=[reader], resource=otel_resource, shutdown_on_exit=False
            )
        )
    if settings.TOOLCRIB_OTLP_LOGS:
        logger_provider = LoggerProvider(resource=otel_resource)
        logger_provider.add_log_record_processor(RedactingLogProcessor())
        logger_provider.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter())
        )
        _logs.set_logger_provider(logger_provider)


def resource() -> Resource:
    """OpenTelemetry's resource from its variables (OTEL_SERVICE_NAME,
    OTEL_RESOURCE_ATTRIBUTES), named "toolcrib" unless they name it."""
    detected = Resource.create()
    name = str(detected.attributes.get(SERVICE_NAME, ""))
    if name and not name.startswith("unknown_service"):
        return detected
    return detected.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
