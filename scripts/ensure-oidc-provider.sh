#!/usr/bin/env bash
# The sign-in tests start an OpenID Connect provider on 127.0.0.1: tests/oidc/provider.mjs,
# on the npm package oidc-provider pinned in tests/oidc/package-lock.json.
set -euo pipefail
exec "$(dirname "$0")/npm-ci.sh" tests/oidc "the sign-in tests"
