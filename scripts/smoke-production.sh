#!/usr/bin/env bash
# Starts the production artefact (scripts/package-production.sh) as the container would, in local
# mode on a scratch data directory: waits for /readyz, serves the web app, pays a paid route on
# rail A with the real client, then stops it with SIGTERM and expects exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."
RELEASE="$(realpath "${1:-release}")"
PORT="${SMOKE_PORT:-3917}"
DATA="$(mktemp -d)"
LOG="$DATA/service.log"

(cd "$RELEASE" && NODE_ENV=production PORT="$PORT" DATA_DIR="$DATA/data" exec node dist/main.js) >"$LOG" 2>&1 &
PID=$!
cleanup() { kill "$PID" 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT

for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; then break; fi
  if ! kill -0 "$PID" 2>/dev/null; then cat "$LOG"; echo "the production artefact exited during start-up"; exit 1; fi
  sleep 1
done
curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || { tail -20 "$LOG"; echo "not ready after 120 s"; exit 1; }
curl -sf "http://127.0.0.1:$PORT/" | grep -q '<div id="root">' || { echo "the web app is not served"; exit 1; }
BASE_URL="http://127.0.0.1:$PORT" npx tsx examples/pay.ts A GET /api/mpp/treasury/yield-rates | tail -3

kill -TERM "$PID"
if wait "$PID"; then echo "production artefact: ready, served a paid call, stopped cleanly"; else
  code=$?; tail -20 "$LOG"; echo "the production artefact exited with $code on SIGTERM"; exit 1
fi
