#!/usr/bin/env bash
# The whole test suite. `make test` and .ci/run call this.
# With CI=true (or TOOLCRIB_REQUIRE_SERVICES=1) a missing service is an error, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"

export SECRET_KEY="${SECRET_KEY:-toolcrib-test-only-secret-key}"
export TOOLCRIB_FAST_HASHER=1
# The suite runs the demo agents (demo/); pyproject's pytest env sets it too.
export TOOLCRIB_DEMO=1
if [[ "${CI:-}" == "true" ]]; then
  export TOOLCRIB_REQUIRE_SERVICES=1
fi

run_pytest() {
  local status=0
  "$VENV/bin/pytest" "$@" || status=$?
  if [[ $status -eq 5 ]]; then
    echo "error: pytest collected no tests for: $*" >&2
    return 1
  fi
  return $status
}

"$VENV/bin/ruff" check .
# The dependency rule ([tool.importlinter] in pyproject.toml, docs/architecture.md);
# no cache, so nothing is written to the tree.
"$VENV/bin/lint-imports" --no-cache
# The shell tool's sandbox (bubblewrap), installed with apt when missing; on CI its
# tests must run, so a missing sandbox is an error there.
scripts/ensure-sandbox.sh
# The sign-in tests' OpenID Connect provider (npm ci in tests/oidc); on CI its tests
# must run, so a missing provider is an error there.
scripts/ensure-oidc-provider.sh
# The MCP gateway's tests drive the TypeScript SDK's client (npm ci in tests/mcp_ts);
# on CI they must run, so a missing SDK is an error there.
scripts/ensure-mcp-ts.sh
# One worker per core (pytest-xdist), each with its own test database.
run_pytest -q -n auto tests --ignore=tests/integration --ignore=tests/browser
if [[ -d tests/integration ]]; then
  # PostgreSQL, Redis, Celery workers and Daphne processes for real (each run on a
  # database, Redis prefix and queue of its own). -rs says why a test was skipped:
  # locally a missing service skips; on CI it is an error.
  run_pytest -q -rs -m integration tests/integration
fi
if [[ -d tests/browser ]]; then
  # Debian's Chromium, installed with apt when missing (needs root; CI runs as root).
  scripts/ensure-chromium.sh
  # Sync Playwright cannot share a process with pytest-asyncio's event loop.
  run_pytest -q -p no:asyncio tests/browser
fi
