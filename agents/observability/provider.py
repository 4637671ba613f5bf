"""The process's OpenTelemetry tracer provider, installed once, on the first turn.

ADK's own setup (google.adk.telemetry.setup) builds it: an SDK TracerProvider with
the turn recorder, plus an OTLP/HTTP exporter when OpenTelemetry's standard
variables name an endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, ..._TRACES_ENDPOINT).
With traces off and no endpoint nothing is installed, and every span stays
OpenTelemetry's no-op. A provider some other code installed first (an operator's
`opentelemetry-instrument`) is kept, and the recorder is added to it.
"""

import logging
import threading

from django.conf import settings
from google.adk.telemetry.setup import OTelHooks, maybe_set_otel_providers
from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider

from agents.observability.recorder import TurnRecorder

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
        _installed = True
        if not (settings.TOOLCRIB_TRACES or settings.TOOLCRIB_OTLP_EXPORT):
            return
        recorder = TurnRecorder(max_spans=settings.TOOLCRIB_TRACE_MAX_SPANS)
        current = trace.get_tracer_provider()
        if isinstance(current, TracerProvider):
            current.add_span_processor(recorder)
        else:
            maybe_set_otel_providers(
                [OTelHooks(span_processors=[recorder])], otel_resource=resource()
            )
        _recorder = recorder
        logger.info(
            "tracing installed traces=%s otlp=%s",
            settings.TOOLCRIB_TRACES,
            settings.TOOLCRIB_OTLP_EXPORT,
        )


def resource() -> Resource:
    """OpenTelemetry's resource from its variables (OTEL_SERVICE_NAME,
    OTEL_RESOURCE_ATTRIBUTES), named "toolcrib" unless they name it."""
    detected = Resource.create()
    name = str(detected.attributes.get(SERVICE_NAME, ""))
    if name and not name.startswith("unknown_service"):
        return detected
    return detected.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
