#!/usr/bin/env bash
# The gateway's tests drive the TypeScript MCP SDK's client: tests/mcp_ts/client.mjs,
# on the npm package @modelcontextprotocol/sdk pinned in tests/mcp_ts/package-lock.json.
# Installs it with `npm ci` when it is missing or the lock changed; Node.js and npm
# with apt when they are missing (needs root).
set -euo pipefail
cd "$(dirname "$0")/../tests/mcp_ts"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [[ "$(id -u)" != "0" ]]; then
    echo "error: node and npm are missing; install them (apt-get install -y nodejs npm) as root" >&2
    exit 1
  fi
  echo "Installing Node.js for the gateway tests (apt-get install -y nodejs npm)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
# npm ci writes node_modules/.package-lock.json: newer than the lock, nothing to do.
if [[ -f node_modules/.package-lock.json && node_modules/.package-lock.json -nt package-lock.json ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
