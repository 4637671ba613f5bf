"""What a running Toolcrib says about itself: the garbage collector's tuning,
per-run traces and OpenTelemetry export, Prometheus metrics, logging.
"""

import ipaddress
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from project.settings.base import env, env_bool, env_list

# The cyclic garbage collector of a server process (project/garbage.py): its
# thresholds per generation, as gc.set_threshold() takes them ("" or "python":
# Python's own, 700,10,10), and whether what start-up loaded is frozen out of every
# collection (gc.freeze()).
TOOLCRIB_GC_THRESHOLDS = env("TOOLCRIB_GC_THRESHOLDS", "20000,20,10").strip()
if TOOLCRIB_GC_THRESHOLDS.lower() in {"", "python"}:
    TOOLCRIB_GC_THRESHOLDS = None
else:
    try:
        TOOLCRIB_GC_THRESHOLDS = tuple(
            int(part) for part in TOOLCRIB_GC_THRESHOLDS.split(",")
        )
    except ValueError:
        TOOLCRIB_GC_THRESHOLDS = ()
    if not 1 <= len(TOOLCRIB_GC_THRESHOLDS) <= 3 or min(TOOLCRIB_GC_THRESHOLDS) < 0:
        raise ImproperlyConfigured(
            "TOOLCRIB_GC_THRESHOLDS must be one to three whole numbers of 0 or more,"
            " separated by commas (as gc.set_threshold takes them), or 'python'."
        )
TOOLCRIB_GC_FREEZE = env_bool("TOOLCRIB_GC_FREEZE", True)
# Per-run traces (agents/observability, docs/observability.md): each turn's
# OpenTelemetry spans kept as RunSpan rows for GET /api/runs/{id}/trace/. On unless
# "0"/"off"; off, no SDK tracer is installed unless an OTLP endpoint is set.
TOOLCRIB_TRACES = env("TOOLCRIB_TRACES", "1").strip().lower() not in {
    "0",
    "off",
    "false",
    "no",
}
# The spans one turn keeps at most (a long loop stops recording past it).
TOOLCRIB_TRACE_MAX_SPANS = int(env("TOOLCRIB_TRACE_MAX_SPANS", "2000"))
# OpenTelemetry's own variables: set, every span is exported over OTLP/HTTP, each
# redacted first (agents/observability/provider.py); the endpoint for all signals
# also exports ADK's GenAI metrics and log events.
TOOLCRIB_OTLP_EXPORT = bool(
    env("OTEL_EXPORTER_OTLP_ENDPOINT") or env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
)
TOOLCRIB_OTLP_METRICS = bool(
    env("OTEL_EXPORTER_OTLP_ENDPOINT") or env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
)
TOOLCRIB_OTLP_LOGS = bool(
    env("OTEL_EXPORTER_OTLP_ENDPOINT") or env("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
)

# Prometheus (project/metrics.py, agents/metrics.py, docs/observability.md): /metrics
# answers a staff user's token or session, or a client address in
# TOOLCRIB_METRICS_ALLOW (comma-separated IPs or CIDRs; REMOTE_ADDR only, never a
# forwarded header). A Celery worker serves its own on TOOLCRIB_WORKER_METRICS_PORT;
# PROMETHEUS_MULTIPROC_DIR (prometheus_client's own variable) joins the metrics of
# several processes, and must be an existing, writable directory.
try:
    TOOLCRIB_METRICS_ALLOW = [
        ipaddress.ip_network(item, strict=False)
        for item in env_list("TOOLCRIB_METRICS_ALLOW")
    ]
except ValueError as exc:
    raise ImproperlyConfigured(f"TOOLCRIB_METRICS_ALLOW: {exc}") from exc
TOOLCRIB_WORKER_METRICS_PORT = int(env("TOOLCRIB_WORKER_METRICS_PORT", "0"))
PROMETHEUS_MULTIPROC_DIR = env("PROMETHEUS_MULTIPROC_DIR")
if PROMETHEUS_MULTIPROC_DIR and not Path(PROMETHEUS_MULTIPROC_DIR).is_dir():
    raise ImproperlyConfigured("PROMETHEUS_MULTIPROC_DIR must be a directory.")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # No secret reaches a log: every record is redacted as it is made, whatever
    # handler writes it (agents.redaction.install_log_redaction, agents.apps).
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {
        "google_adk": {"level": env("ADK_LOG_LEVEL", "WARNING")},
        "httpx": {"level": "WARNING"},
        # LiteLLM logs every completion call at INFO.
        "LiteLLM": {"level": env("LITELLM_LOG_LEVEL", "WARNING")},
    },
}
