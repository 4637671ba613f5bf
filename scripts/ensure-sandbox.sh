#!/usr/bin/env bash
# The shell tool runs every command in a bubblewrap sandbox (docs/builtin-tools.md);
# without a working one the shell toolset refuses every call. Installs Debian's
# bubblewrap with apt when bwrap is missing (needs root), then checks that it can
# build the sandbox's namespaces here. With TOOLCRIB_REQUIRE_SERVICES=1 (CI) a
# missing or broken sandbox is an error; otherwise a warning, and its tests skip.
set -euo pipefail
BWRAP="${TOOLCRIB_BUILTIN_SHELL_BWRAP:-bwrap}"

fail() {
  if [[ "${TOOLCRIB_REQUIRE_SERVICES:-}" == "1" ]]; then
    echo "error: $1" >&2
    exit 1
  fi
  echo "warning: $1; the shell toolset will refuse every command" >&2
  exit 0
}

if ! command -v "$BWRAP" >/dev/null; then
  if [[ "$BWRAP" != "bwrap" ]]; then
    fail "TOOLCRIB_BUILTIN_SHELL_BWRAP=$BWRAP is not an executable"
  fi
  if [[ "$(id -u)" != "0" ]]; then
    fail "$BWRAP is missing; install Debian's bubblewrap (apt-get install -y bubblewrap) as root"
  fi
  echo "Installing bubblewrap for the shell tool's sandbox (apt-get install -y bubblewrap)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
fi
# The namespaces the sandbox needs; Toolcrib probes the full sandbox itself.
if ! "$BWRAP" --die-with-parent --unshare-all --ro-bind /usr /usr \
  --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
  --proc /proc --dev /dev -- /usr/bin/true; then
  fail "$BWRAP cannot build a sandbox on this machine (namespaces refused?)"
fi
