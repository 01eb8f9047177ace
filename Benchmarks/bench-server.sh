# Sourced by the benchmark scripts: a work directory, the server each run starts (`server_pid`), and both cleaned
# up when the script exits.
work=$(mktemp -d)
server_pid=""

cleanup() {
    if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Waits for a just-started `lockstep serve` (output in $work/server.out) to name its port; sets `port`, or prints
# NAME and the server's stderr and exits.
await_port() {
    local name=$1
    for _ in $(seq 100); do
        port=$(sed -n 's|.*s://127\.0\.0\.1:\([0-9]*\)/rooms/ROOM.*|\1|p' "$work/server.out" 2>/dev/null)
        [[ -n "$port" ]] && return 0
        sleep 0.1
    done
    echo "$name did not start: $(cat "$work/server.err")" >&2
    exit 1
}

# Sets `lockstep` to the release binary, built first, or to $LOCKSTEP when given; NAME says who needs jq.
release_lockstep() {
    command -v jq >/dev/null || { echo "$1: needs jq (apt-get install jq)" >&2; exit 2; }
    if [[ -z "${LOCKSTEP:-}" ]]; then
        swift build -c release --product lockstep >&2
    fi
    lockstep=${LOCKSTEP:-$(swift build -c release --product lockstep --show-bin-path)/lockstep}
}

# Stops the server started last: SIGTERM, then SIGKILL after 10 s (one closing 10 000 sockets may take longer than
# a benchmark should wait).
stop_server() {
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$server_pid" 2>/dev/null; then
        echo "server did not exit within 10 s of SIGTERM; killing it" >&2
        kill -9 "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}
