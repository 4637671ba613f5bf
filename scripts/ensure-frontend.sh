#!/usr/bin/env bash
# The pages' front-end libraries come from npm, pinned in frontend/vendor/package-lock.json
# (installed by scripts/npm-ci.sh when missing or when the lock changed); the files the
# pages load are then copied into frontend/static/vendor/ (not in git), where Django's
# static files serve them. No bundler: each is an ES module or a stylesheet a page
# imports as it is. axe-core stays in node_modules: only the browser tests inject it.
set -euo pipefail
scripts="$(dirname "$0")"
"$scripts/npm-ci.sh" frontend/vendor "the pages' libraries"
cd "$scripts/../frontend/vendor"
out=../static/vendor
if [[ -f "$out/.copied" && "$out/.copied" -nt node_modules/.package-lock.json ]]; then
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
cp node_modules/marked/lib/marked.esm.js "$out/marked.esm.js"
cp node_modules/dompurify/dist/purify.es.mjs "$out/purify.es.mjs"
cp node_modules/@highlightjs/cdn-assets/es/highlight.min.js "$out/highlight.min.js"
cp node_modules/@highlightjs/cdn-assets/styles/github.min.css "$out/highlight-light.min.css"
cp node_modules/@highlightjs/cdn-assets/styles/github-dark.min.css "$out/highlight-dark.min.css"
for package in marked dompurify @highlightjs/cdn-assets; do
  name="${package//\//-}"
  cp "node_modules/$package/LICENSE" "$out/LICENSE.${name#@}" 2>/dev/null || cp node_modules/$package/LICENSE* "$out/LICENSE.${name#@}"
done
touch "$out/.copied"
