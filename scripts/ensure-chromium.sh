#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (`playwright install` cannot download browsers
# here). Installs it with apt when /usr/bin/chromium is missing; needs root.
set -euo pipefail
CHROMIUM="${TOOLCRIB_CHROMIUM:-/usr/bin/chromium}"
if [[ -x "$CHROMIUM" ]]; then
  exit 0
fi
if [[ "$(id -u)" != "0" ]]; then
  echo "error: $CHROMIUM is missing; install Debian's chromium (apt-get install -y chromium) as root" >&2
  exit 1
fi
echo "Installing Chromium for the browser tests (apt-get install -y chromium)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
test -x "$CHROMIUM"
