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
