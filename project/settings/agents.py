"""Agents, turns and their data: retention, models and providers, the demo and
registered agents, turn limits, artifacts and memory.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from project.settings.base import TOOLCRIB_DEMO, env, env_bool, env_list
from project.settings.realtime import CELERY_BROKER_URL

# Retention (docs/retention.md), in days: 0 keeps forever; past a hundred years
# dates overflow (agents.models' RETENTION_MAX_DAYS, the same bound).
RETENTION_MAX_DAYS = 36_500


def _retention_days(name: str, value: str) -> int:
    days = int(value)
    if not 0 <= days <= RETENTION_MAX_DAYS:
        raise ImproperlyConfigured(f"{name} must be 0 (keep forever) to 36500 days.")
    return days


# A session whose last activity is older than this is removed with everything in
# it (its events, runs, requests, files and state); an agent's own
# `retention_days` overrides it.
TOOLCRIB_RETENTION_DAYS = _retention_days(
    "TOOLCRIB_RETENTION_DAYS", env("TOOLCRIB_RETENTION_DAYS", "0")
)
# The audit's tool-call rows older than this many days; 0: kept forever. Apart
# from sessions', since an audit often must be kept for longer.
TOOLCRIB_RETENTION_AUDIT_DAYS = _retention_days(
    "TOOLCRIB_RETENTION_AUDIT_DAYS", env("TOOLCRIB_RETENTION_AUDIT_DAYS", "0")
)
# A folder each run of the job writes what it removes to (JSON Lines, gzipped),
# before removing it; empty: removed without an archive.
TOOLCRIB_RETENTION_ARCHIVE_DIR = env("TOOLCRIB_RETENTION_ARCHIVE_DIR")
# Rows removed per transaction, at most (a session larger than this is taken apart
# over several, closed first so no turn starts in it meanwhile).
TOOLCRIB_RETENTION_BATCH = int(env("TOOLCRIB_RETENTION_BATCH", "1000"))
# Seconds between two runs of the job: Celery beat's schedule with a broker, a
# thread of the server that runs turns inline without one; 0: only by hand
# (`manage.py retention`).
TOOLCRIB_RETENTION_SECONDS = float(env("TOOLCRIB_RETENTION_SECONDS", "3600"))
# What the job removes, in order: dotted paths to objects with `kind`, `plan()` and
# `remove()` (agents/retention/jobs.py's Job); the audit's from toolsets.
TOOLCRIB_RETENTION_JOBS: list[str] = [
    "agents.retention.sessions.SESSIONS",
    "agents.retention.sessions.GATEWAY_REQUESTS",
    "toolsets.retention.AUDIT",
]
if CELERY_BROKER_URL and TOOLCRIB_RETENTION_SECONDS > 0:
    # `celery -A project beat`, one process (docs/deployment.md).
    CELERY_BEAT_SCHEDULE = {
        "retention": {
            "task": "agents.apply_retention",
            "schedule": TOOLCRIB_RETENTION_SECONDS,
        }
    }

# Agents and models.
TOOLCRIB_DEFAULT_MODEL = env("TOOLCRIB_DEFAULT_MODEL", "offline/demo")
# Off: a model no grant names is open to everyone (a deny takes it away); on: a
# model needs an allow for the user or one of her groups (docs/models.md).
TOOLCRIB_MODELS_NEED_GRANT = env_bool("TOOLCRIB_MODELS_NEED_GRANT", False)
# Model providers' keys and base URLs, under the names each provider's own library
# reads (google-genai, LiteLLM). agents/adk/providers.py says which provider needs
# which, and passes them to the model explicitly; only the variables that are set.
MODEL_PROVIDER_VARIABLES = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GEMINI_API_BASE",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "OPENAI_API_KEY",
    "OPENAI_API_BASE",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_API_BASE",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_API_BASE",
    "OLLAMA_API_KEY",
    "AZURE_API_KEY",
    "AZURE_API_BASE",
    "AZURE_API_VERSION",
    "HOSTED_VLLM_API_BASE",
    "HOSTED_VLLM_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHERAI_API_KEY",
    "XAI_API_KEY",
)
TOOLCRIB_PROVIDER_ENV: dict[str, str] = {
    name: env(name).strip() for name in MODEL_PROVIDER_VARIABLES if env(name).strip()
}
# Seconds one model call may take, and how often a failed call is retried.
TOOLCRIB_MODEL_TIMEOUT = float(env("TOOLCRIB_MODEL_TIMEOUT", "120"))
TOOLCRIB_MODEL_RETRIES = int(env("TOOLCRIB_MODEL_RETRIES", "2"))
# The demo agents (demo/), registered when TOOLCRIB_DEMO is set.
DEMO_AGENTS = [
    "demo.weather.weather_sentiment",
    "demo.support.customer_support",
    "demo.preferences.preferences",
    "demo.calculator.calculator",
    "demo.documents.document_analyst",
    "demo.reimbursement.reimbursement",
    "demo.bank.bank",
    "demo.quotes.quotes",
    "demo.editor.editor_loop",
    "demo.headlines.headlines",
    "demo.summarizer.briefing",
    "demo.records.records",
    "demo.loader.loader",
    "demo.inventory.inventory",
]
TOOLCRIB_AGENTS = [
    *(DEMO_AGENTS if TOOLCRIB_DEMO else []),
    *env_list("TOOLCRIB_EXTRA_AGENTS"),
]
# Agent (AgentSpec name) -> the tool the first model call of each turn must call
# (docs/availability.md).
TOOLCRIB_FORCED_FIRST_TOOL: dict[str, str] = {"records": "get_record"}
# Agent (AgentSpec name) -> {toolset: condition}: a toolset the agent has only while
# a state key is truthy ({"state": "user:is_admin"}) or for members of a group
# ({"group": "billing"}), or both (toolsets/conditions.py, docs/availability.md).
TOOLCRIB_CONDITIONAL_TOOLSETS: dict[str, dict[str, dict[str, str]]] = {}

TOOLCRIB_TOOL_THREADS = int(env("TOOLCRIB_TOOL_THREADS", "4"))
TOOLCRIB_TURN_TIMEOUT = float(env("TOOLCRIB_TURN_TIMEOUT", "300"))
# Turns queued or running at once; a message past either cap is refused (429).
TOOLCRIB_MAX_QUEUED_TURNS_PER_SESSION = int(
    env("TOOLCRIB_MAX_QUEUED_TURNS_PER_SESSION", "5")
)
TOOLCRIB_MAX_QUEUED_TURNS_PER_USER = int(
    env("TOOLCRIB_MAX_QUEUED_TURNS_PER_USER", "20")
)
TOOLCRIB_WAIT_TIMEOUT = float(env("TOOLCRIB_WAIT_TIMEOUT", "120"))
# Stored ADK events kept parsed per process (agents/adk/parsed_events.py), so a
# turn does not parse its session's history again; 0 keeps none. About 5 KiB an
# event: 2,000 hold forty sessions' 50-event windows in about 10 MiB (10,000 took
# 50 MiB and 2,500 turns to fill, which read as a leak: issue 43).
TOOLCRIB_PARSED_EVENTS = int(env("TOOLCRIB_PARSED_EVENTS", "2000"))

TOOLCRIB_MAX_MESSAGE_CHARS = int(env("TOOLCRIB_MAX_MESSAGE_CHARS", "20000"))

# Arrays and objects nested in a request body or a frame (agents/inputs/rule.py); deeper
# is refused, as Python's JSON parser and every serializer after it recurse.
TOOLCRIB_MAX_JSON_DEPTH = int(env("TOOLCRIB_MAX_JSON_DEPTH", "64"))
if not 1 <= TOOLCRIB_MAX_JSON_DEPTH <= 200:
    # pydantic renders about 255 levels: deeper input would be stored, then unreadable.
    raise ImproperlyConfigured("TOOLCRIB_MAX_JSON_DEPTH must be between 1 and 200.")

# Artifacts, memory and long-running calls.
TOOLCRIB_MAX_UPLOAD_BYTES = int(env("TOOLCRIB_MAX_UPLOAD_BYTES", str(10 * 1024 * 1024)))
# PostgreSQL text search configuration for memory search ("english", "simple", ...).
TOOLCRIB_MEMORY_SEARCH_CONFIG = env("TOOLCRIB_MEMORY_SEARCH_CONFIG", "english")
TOOLCRIB_MEMORY_MAX_RESULTS = int(env("TOOLCRIB_MEMORY_MAX_RESULTS", "10"))

# The offline model and litellm must never reach the network for a price table.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", "true")
