#!/usr/bin/env bash
# The gateway's tests drive the TypeScript MCP SDK's client: tests/mcp_ts/client.mjs,
# on the npm package @modelcontextprotocol/sdk pinned in tests/mcp_ts/package-lock.json.
set -euo pipefail
exec "$(dirname "$0")/npm-ci.sh" tests/mcp_ts "the gateway tests"
