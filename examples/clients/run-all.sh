#!/usr/bin/env bash
# Runs every client example (examples/clients/*.ts) against a fresh local server, as CI does:
# installs this folder's own dependencies (the public packages a third party installs, from its
# lockfile), starts the service from the repository root in local mode on a free port with a fresh
# data directory, runs each example with BASE_URL set, and fails if any example fails.
#
#   examples/clients/run-all.sh              # every example
#   examples/clients/run-all.sh x402-evm.ts  # only these
#   SKIP_INSTALL=1 examples/clients/run-all.sh  # node_modules already installed
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$HERE"

if [ -z "${SKIP_INSTALL:-}" ] || [ ! -d node_modules ]; then
  echo "-- npm ci (examples/clients)"
  npm ci --no-audit --no-fund --loglevel=error
fi

if [ "$#" -gt 0 ]; then EXAMPLES=("$@"); else EXAMPLES=(*.ts); fi

PORT="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });")"
BASE_URL="http://127.0.0.1:${PORT}"
DATA_DIR="$(mktemp -d)"
LOG="$DATA_DIR/server.log"
SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$DATA_DIR"
}
trap stop_server EXIT

# The API alone: tsx src/main.ts needs no web build (npm start's prestart builds it for the browser).
# PUBLIC_BASE_URL is the address clients reach, so the OAuth metadata the MCP client discovers points there.
echo "-- starting the service on ${BASE_URL} (local mode, data in ${DATA_DIR})"
(cd "$ROOT" && APP_MODE=local HOST=127.0.0.1 PORT="$PORT" DATA_DIR="$DATA_DIR" PUBLIC_BASE_URL="$BASE_URL" \
  exec node_modules/.bin/tsx src/main.ts >"$LOG" 2>&1) &
SERVER_PID=$!
for _ in $(seq 1 180); do
  if node -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" "${BASE_URL}/healthz"; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "the service exited during start-up:" >&2
    tail -n 40 "$LOG" >&2
    exit 1
  fi
  sleep 1
done
if ! node -e "fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))" "${BASE_URL}/healthz"; then
  echo "the service did not answer /healthz within 180 s:" >&2
  tail -n 40 "$LOG" >&2
  exit 1
fi

FAILED=()
for example in "${EXAMPLES[@]}"; do
  echo "== ${example}"
  started=$(date +%s)
  if BASE_URL="$BASE_URL" timeout 120 node_modules/.bin/tsx "$example"; then
    echo "-- ${example}: ok ($(( $(date +%s) - started )) s)"
  else
    echo "-- ${example}: FAILED ($(( $(date +%s) - started )) s)" >&2
    FAILED+=("$example")
  fi
done

if [ "${#FAILED[@]}" -gt 0 ]; then
  echo "failed: ${FAILED[*]}; the service's last log lines:" >&2
  tail -n 40 "$LOG" >&2
  exit 1
fi
echo "-- all ${#EXAMPLES[@]} client examples ended with a 200"
