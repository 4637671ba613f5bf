"""Toolcrib settings: every value comes from the environment, with an embedded default.

The README lists every variable. Nothing else in the code base reads os.environ.
"""

import ipaddress
import json
import os
import tempfile
import warnings
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


DATA_DIR = Path(env("TOOLCRIB_DATA_DIR", str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)

_DEV_SECRET = "toolcrib-development-secret-key-change-me-in-production-0123456789"
SECRET_KEY = env("SECRET_KEY", _DEV_SECRET)
DEBUG = env_bool("DEBUG", False)
if SECRET_KEY == _DEV_SECRET and not env_bool("CI") and not DEBUG:
    warnings.warn(
        "SECRET_KEY is not set: using the development key. Set SECRET_KEY in production.",
        stacklevel=1,
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # API tokens stored as digests (agents/tokens.py); DRF's authtoken kept them
    # in clear (agents/migrations/0005_token_digests.py moved them).
    "knox",
    # Failed sign-ins counted per account and address (project/lockout.py).
    "axes",
    "drf_spectacular",
    "channels",
    "agents",
    "toolsets",
    "frontend",
]
# The demo agents and users (demo/, `manage.py demo_setup`): `make run` and the
# tests set it; a production deployment leaves it unset.
TOOLCRIB_DEMO = env_bool("TOOLCRIB_DEMO", False)
if TOOLCRIB_DEMO:
    INSTALLED_APPS.append("demo")

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # An API query string with a NUL is a 400 before any view reads it.
    "agents.params.QueryTextMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A signed-in session whose account a check refuses (TOOLCRIB_ACCOUNT_CHECKS:
    # the sign-in provider let her go) ends before any view runs.
    "agents.account_checks.AccountCheckMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: turns a sign-in form's locked-out attempt into a 429 (project/lockout.py).
    "axes.middleware.AxesMiddleware",
]
# Axes first: it refuses a locked-out account or address before any password check.
# Then passwords, unless TOOLCRIB_PASSWORD_LOGIN is off (below: a session signed in
# with a password then ends too), and the provider's sign-in, idle unless
# TOOLCRIB_OIDC_ISSUER is set (toolsets/sso/).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesBackend",
    "django.contrib.auth.backends.ModelBackend",
    "toolsets.sso.backend.ProviderBackend",
]

# Database sessions refusing a forged cookie before any query (project/session_store.py)
SESSION_ENGINE = "project.session_store"

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "project.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: SQLite file by default, anything dj-database-url understands otherwise.
DATABASE_URL = env("DATABASE_URL", f"sqlite:///{DATA_DIR / 'toolcrib.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
# SQLite: seconds between the WAL checkpoints a thread of each process runs (0:
# SQLite's own, in whichever commit takes the log past 1,000 pages).
TOOLCRIB_SQLITE_CHECKPOINT_SECONDS = float(
    env("TOOLCRIB_SQLITE_CHECKPOINT_SECONDS", "0.2")
)
# With that thread, a connection's own commit checkpoints only past this many
# pages of log (40 MB), should the thread fall behind; SQLite's default is 1,000.
SQLITE_LOG_BOUND_PAGES = 10_000
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE transactions take the write lock up front, so concurrent turns queue
    # on the lock instead of failing to upgrade a read lock ("database is locked").
    # Write-ahead logging: readers never wait for the writer, and a commit appends
    # to the log instead of rewriting a rollback journal; NORMAL syncs at
    # checkpoints, not every commit (a power cut may lose the last commits, never
    # corrupt the file). SQLite's own advice for an application database.
    # Connections kept open and lent again, as PostgreSQL's pool does below.
    DATABASES["default"]["ENGINE"] = "project.sqlite_pool"
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        # WAL itself is set once, after migrate (project/sqlite.py). Its
        # checkpoints run on a thread of their own, a connection's commit running
        # one only past a bound (project/sqlite_pool/checkpoints.py).
        "init_command": "PRAGMA synchronous=NORMAL;"
        + (
            f" PRAGMA wal_autocheckpoint={SQLITE_LOG_BOUND_PAGES};"
            if TOOLCRIB_SQLITE_CHECKPOINT_SECONDS > 0
            else ""
        ),
    }
    # A file (not :memory:) so turn threads share it; one per process so parallel
    # test runs on one machine never share a database.
    DATABASES["default"]["TEST"] = {
        "NAME": str(DATA_DIR / f"test-{os.getpid()}.sqlite3")
    }
else:
    # pytest-django's test database, one per process: parallel runs on one server
    # never share (or drop) each other's.
    DATABASES["default"]["TEST"] = {
        "NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A pool of connections per process (psycopg_pool): a request, a socket's call
    # or a turn borrows one and gives it back when Django closes it, instead of
    # opening a new PostgreSQL backend each time (conn_max_age stays 0).
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": int(env("TOOLCRIB_DB_POOL_SIZE", "20")),
        "timeout": 30,
    }
    # Parameters sent apart from the statement (PostgreSQL binds them), not quoted
    # into its text by psycopg in Python; and a statement run twice on a connection
    # is prepared there, parsed and planned once. A turn runs the same ~20
    # statements each time: ~10% of a worker's CPU a turn (bench/README.md).
    # TOOLCRIB_DB_PREPARE_THRESHOLD=off behind a pooler that cannot keep prepared
    # statements (PgBouncer's transaction mode before 1.21).
    if env_bool("TOOLCRIB_DB_SERVER_BINDING", True):
        DATABASES["default"]["OPTIONS"]["server_side_binding"] = True
    _prepare = env("TOOLCRIB_DB_PREPARE_THRESHOLD", "2").strip().lower()
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = (
        None if _prepare in {"off", "none", ""} else int(_prepare)
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: channel layer and cache when set; in-memory otherwise. Every key starts
# with TOOLCRIB_REDIS_PREFIX, so deployments (or test runs) can share one Redis.
REDIS_URL = env("REDIS_URL")
TOOLCRIB_REDIS_PREFIX = env("TOOLCRIB_REDIS_PREFIX", "toolcrib")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
if REDIS_URL and not REDIS_URL.startswith(_REDIS_SCHEMES):
    raise ImproperlyConfigured(
        "REDIS_URL must start with redis://, rediss:// or unix://."
    )
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Redis Pub/Sub: a doorbell pushed to who listens, sockets closed when
            # Redis restarts (project/layers.py).
            "BACKEND": "project.layers.RedisChannelLayer",
            "CONFIG": {
                # Commands time out after 30 s; the subscriber connection reads
                # without a timeout, and a dead Redis still ends its receives.
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": 30,
                        "socket_connect_timeout": 5,
                        "socket_keepalive": True,
                    }
                ],
                # Pub/Sub names are global to a Redis server: one prefix each.
                "prefix": f"{TOOLCRIB_REDIS_PREFIX}:asgi",
                # Messages a channel holds for its socket before it misses one.
                "capacity": 1000,
            },
        }
    }
    CACHES = {
        "default": {
            # Django's, one pool and client per process (project/cache.py).
            "BACKEND": "project.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": TOOLCRIB_REDIS_PREFIX,
            # After a Redis restart every pooled connection is dead: a command
            # retries on a new one (for about two seconds) instead of failing.
            "OPTIONS": {
                "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), 5),
                "retry_on_error": [RedisConnectionError, RedisTimeoutError],
                "socket_connect_timeout": 5,
                "socket_timeout": 5,
            },
        }
    }
else:
    # channels' own, its group send in one pass (project/memory_layer.py).
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "project.memory_layer.InMemoryChannelLayer"}
    }
    # Django's, each key checked once (project/cache.py).
    CACHES = {"default": {"BACKEND": "project.cache.LocalMemoryCache"}}

# Celery: turns run in workers when a broker is set, inline in the server otherwise.
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
_BROKER_SCHEMES = ("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://")
if CELERY_BROKER_URL and not CELERY_BROKER_URL.startswith(_BROKER_SCHEMES):
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL must be a Redis (redis://, rediss://) or RabbitMQ "
        "(amqp://, amqps://) URL."
    )
if CELERY_BROKER_URL and not REDIS_URL:
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL is set but REDIS_URL is not: events from workers could "
        "never reach the web processes. Set REDIS_URL too."
    )
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# A task is acknowledged when it ends: a worker that dies mid-turn leaves its
# message to the broker, which delivers it again (agents/turns/queue.py makes that
# harmless: the Run ends failed once its lease runs out, and never runs twice).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env("TOOLCRIB_CELERY_QUEUE", "toolcrib")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {"global_keyprefix": f"{TOOLCRIB_REDIS_PREFIX}:celery:"}
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else {}
)
if CELERY_BROKER_URL.startswith("redis://"):
    # kombu's Redis transport, one client per channel instead of one per publish
    # and per ack (project/celery.py). rediss:// keeps kombu's own, scheme and all.
    CELERY_BROKER_TRANSPORT = "project.celery:RedisTransport"
TOOLCRIB_EXECUTOR = "celery" if CELERY_BROKER_URL else "inline"
# Seconds a running turn's lease lasts in Redis (renewed three times as often):
# a turn whose lease runs out lost its process, and ends failed. Needs REDIS_URL.
TOOLCRIB_RUN_LEASE = float(env("TOOLCRIB_RUN_LEASE", "20")) if REDIS_URL else 0.0
# Seconds between two sweeps of the runs a dead process left (agents/turns/sweep.py),
# on a thread of each worker (and of a server running turns inline); 0: none.
TOOLCRIB_SWEEP_SECONDS = float(
    env("TOOLCRIB_SWEEP_SECONDS", str(TOOLCRIB_RUN_LEASE or 30))
)
# A queued run no process holds is queued again after this many seconds (and as
# many more after each time); once unheld for twice the turn timeout it fails.
TOOLCRIB_REQUEUE_SECONDS = float(
    env("TOOLCRIB_REQUEUE_SECONDS", str(3 * TOOLCRIB_RUN_LEASE or 60))
)

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
# Code toolsets: name -> dotted path of a module of functions, a tool, or a toolset.
# The built-in ones first (toolsets/builtin/, docs/builtin-tools.md).
TOOLCRIB_TOOLSETS: dict[str, str] = {
    "math": "toolsets.builtin.calculator.toolset",
    "http": "toolsets.builtin.http.toolset",
    "webpage": "toolsets.builtin.webpage.toolset",
    "files": "toolsets.builtin.files.toolset",
    "sql": "toolsets.builtin.sql.toolset",
    "shell": "toolsets.builtin.shell.toolset",
    "search": "toolsets.builtin.search.toolset",
    **dict(
        item.split("=", 1)
        for item in env_list("TOOLCRIB_EXTRA_TOOLSETS")
        if "=" in item
    ),
}
# Agents (AgentSpec names) whose turn fails when a tool raises. Any other agent's
# model reads the error as the call's result and the turn goes on
# (docs/availability.md, "When a tool raises").
TOOLCRIB_TOOL_ERRORS_FAIL_TURN = env_list("TOOLCRIB_TOOL_ERRORS_FAIL_TURN")
# Execution policies set in code for whole tools: "<toolset>.<tool>" -> the fields
# of a policy (timeout, retries, max_concurrent, rate_limit, cache_ttl; see
# docs/availability.md). An administrator's override in the catalog wins.
TOOLCRIB_TOOL_POLICIES: dict[str, dict] = {}
# What resolves the toolset names TOOLCRIB_TOOLSETS does not list (the imports an
# administrator stored): a dotted path to an object with resolve(name),
# versions(names) and names() (agents/adk/builder.py's ToolsetSource).
TOOLCRIB_TOOLSET_SOURCE = "toolsets.source.STORED_IMPORTS"
# The ADK plugins every turn runs, as dotted paths to BasePlugin classes, each
# instantiated afresh per turn (agents/plugins.py). Order is policy: ADK calls
# plugins in list order and the first to answer a callback decides.
TOOLCRIB_PLUGINS: list[str] = [
    # First, so no answer skips it: the turn's secret values, masked in the text
    # that leaves it (traces, logs, the audit; agents/redaction.py).
    "agents.adk.secret_values.SecretValuesPlugin",
    "agents.adk.budget_plugin.BudgetPlugin",
    "agents.adk.handoffs.HandoffPlugin",
    # Access, activation, availability, approval gate, policy: in the order of
    # toolsets.governance.checks.CHECKS.
    "toolsets.governance.plugin.GovernancePlugin",
    # Last: loads a credential only for a call that runs.
    "agents.adk.tool_auth.ToolAuthPlugin",
    # Times each model call that really ran (an earlier plugin's answer skips it).
    "agents.adk.metrics_plugin.ModelCallMetricsPlugin",
    # After governance pruned the request: what each model step was offered, as
    # a span (docs/observability.md); nothing while no tracer records.
    "agents.adk.model_steps.ModelStepsPlugin",
]
# Built-in toolsets' policies: each refuses what an administrator has not allowed.
TOOLCRIB_BUILTIN_CALCULATOR_MAX_DIGITS = int(
    env("TOOLCRIB_BUILTIN_CALCULATOR_MAX_DIGITS", "1000")
)
# Digits after the point a float result is rounded to; empty: as computed.
TOOLCRIB_BUILTIN_CALCULATOR_PRECISION = (
    int(env("TOOLCRIB_BUILTIN_CALCULATOR_PRECISION"))
    if env("TOOLCRIB_BUILTIN_CALCULATOR_PRECISION").strip()
    else None
)
if TOOLCRIB_BUILTIN_CALCULATOR_PRECISION is not None and not (
    0 <= TOOLCRIB_BUILTIN_CALCULATOR_PRECISION <= 15
):
    raise ImproperlyConfigured(
        "TOOLCRIB_BUILTIN_CALCULATOR_PRECISION must be between 0 and 15."
    )
TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS = env_list("TOOLCRIB_BUILTIN_HTTP_ALLOWED_HOSTS")
TOOLCRIB_BUILTIN_HTTP_MAX_BYTES = int(env("TOOLCRIB_BUILTIN_HTTP_MAX_BYTES", "1048576"))
TOOLCRIB_BUILTIN_HTTP_TIMEOUT = float(env("TOOLCRIB_BUILTIN_HTTP_TIMEOUT", "15"))
TOOLCRIB_BUILTIN_HTTP_MAX_REDIRECTS = int(
    env("TOOLCRIB_BUILTIN_HTTP_MAX_REDIRECTS", "5")
)
# An administrator's API for the http tool: a relative URL the model gives is
# joined to the base URL, whose host is allowed too; the fixed headers (a JSON
# object) and each user's own credential (sent in the header named here, e.g.
# "X-Api-Key" or "Authorization: Bearer", asked of her once) go to that host only,
# never set by the model (docs/builtin-tools.md).
TOOLCRIB_BUILTIN_HTTP_BASE_URL = env("TOOLCRIB_BUILTIN_HTTP_BASE_URL").strip()
try:
    TOOLCRIB_BUILTIN_HTTP_HEADERS: dict[str, str] = json.loads(
        env("TOOLCRIB_BUILTIN_HTTP_HEADERS", "{}")
    )
except ValueError as exc:
    raise ImproperlyConfigured("TOOLCRIB_BUILTIN_HTTP_HEADERS is not JSON.") from exc
TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER = env(
    "TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER"
).strip()
if not isinstance(TOOLCRIB_BUILTIN_HTTP_HEADERS, dict) or not all(
    isinstance(value, str) for value in TOOLCRIB_BUILTIN_HTTP_HEADERS.values()
):
    raise ImproperlyConfigured(
        "TOOLCRIB_BUILTIN_HTTP_HEADERS must be a JSON object of header names to text."
    )
if TOOLCRIB_BUILTIN_HTTP_BASE_URL and not TOOLCRIB_BUILTIN_HTTP_BASE_URL.startswith(
    ("http://", "https://")
):
    raise ImproperlyConfigured(
        "TOOLCRIB_BUILTIN_HTTP_BASE_URL must be an http:// or https:// URL."
    )
if not TOOLCRIB_BUILTIN_HTTP_BASE_URL and (
    TOOLCRIB_BUILTIN_HTTP_HEADERS or TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER
):
    raise ImproperlyConfigured(
        "TOOLCRIB_BUILTIN_HTTP_HEADERS and TOOLCRIB_BUILTIN_HTTP_CREDENTIAL_HEADER "
        "go to the host of TOOLCRIB_BUILTIN_HTTP_BASE_URL only: set it too."
    )
TOOLCRIB_BUILTIN_WEBPAGE_MAX_CHARS = int(
    env("TOOLCRIB_BUILTIN_WEBPAGE_MAX_CHARS", "20000")
)
# The User-Agent the webpage tool sends; empty: httpx's own.
TOOLCRIB_BUILTIN_WEBPAGE_USER_AGENT = env("TOOLCRIB_BUILTIN_WEBPAGE_USER_AGENT").strip()
TOOLCRIB_BUILTIN_FILES_MAX_BYTES = int(
    env("TOOLCRIB_BUILTIN_FILES_MAX_BYTES", "1048576")
)
TOOLCRIB_BUILTIN_FILES_MAX_FILES = int(env("TOOLCRIB_BUILTIN_FILES_MAX_FILES", "500"))
# Folders of this host the files tools reach by absolute path, next to each user's
# workspace: read only, or read and write with ":rw" ("/srv/reports,/srv/out:rw").
# Never inside, or around, the data folder, the media folder or the project.
TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS = env_list("TOOLCRIB_BUILTIN_FILES_ALLOWED_PATHS")
# The search tool's provider: a SearXNG-compatible JSON endpoint, e.g.
# http://searx.internal:8080/search (empty refuses every search), and the most
# results a search returns.
TOOLCRIB_BUILTIN_SEARCH_URL = env("TOOLCRIB_BUILTIN_SEARCH_URL").strip()
TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS = int(
    env("TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS", "5")
)
if TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS < 1:
    raise ImproperlyConfigured(
        "TOOLCRIB_BUILTIN_SEARCH_MAX_RESULTS must be at least 1."
    )
TOOLCRIB_BUILTIN_SQL_DATABASE_URL = env("TOOLCRIB_BUILTIN_SQL_DATABASE_URL")
TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE = env_bool(
    "TOOLCRIB_BUILTIN_SQL_ALLOW_OWN_DATABASE"
)
TOOLCRIB_BUILTIN_SQL_MAX_ROWS = int(env("TOOLCRIB_BUILTIN_SQL_MAX_ROWS", "200"))
TOOLCRIB_BUILTIN_SQL_TIMEOUT = float(env("TOOLCRIB_BUILTIN_SQL_TIMEOUT", "10"))
# A query runs in a worker process with this much memory (docs/builtin-tools.md).
TOOLCRIB_BUILTIN_SQL_MAX_MEMORY_MB = int(
    env("TOOLCRIB_BUILTIN_SQL_MAX_MEMORY_MB", "256")
)
TOOLCRIB_BUILTIN_SQL_MAX_RESULT_BYTES = int(
    env("TOOLCRIB_BUILTIN_SQL_MAX_RESULT_BYTES", "1048576")
)
TOOLCRIB_BUILTIN_SQL_WORK_MEM_MB = int(env("TOOLCRIB_BUILTIN_SQL_WORK_MEM_MB", "4"))
TOOLCRIB_BUILTIN_SHELL_COMMANDS = env_list("TOOLCRIB_BUILTIN_SHELL_COMMANDS")
TOOLCRIB_BUILTIN_SHELL_PATH = env(
    "TOOLCRIB_BUILTIN_SHELL_PATH", "/usr/local/bin:/usr/bin:/bin"
)
TOOLCRIB_BUILTIN_SHELL_TIMEOUT = float(env("TOOLCRIB_BUILTIN_SHELL_TIMEOUT", "10"))
TOOLCRIB_BUILTIN_SHELL_MAX_OUTPUT = int(
    env("TOOLCRIB_BUILTIN_SHELL_MAX_OUTPUT", "65536")
)
# One folder per user under it; never inside DATA_DIR, MEDIA_ROOT or the project
# (a call refuses), since the sandbox shows a command nothing but its own folder.
TOOLCRIB_BUILTIN_SHELL_WORKDIR = env(
    "TOOLCRIB_BUILTIN_SHELL_WORKDIR",
    str(Path(tempfile.gettempdir()) / "toolcrib-shell"),
)
# Disk a user's working folder may hold, in MB (2**20 bytes); 0: no quota
# (toolsets/builtin/quota.py).
TOOLCRIB_BUILTIN_SHELL_QUOTA_MB = int(env("TOOLCRIB_BUILTIN_SHELL_QUOTA_MB", "100"))
# The sandbox every command runs in (toolsets/builtin/sandbox.py): bubblewrap, the
# user it runs as when the server is root, and its hard resource limits.
TOOLCRIB_BUILTIN_SHELL_BWRAP = env("TOOLCRIB_BUILTIN_SHELL_BWRAP", "bwrap")
TOOLCRIB_BUILTIN_SHELL_UID = int(env("TOOLCRIB_BUILTIN_SHELL_UID", "65534"))
TOOLCRIB_BUILTIN_SHELL_GID = int(env("TOOLCRIB_BUILTIN_SHELL_GID", "65534"))
TOOLCRIB_BUILTIN_SHELL_MAX_MEMORY = int(
    env("TOOLCRIB_BUILTIN_SHELL_MAX_MEMORY", str(1024**3))
)
TOOLCRIB_BUILTIN_SHELL_MAX_CPU = int(env("TOOLCRIB_BUILTIN_SHELL_MAX_CPU", "10"))
TOOLCRIB_BUILTIN_SHELL_MAX_FILE_BYTES = int(
    env("TOOLCRIB_BUILTIN_SHELL_MAX_FILE_BYTES", str(64 * 1024**2))
)
TOOLCRIB_BUILTIN_SHELL_MAX_PROCESSES = int(
    env("TOOLCRIB_BUILTIN_SHELL_MAX_PROCESSES", "64")
)
TOOLCRIB_BUILTIN_SHELL_TMP_BYTES = int(
    env("TOOLCRIB_BUILTIN_SHELL_TMP_BYTES", str(64 * 1024**2))
)
# Imported toolsets (toolsets/imports/): the size of an OpenAPI spec, seconds for
# a spec fetch, an API call or an MCP request, and the size of an API's answer.
TOOLCRIB_IMPORT_MAX_SPEC_BYTES = int(env("TOOLCRIB_IMPORT_MAX_SPEC_BYTES", "2097152"))
TOOLCRIB_IMPORT_TIMEOUT = float(env("TOOLCRIB_IMPORT_TIMEOUT", "30"))
# MCP imports whose sessions (a stdio server each) a process keeps open across
# turns; past this, the least recently used one is closed.
TOOLCRIB_MCP_SESSIONS_MAX = int(env("TOOLCRIB_MCP_SESSIONS_MAX", "32"))
TOOLCRIB_IMPORT_MAX_RESPONSE_BYTES = int(
    env("TOOLCRIB_IMPORT_MAX_RESPONSE_BYTES", "1048576")
)
# Default policy of a toolset when the catalog first sees it: open or granted_only.
TOOLCRIB_TOOLSET_DEFAULT_POLICY = env("TOOLCRIB_TOOLSET_DEFAULT_POLICY", "open")
if TOOLCRIB_TOOLSET_DEFAULT_POLICY not in {"open", "granted_only"}:
    raise ImproperlyConfigured(
        "TOOLCRIB_TOOLSET_DEFAULT_POLICY must be 'open' or 'granted_only'."
    )
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
# How long an MCP gateway call held for approval waits for the decision before it
# answers "waiting for approval" (docs/gateway.md); 0: answer that at once.
TOOLCRIB_GATEWAY_APPROVAL_WAIT = float(env("TOOLCRIB_GATEWAY_APPROVAL_WAIT", "300"))
# What one token may hold open and send at the MCP gateway, per server process
# (toolsets/gateway/limits.py, docs/gateway.md): sessions at once, notifications a
# minute (0: no limit), and seconds before an idle session ends (0: never).
TOOLCRIB_GATEWAY_MAX_SESSIONS_PER_TOKEN = int(
    env("TOOLCRIB_GATEWAY_MAX_SESSIONS_PER_TOKEN", "10")
)
TOOLCRIB_GATEWAY_NOTIFICATIONS_PER_MINUTE = int(
    env("TOOLCRIB_GATEWAY_NOTIFICATIONS_PER_MINUTE", "60")
)
TOOLCRIB_GATEWAY_SESSION_IDLE_SECONDS = float(
    env("TOOLCRIB_GATEWAY_SESSION_IDLE_SECONDS", "1800")
)
TOOLCRIB_MAX_MESSAGE_CHARS = int(env("TOOLCRIB_MAX_MESSAGE_CHARS", "20000"))
# A websocket frame past TOOLCRIB_WS_MAX_FRAME_BYTES gets a `too_big` error frame
# and the socket stays; one past TOOLCRIB_WS_MAX_MESSAGE_BYTES is not read at all:
# Daphne closes the socket with 1009 and a reason (project/daphne_input.py).
TOOLCRIB_WS_MAX_FRAME_BYTES = int(env("TOOLCRIB_WS_MAX_FRAME_BYTES", "65536"))
TOOLCRIB_WS_MAX_MESSAGE_BYTES = int(env("TOOLCRIB_WS_MAX_MESSAGE_BYTES", "1048576"))
if TOOLCRIB_WS_MAX_MESSAGE_BYTES < TOOLCRIB_WS_MAX_FRAME_BYTES:
    raise ImproperlyConfigured(
        "TOOLCRIB_WS_MAX_MESSAGE_BYTES must be at least TOOLCRIB_WS_MAX_FRAME_BYTES."
    )
# Arrays and objects nested in a request body or a frame (agents/inputs.py); deeper
# is refused, as Python's JSON parser and every serializer after it recurse.
TOOLCRIB_MAX_JSON_DEPTH = int(env("TOOLCRIB_MAX_JSON_DEPTH", "64"))
if not 1 <= TOOLCRIB_MAX_JSON_DEPTH <= 200:
    # pydantic renders about 255 levels: deeper input would be stored, then unreadable.
    raise ImproperlyConfigured("TOOLCRIB_MAX_JSON_DEPTH must be between 1 and 200.")
TOOLCRIB_CREDENTIAL_KEY = env("TOOLCRIB_CREDENTIAL_KEY")
# Artifacts, memory and long-running calls.
TOOLCRIB_MAX_UPLOAD_BYTES = int(env("TOOLCRIB_MAX_UPLOAD_BYTES", str(10 * 1024 * 1024)))
# PostgreSQL text search configuration for memory search ("english", "simple", ...).
TOOLCRIB_MEMORY_SEARCH_CONFIG = env("TOOLCRIB_MEMORY_SEARCH_CONFIG", "english")
TOOLCRIB_MEMORY_MAX_RESULTS = int(env("TOOLCRIB_MEMORY_MAX_RESULTS", "10"))

# The offline model and litellm must never reach the network for a price table.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ADK_SUPPRESS_EXPERIMENTAL_FEATURE_WARNINGS", "true")

# API tokens (agents/tokens.py): hours a new token lasts (0: until revoked), and
# how many one user keeps (signing in again ends the oldest past that).
TOOLCRIB_API_TOKEN_TTL_HOURS = float(env("TOOLCRIB_API_TOKEN_TTL_HOURS", "0"))
TOOLCRIB_API_TOKENS_PER_USER = int(env("TOOLCRIB_API_TOKENS_PER_USER", "20"))
if TOOLCRIB_API_TOKENS_PER_USER < 1:
    raise ImproperlyConfigured("TOOLCRIB_API_TOKENS_PER_USER must be at least 1.")
REST_KNOX = {
    "TOKEN_TTL": (
        timedelta(hours=TOOLCRIB_API_TOKEN_TTL_HOURS)
        if TOOLCRIB_API_TOKEN_TTL_HOURS > 0
        else None
    ),
}
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
# Password guessing (django-axes, project/lockout.py): this many failed sign-ins
# for one account from one client address refuse that account from that address
# (429) for the cool-off, on /api/auth/token/, /login/ and the admin; the account
# still signs in from elsewhere, and others from that address. One address failing
# TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT times, over any accounts, is refused for
# every account (0: no such limit); TOOLCRIB_LOGIN_FAILURE_LIMIT=0 turns the whole
# lockout off. The address is REMOTE_ADDR only, never a
# header a client can forge: behind a proxy, Daphne's --proxy-headers sets it from
# X-Forwarded-For, which the proxy must overwrite (docs/deployment.md).
TOOLCRIB_LOGIN_FAILURE_LIMIT = int(env("TOOLCRIB_LOGIN_FAILURE_LIMIT", "10"))
TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT = int(
    env("TOOLCRIB_LOGIN_ADDRESS_FAILURE_LIMIT", "100")
)
TOOLCRIB_LOGIN_COOLOFF_MINUTES = float(env("TOOLCRIB_LOGIN_COOLOFF_MINUTES", "15"))
if TOOLCRIB_LOGIN_COOLOFF_MINUTES <= 0:
    raise ImproperlyConfigured("TOOLCRIB_LOGIN_COOLOFF_MINUTES must be above 0.")
AXES_ENABLED = TOOLCRIB_LOGIN_FAILURE_LIMIT > 0
AXES_FAILURE_LIMIT = TOOLCRIB_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=TOOLCRIB_LOGIN_COOLOFF_MINUTES)
# The pair only: a username alone or an address alone would let anyone lock a
# person out of her account, or everyone at one address out of theirs. The
# handler adds the per-address limit.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_HANDLER = "project.lockout.PairLockoutHandler"
# The cool-off runs from the last counted failure: attempts while locked out are
# refused without being counted, so "try again in N minutes" holds.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "project.lockout.lockout_response"
# Failures are kept (AccessAttempt rows, shown in the admin); successful sign-ins
# are not logged, so the table does not grow with every token request.
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False

# Single sign-on with OpenID Connect (toolsets/sso/, docs/permissions.md), on when
# TOOLCRIB_OIDC_ISSUER is set: the provider's endpoints come from its discovery
# document, fetched at the first sign-in and cached. Users are created at their
# first sign-in; their groups that TOOLCRIB_OIDC_MANAGED_GROUPS matches (patterns,
# default all) follow TOOLCRIB_OIDC_GROUPS_CLAIM at every sign-in, added and
# removed; other groups are Toolcrib's own, never touched by a sign-in.
TOOLCRIB_OIDC_ISSUER = env("TOOLCRIB_OIDC_ISSUER").strip().rstrip("/")
TOOLCRIB_OIDC_PROVIDER_NAME = env("TOOLCRIB_OIDC_PROVIDER_NAME", "single sign-on")
TOOLCRIB_OIDC_USERNAME_CLAIM = env("TOOLCRIB_OIDC_USERNAME_CLAIM", "preferred_username")
TOOLCRIB_OIDC_GROUPS_CLAIM = env("TOOLCRIB_OIDC_GROUPS_CLAIM", "groups")
TOOLCRIB_OIDC_MANAGED_GROUPS = env_list("TOOLCRIB_OIDC_MANAGED_GROUPS", "*")
# Staff status follows membership of this claimed group when set; unset, never touched.
TOOLCRIB_OIDC_STAFF_GROUP = env("TOOLCRIB_OIDC_STAFF_GROUP").strip()
OIDC_RP_CLIENT_ID = env("TOOLCRIB_OIDC_CLIENT_ID")
OIDC_RP_CLIENT_SECRET = env("TOOLCRIB_OIDC_CLIENT_SECRET")
OIDC_RP_SCOPES = env("TOOLCRIB_OIDC_SCOPES", "openid email profile")
OIDC_RP_SIGN_ALGO = env("TOOLCRIB_OIDC_SIGN_ALGO", "RS256")
if TOOLCRIB_OIDC_ISSUER:
    if not TOOLCRIB_OIDC_ISSUER.startswith(("https://", "http://")):
        raise ImproperlyConfigured(
            "TOOLCRIB_OIDC_ISSUER must be an https:// or http:// URL."
        )
    if not (OIDC_RP_CLIENT_ID and OIDC_RP_CLIENT_SECRET):
        raise ImproperlyConfigured(
            "TOOLCRIB_OIDC_ISSUER is set: set TOOLCRIB_OIDC_CLIENT_ID and "
            "TOOLCRIB_OIDC_CLIENT_SECRET too."
        )
    if "openid" not in OIDC_RP_SCOPES.split():
        raise ImproperlyConfigured("TOOLCRIB_OIDC_SCOPES must include openid.")
# The tool gateway as an OAuth 2.1 protected resource (toolsets/gateway/oauth.py,
# docs/gateway.md), on when TOOLCRIB_GATEWAY_URL is set: its canonical URL
# (https://toolcrib.example.com/mcp), the audience (RFC 8707 resource) its access
# tokens must name. The authorization server is the provider of TOOLCRIB_OIDC_ISSUER;
# TOOLCRIB_GATEWAY_OAUTH_SCOPES (comma-separated, default none) are listed in the
# resource's metadata and required of every access token.
TOOLCRIB_GATEWAY_URL = env("TOOLCRIB_GATEWAY_URL").strip().rstrip("/")
TOOLCRIB_GATEWAY_OAUTH_SCOPES = env_list("TOOLCRIB_GATEWAY_OAUTH_SCOPES")
if TOOLCRIB_GATEWAY_URL:
    if not TOOLCRIB_OIDC_ISSUER:
        raise ImproperlyConfigured(
            "TOOLCRIB_GATEWAY_URL is set: set TOOLCRIB_OIDC_ISSUER too (the "
            "provider that issues the gateway's access tokens)."
        )
    if not (
        TOOLCRIB_GATEWAY_URL.startswith(("https://", "http://"))
        and TOOLCRIB_GATEWAY_URL.endswith("/mcp")
    ):
        raise ImproperlyConfigured(
            "TOOLCRIB_GATEWAY_URL must be the gateway's URL: https://<host>/mcp."
        )
# A linked user's every request (web session, API token, socket, gateway token)
# asks the provider about her again once her last check is this many seconds old
# (toolsets/sso/recheck.py, docs/deployment.md): removed there, she loses access
# here within it; her groups and staff status follow its claims. 0: every request.
TOOLCRIB_SSO_RECHECK_SECONDS = int(env("TOOLCRIB_SSO_RECHECK_SECONDS", "300"))
if TOOLCRIB_SSO_RECHECK_SECONDS < 0:
    raise ImproperlyConfigured("TOOLCRIB_SSO_RECHECK_SECONDS must be 0 or more.")
# What every request of a signed-in account passes, as dotted paths of callables
# taking `user=` and raising project.errors.SignInEnded (agents/account_checks.py).
TOOLCRIB_ACCOUNT_CHECKS: list[str] = ["toolsets.sso.recheck.check_account"]
# What an approver may change a held call's arguments to (agents.requests.edits):
# governance's checks, by name, as the runtime receives its plugins.
TOOLCRIB_APPROVAL_ARGUMENT_CHECKS: list[str] = [
    "toolsets.governance.edits.check_arguments"
]
# mozilla-django-oidc's own settings: PKCE, the client secret in a Basic header
# (the token endpoint's default), seconds per call to the provider.
OIDC_USE_PKCE = True
OIDC_TOKEN_USE_BASIC_AUTH = True
OIDC_TIMEOUT = 10
LOGIN_REDIRECT_URL_FAILURE = "/login/?sso=failed"
# Local passwords (the /login/ form, POST /api/auth/token/, the admin's form): on
# by default for the embedded setup; off, only the provider signs people in.
TOOLCRIB_PASSWORD_LOGIN = env_bool("TOOLCRIB_PASSWORD_LOGIN", True)
if not TOOLCRIB_PASSWORD_LOGIN and not TOOLCRIB_OIDC_ISSUER:
    raise ImproperlyConfigured(
        "TOOLCRIB_PASSWORD_LOGIN is off and TOOLCRIB_OIDC_ISSUER is not set: "
        "nobody could sign in."
    )
if not TOOLCRIB_PASSWORD_LOGIN:
    AUTHENTICATION_BACKENDS.remove("django.contrib.auth.backends.ModelBackend")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "agents.tokens.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Every error status of every operation, with its body (agents/api/schema.py).
    "DEFAULT_SCHEMA_CLASS": "agents.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": None,
    "EXCEPTION_HANDLER": "agents.api.errors.exception_handler",
    # The one input rule and depth bound of agents/inputs.py, on every body.
    "DEFAULT_PARSER_CLASSES": [
        "agents.api.inputs.JSONParser",
        "agents.api.inputs.FormParser",
        "agents.api.inputs.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": [
        "agents.api.inputs.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Toolcrib API",
    "DESCRIPTION": "Run ADK agents and govern their tools.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # 3.1: the event frames' schemas come from pydantic, whose `null` type 3.0 lacks.
    "OAS_VERSION": "3.1.0",
    "ENUM_NAME_OVERRIDES": {
        "ImportKindEnum": "toolsets.models.ToolImport.Kind",
        "SessionStatusEnum": "agents.session_list.Status.ALL",
        "DeliveryStatusEnum": "agents.models.Delivery.Status",
    },
    # Path ids typed as their converters take them (agents/params.py): a row id is
    # 1 to the bigint maximum; a name is anything but a slash or a NUL.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "minimum": 1, "maximum": 9223372036854775807},
        "name": {"type": "string", "pattern": "^[^/\\x00]+$"},
        "filename": {"type": "string", "pattern": "^[^\\x00]+$"},
    },
}

AUTH_PASSWORD_VALIDATORS = []
PASSWORD_HASHERS = (
    ["django.contrib.auth.hashers.MD5PasswordHasher"]
    if env_bool("TOOLCRIB_FAST_HASHER")
    else [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
MEDIA_ROOT = Path(env("MEDIA_ROOT", str(DATA_DIR / "media")))
# Files: local folders under MEDIA_ROOT by default. Artifacts (agents' files) have
# their own alias, so they can move to any django-storages backend on their own:
# TOOLCRIB_ARTIFACT_STORAGE is its dotted class, TOOLCRIB_ARTIFACT_STORAGE_OPTIONS
# its OPTIONS as JSON (e.g. {"bucket_name": "toolcrib"}).
_FILE_SYSTEM_STORAGE = "django.core.files.storage.FileSystemStorage"
TOOLCRIB_ARTIFACT_STORAGE = env("TOOLCRIB_ARTIFACT_STORAGE", _FILE_SYSTEM_STORAGE)
STORAGES = {
    "default": {"BACKEND": _FILE_SYSTEM_STORAGE},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "artifacts": {
        "BACKEND": TOOLCRIB_ARTIFACT_STORAGE,
        "OPTIONS": json.loads(env("TOOLCRIB_ARTIFACT_STORAGE_OPTIONS", "{}"))
        or (
            {"location": str(MEDIA_ROOT / "artifacts")}
            if TOOLCRIB_ARTIFACT_STORAGE == _FILE_SYSTEM_STORAGE
            else {}
        ),
    },
}
# The frontend's pages (frontend/urls.py) sign people in and out.
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

# Notices of requests (agents/notices/, docs/notices.md): mail through Django's
# SMTP backend when EMAIL_HOST is set (else no mail goes), webhooks to the
# destinations staff set up. Links in them are absolute: TOOLCRIB_PUBLIC_URL.
EMAIL_HOST = env("EMAIL_HOST").strip()
EMAIL_PORT = int(env("EMAIL_PORT", "25"))
EMAIL_HOST_USER = env("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL")
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("Set EMAIL_USE_TLS or EMAIL_USE_SSL, not both.")
EMAIL_TIMEOUT = float(env("EMAIL_TIMEOUT", "10"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "Toolcrib <toolcrib@localhost>")
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
TOOLCRIB_PUBLIC_URL = env("TOOLCRIB_PUBLIC_URL", "http://localhost:8000").strip()
if not TOOLCRIB_PUBLIC_URL.startswith(("https://", "http://")):
    raise ImproperlyConfigured(
        "TOOLCRIB_PUBLIC_URL must be the site's http:// or https:// address."
    )
TOOLCRIB_PUBLIC_URL = TOOLCRIB_PUBLIC_URL.rstrip("/")
# Attempts of one notice, the first retry's wait (each next one four times the
# last), and how long a webhook may take before its attempt counts as failed.
TOOLCRIB_NOTICE_ATTEMPTS = int(env("TOOLCRIB_NOTICE_ATTEMPTS", "3"))
TOOLCRIB_NOTICE_RETRY_SECONDS = float(env("TOOLCRIB_NOTICE_RETRY_SECONDS", "30"))
TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT = float(env("TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT", "5"))
if TOOLCRIB_NOTICE_ATTEMPTS < 1 or TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT <= 0:
    raise ImproperlyConfigured(
        "TOOLCRIB_NOTICE_ATTEMPTS must be 1 or more, and "
        "TOOLCRIB_NOTICE_WEBHOOK_TIMEOUT more than 0."
    )
# An approve / reject link opened asks its approver to sign in first (off: the
# link alone is her word); it lives as long as its request, at most this long.
TOOLCRIB_NOTICE_LINKS_SIGN_IN = env_bool("TOOLCRIB_NOTICE_LINKS_SIGN_IN", True)
TOOLCRIB_NOTICE_LINK_MAX_AGE = float(
    env("TOOLCRIB_NOTICE_LINK_MAX_AGE", str(7 * 24 * 3600))
)

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
