#!/usr/bin/env bash
# The pages' front-end libraries come from npm, pinned in frontend/vendor/package-lock.json:
# `npm ci` there when they are missing or the lock changed, then the files the pages load
# are copied into frontend/static/vendor/ (not in git), where Django's static files serve
# them. No bundler: each is an ES module or a stylesheet a page imports as it is.
# axe-core stays in node_modules: only the browser tests inject it.
set -euo pipefail
cd "$(dirname "$0")/../frontend/vendor"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [[ "$(id -u)" != "0" ]]; then
    echo "error: node and npm are missing; install them (apt-get install -y nodejs npm) as root" >&2
    exit 1
  fi
  echo "Installing Node.js for the pages' libraries (apt-get install -y nodejs npm)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
out=../static/vendor
# npm ci writes node_modules/.package-lock.json: newer than the lock, nothing to do.
if [[ -f node_modules/.package-lock.json && node_modules/.package-lock.json -nt package-lock.json && -f "$out/.copied" && "$out/.copied" -nt package-lock.json ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
rm -rf "$out"
mkdir -p "$out"
cp node_modules/marked/lib/marked.esm.js "$out/marked.esm.js"
cp node_modules/dompurify/dist/purify.es.mjs "$out/purify.es.mjs"
cp node_modules/@highlightjs/cdn-assets/es/highlight.min.js "$out/highlight.min.js"
cp node_modules/@highlightjs/cdn-assets/styles/github.min.css "$out/highlight-light.min.css"
cp node_modules/@highlightjs/cdn-assets/styles/github-dark.min.css "$out/highlight-dark.min.css"
for package in marked dompurify @highlightjs/cdn-assets; do
  name="${package//\//-}"
  cp "node_modules/$package/LICENSE" "$out/LICENSE.$name" 2>/dev/null || cp node_modules/$package/LICENSE* "$out/LICENSE.$name"
done
touch "$out/.copied"
