#!/usr/bin/env bash
# Builds the production artefact into OUT (default ./release): the compiled service, the built web
# app, the contracts' sources and their compiled cache, and production dependencies only. The
# Dockerfile's runtime stage is exactly this directory; CI builds it the same way and starts it.
# Needs a full install first (npm ci): the build uses the dev tools.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
OUT="$(realpath -m "${1:-release}")"

npm run build
rm -rf "$OUT"
mkdir -p "$OUT/web"
cp -r dist contracts package.json package-lock.json "$OUT/"
cp -r web/dist "$OUT/web/dist"
# No install scripts: `prepare` compiles the contracts with the dev tools, and the compiled cache
# is copied next; secp256k1 falls back to its pure-JavaScript code without its native build.
(cd "$OUT" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
# The dependency patches in patches/ (docs/decisions.md) apply here as `npm ci` applies them.
cp -r patches "$OUT/patches"
(cd "$OUT" && "$ROOT/node_modules/.bin/patch-package" --error-on-fail)
mkdir -p "$OUT/node_modules/.cache"
cp -r node_modules/.cache/contracts "$OUT/node_modules/.cache/contracts"
echo "production artefact in $OUT ($(du -sh "$OUT" | cut -f1))"
