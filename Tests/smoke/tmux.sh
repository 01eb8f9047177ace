#!/usr/bin/env bash
# End-to-end check of the terminal client as a person uses it: a counter server, two lockstep-client screens in
# tmux (80x24), commands typed into one, the other's screen read back; a third follows only /count (--path).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin_dir=${LOCKSTEP_BIN_DIR:-$(swift build --show-bin-path)}
server_bin="$bin_dir/lockstep"
client_bin="$bin_dir/lockstep-client"
[ -x "$server_bin" ] && [ -x "$client_bin" ] || { echo "tmux smoke: build lockstep and lockstep-client first"; exit 1; }
command -v tmux >/dev/null || { echo "tmux smoke: tmux is not installed"; exit 1; }

log=$(mktemp)
socket="lockstep-smoke-$$"
tmx() { tmux -L "$socket" "$@"; }
cleanup() {
    tmx kill-server 2>/dev/null || true
    [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
    rm -f "$log"
}
trap cleanup EXIT

"$server_bin" serve --port 0 --app counter --memory >"$log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 300); do
    port=$(grep -o 'ws://127.0.0.1:[0-9]*' "$log" | head -n 1 | sed 's/.*://' || true)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "tmux smoke: the server did not start"; cat "$log"; exit 1; }
url="ws://127.0.0.1:$port/rooms/smoke"

tmx new-session -d -s alice -x 80 -y 24 "TERM=xterm-256color NO_COLOR=1 '$client_bin' '$url' --name alice"
tmx new-session -d -s bob -x 80 -y 24 "TERM=xterm-256color NO_COLOR=1 '$client_bin' '$url' --name bob"

source Tests/smoke/wait_for.sh

wait_for alice 'live' "alice is connected" || true
wait_for bob 'peers: .*alice.*bob|peers: .*bob.*alice' "bob sees both peers" || true
wait_for bob '"count": 0' "bob sees the initial count" || true

# Each log line names the author and the server's time of the change, from the change's cause: v1 alice 14:03:07 ...
at='[0-2][0-9]:[0-5][0-9]:[0-5][0-9]'
tmx send-keys -t alice '+' Enter
wait_for bob '"count": 1' "bob sees alice's increment" || true
wait_for bob "v1 alice $at increment" "bob's log names alice and the time" || true

tmx send-keys -t alice 'undo' Enter
wait_for bob '"count": 0' "bob sees alice's undo" || true
wait_for bob "v2 alice $at undid v1" "bob's log shows the undo" || true

tmx send-keys -t bob 'redo' Enter
wait_for alice '"count": 1' "alice sees bob's redo" || true

# Undo mine takes back alice's own latest change; bob's later one stays.
tmx send-keys -t alice '+' Enter
wait_for bob '"count": 2' "bob sees alice's second increment" || true
tmx send-keys -t bob 'add 10' Enter
wait_for alice '"count": 12' "alice sees bob's add" || true
tmx send-keys -t alice 'undo mine' Enter
wait_for bob '"count": 11' "alice's undo mine leaves bob's add" || true
wait_for bob "v6 alice $at undid own v4" "bob's log shows alice took back her own change" || true
tmx send-keys -t bob 'redo mine' Enter
wait_for bob 'redo mine: there is nothing to redo \(nothing_to_redo\)' "bob has nothing of his own to redo" || true
tmx send-keys -t alice 'redo mine' Enter
wait_for bob "v7 alice $at redid own v4" "alice re-applies her own change" || true
wait_for bob '"count": 12' "bob sees alice's redo mine" || true

# A client of part of the room (--path) shows the value there; its commands still act on the whole room.
tmx new-session -d -s carol -x 80 -y 24 "TERM=xterm-256color NO_COLOR=1 '$client_bin' '$url' --name carol --path /count"
wait_for carol 'room smoke  path /count' "carol's header names the path she follows" || true
wait_for carol '^ *12 *$' "carol's screen shows the value at /count" || true
tmx send-keys -t carol '+' Enter
wait_for alice '"count": 13' "an increment from carol's view reaches the room" || true
wait_for carol "v8 carol $at increment" "carol's log shows her change" || true
tmx send-keys -t carol C-c

tmx send-keys -t alice 'frobnicate' Enter
wait_for alice "unknown command 'frobnicate'" "a typo is explained inline" || true

if [ -n "${TMUX_SMOKE_CAPTURE:-}" ]; then
    { echo "--- alice"; tmx capture-pane -p -t alice; echo "--- bob"; tmx capture-pane -p -t bob; } >"$TMUX_SMOKE_CAPTURE"
fi

tmx send-keys -t alice C-c
tmx send-keys -t bob C-d
for _ in $(seq 300); do
    tmx has-session -t alice 2>/dev/null || tmx has-session -t bob 2>/dev/null || break
    sleep 0.1
done
if tmx has-session -t alice 2>/dev/null || tmx has-session -t bob 2>/dev/null; then
    echo "FAILED: Ctrl-C / Ctrl-D quit both clients"
    failed=$((failed + 1))
else
    echo "ok: Ctrl-C / Ctrl-D quit both clients"
    passed=$((passed + 1))
fi

echo "tmux: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
