#!/usr/bin/env bash
# `scripts/npm-ci.sh <folder> <for what>`: the npm packages pinned in <folder>'s
# package-lock.json, installed with `npm ci` when they are missing or the lock changed;
# Node.js and npm with apt when they are missing (needs root). The ensure-*.sh
# scripts call it for the pages' libraries and the tests' Node.js peers.
set -euo pipefail
folder="$1"
purpose="$2"
cd "$(dirname "$0")/../$folder"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [[ "$(id -u)" != "0" ]]; then
    echo "error: node and npm are missing; install them (apt-get install -y nodejs npm) as root" >&2
    exit 1
  fi
  echo "Installing Node.js for $purpose (apt-get install -y nodejs npm)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
# npm ci writes node_modules/.package-lock.json: newer than the lock, nothing to do.
if [[ -f node_modules/.package-lock.json && node_modules/.package-lock.json -nt package-lock.json ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
