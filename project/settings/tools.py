"""Tools: code toolsets, the ADK plugins every turn runs, built-in toolsets'
policies, imported toolsets, the tool gateway, credentials.
"""

import json
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from project.settings.base import env, env_bool, env_list

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
    # A model the user may not use is refused before the budget is counted.
    "agents.adk.model_grant_plugin.ModelGrantPlugin",
    "agents.adk.budget_plugin.BudgetPlugin",
    "agents.adk.handoffs.HandoffPlugin",
    # Access, activation, availability, approval gate, policy: in the order of
    # toolsets.governance.checks.CHECKS.
    "toolsets.governance.plugin.GovernancePlugin",
    # After governance: an eval run's calls it lets through answer from the case's
    # recorded results (a denied, held or refused call still is, and is audited).
    "evals.running.replay.ReplayPlugin",
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
# Remote A2A agents (toolsets/imports/a2a.py): hosts outside the public internet a
# remote agent's card and endpoint may be at (entries as the built-in http tool's
# allowlist: 10.1.0.0/16, 127.0.0.1:8001); seconds one delegation may take.
TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS = env_list("TOOLCRIB_A2A_REMOTE_PRIVATE_HOSTS")
TOOLCRIB_A2A_REMOTE_TIMEOUT = float(env("TOOLCRIB_A2A_REMOTE_TIMEOUT", "120"))
# Default policy of a toolset when the catalog first sees it: open or granted_only.
TOOLCRIB_TOOLSET_DEFAULT_POLICY = env("TOOLCRIB_TOOLSET_DEFAULT_POLICY", "open")
if TOOLCRIB_TOOLSET_DEFAULT_POLICY not in {"open", "granted_only"}:
    raise ImproperlyConfigured(
        "TOOLCRIB_TOOLSET_DEFAULT_POLICY must be 'open' or 'granted_only'."
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

TOOLCRIB_CREDENTIAL_KEY = env("TOOLCRIB_CREDENTIAL_KEY")
# Who a bearer token on the A2A edge (agents/a2a/, docs/a2a.md) speaks for: a dotted
# path to a function `(token=...) -> caller`, the caller having `user` and
# `toolsets` (None: all the user's tools), raising a DomainError for a token it
# refuses. The gateway's rule: API tokens, personal access tokens and, with
# TOOLCRIB_GATEWAY_URL, the OpenID Connect provider's access tokens.
TOOLCRIB_A2A_AUTHENTICATOR = "toolsets.gateway.auth.authenticate"
