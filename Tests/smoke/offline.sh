#!/usr/bin/env bash
# The terminal client while the server is away: commands still work, the header says "offline, N pending" with the
# predicted state on screen, and everything is applied once the server is back on the same port and data.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin_dir=${LOCKSTEP_BIN_DIR:-$(swift build --show-bin-path)}
server_bin="$bin_dir/lockstep"
client_bin="$bin_dir/lockstep-client"
[ -x "$server_bin" ] && [ -x "$client_bin" ] || { echo "offline smoke: build lockstep and lockstep-client first"; exit 1; }
command -v tmux >/dev/null || { echo "offline smoke: tmux is not installed"; exit 1; }

log=$(mktemp)
data=$(mktemp -d)
socket="lockstep-offline-$$"
tmx() { tmux -L "$socket" "$@"; }
cleanup() {
    tmx kill-server 2>/dev/null || true
    [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
    remove_soon "$log" "$data"
}
source Tests/smoke/remove_soon.sh
trap cleanup EXIT

start_server() {
    : >"$log"
    "$server_bin" serve --port "$1" --app counter --data "$data" >"$log" 2>&1 &
    server_pid=$!
    port=""
    for _ in $(seq 300); do
        port=$(grep -o 'ws://127.0.0.1:[0-9]*' "$log" | head -n 1 | sed 's/.*://' || true)
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "offline smoke: the server did not start"; cat "$log"; exit 1
}

source Tests/smoke/wait_for.sh

start_server 0
url="ws://127.0.0.1:$port/rooms/offline"
tmx new-session -d -s alice -x 100 -y 24 "TERM=xterm-256color NO_COLOR=1 '$client_bin' '$url' --name alice"
wait_for alice 'live' "alice is connected" || true
tmx send-keys -t alice '+' Enter
wait_for alice '"count": 1' "alice's increment is applied" || true

kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
wait_for alice 'offline, 0 pending' "the header says offline" || true
tmx send-keys -t alice '+' Enter
tmx send-keys -t alice '+' Enter
wait_for alice 'offline, 2 pending' "commands wait while the server is away" || true
wait_for alice '"count": 3' "the screen shows the predicted count" || true

start_server "$port"
wait_for alice 'live *$' "alice reconnects with nothing pending" || true
tmx new-session -d -s bob -x 100 -y 24 "TERM=xterm-256color NO_COLOR=1 '$client_bin' '$url' --name bob"
wait_for bob '"count": 3' "the queued commands were applied once each" || true

echo "offline: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
