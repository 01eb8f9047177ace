#!/usr/bin/env bash
# The terminal client with --keep: started with no server, three increments wait ("offline, 3 waiting"), the client
# quits and starts again showing them, then the server starts and the count is 3: each applied once.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin_dir=${LOCKSTEP_BIN_DIR:-$(swift build --show-bin-path)}
server_bin="$bin_dir/lockstep"
client_bin="$bin_dir/lockstep-client"
[ -x "$server_bin" ] && [ -x "$client_bin" ] || { echo "kept smoke: build lockstep and lockstep-client first"; exit 1; }
command -v tmux >/dev/null || { echo "kept smoke: tmux is not installed"; exit 1; }

log=$(mktemp)
data=$(mktemp -d)
keep=$(mktemp -d)
socket="lockstep-kept-$$"
tmx() { tmux -L "$socket" "$@"; }
cleanup() {
    tmx kill-server 2>/dev/null || true
    [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
    remove_soon "$log" "$data" "$keep"
}
source Tests/smoke/remove_soon.sh
trap cleanup EXIT
source Tests/smoke/wait_for.sh

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="ws://127.0.0.1:$port/rooms/kept"
client="TERM=xterm-256color NO_COLOR=1 '$client_bin' '$url' --name alice --app counter --session alice-1 --keep '$keep'"

# Wait until a tmux session's program has exited (the session is gone), for up to 30 s.
wait_gone() {
    for _ in $(seq 300); do
        tmx has-session -t "$1" 2>/dev/null || { echo "ok: $2"; passed=$((passed + 1)); return 0; }
        sleep 0.1
    done
    echo "FAILED: $2"
    failed=$((failed + 1))
}

tmx new-session -d -s alice -x 100 -y 24 "$client"
wait_for alice 'offline, 0 waiting' "with no server the header says offline" || true
for _ in 1 2 3; do tmx send-keys -t alice '+' Enter; done
wait_for alice 'offline, 3 waiting' "three increments wait" || true
wait_for alice '"count": 3' "the screen shows the predicted count" || true
tmx send-keys -t alice 'quit' Enter
wait_gone alice "the client quits"

tmx new-session -d -s alice -x 100 -y 24 "$client"
wait_for alice 'offline, 3 waiting' "started again, the three increments are still waiting" || true
wait_for alice '"count": 3' "and the kept prediction shows at once" || true

"$server_bin" serve --port "$port" --app counter --data "$data" >"$log" 2>&1 &
server_pid=$!
wait_for alice 'live *$' "the server comes back and nothing waits any more" || true
wait_for alice '"count": 3' "alice's count is 3" || true
tmx new-session -d -s bob -x 100 -y 24 "TERM=xterm-256color NO_COLOR=1 '$client_bin' '$url' --name bob"
wait_for bob '"count": 3' "bob sees count 3: each increment applied once" || true
wait_for bob ' v3 ' "the room is at version 3" || true

# Started once more, the client sends nothing again.
tmx send-keys -t alice 'quit' Enter
wait_gone alice "the client quits again"
tmx new-session -d -s alice -x 100 -y 24 "$client"
wait_for alice 'live *$' "restarted with nothing waiting" || true
# A real wait: an increment sent again would reach bob's screen in it.
sleep 0.5
wait_for bob '"count": 3' "the count is still 3" || true
wait_for bob ' v3 ' "and the version still 3" || true

echo "kept: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
