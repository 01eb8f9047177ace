#!/usr/bin/env bash
# Memory per idle connection, and what the receive buffer's size costs elsewhere, with libwebsockets' per-connection
# receive buffer at its first size (--receive-buffer 4096), at its second (1024) and at the default (512), in one run
# on this machine, every server fresh:
#   1. 10 000 idle connections (`lockstep load --scenario connect --server-pid`): server RSS per connection;
#   2. 1 000 clients, 10 writers, 1 000 actions/s: deliveries/s and p99 (the fan-out);
#   3. 10 writers keeping 256 actions in flight each: acks/s (fast writers, whose input is read a buffer a pass).
#
#   Benchmarks/idle-memory.sh [OUTPUT.md]        (LOCKSTEP=path/to/lockstep skips the release build)
#
# Takes about two minutes. Needs: swift, jq, bc.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-/dev/stdout}
source Benchmarks/bench-server.sh

release_lockstep idle-memory
common="--port 0 --app counter --memory --rate-limit 0 --max-connections 20000 --max-connections-per-ip 20000"

declare -A rss fanout p99 burst
buffers=(4096 1024 512)
for buffer in "${buffers[@]}"; do
    $lockstep serve $common --receive-buffer "$buffer" --log-level warning >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    await_port "idle-memory: the server"
    $lockstep load --url "ws://127.0.0.1:$port/rooms/idle" --scenario connect --clients 10000 --duration 3s \
        --source-addresses 4 --server-pid "$server_pid" --json >"$work/idle-$buffer.json" || true
    rss[$buffer]=$(jq '.serverRSSPerConnectionBytes / 1024' "$work/idle-$buffer.json")
    $lockstep load --url "ws://127.0.0.1:$port/rooms/fanout" --clients 1000 --writers 10 --rate 1000 \
        --duration 10s --json >"$work/fanout-$buffer.json" || true
    fanout[$buffer]=$(jq '.deliveriesPerSecond | floor' "$work/fanout-$buffer.json")
    p99[$buffer]=$(jq .latencyMs.p99 "$work/fanout-$buffer.json")
    $lockstep load --url "ws://127.0.0.1:$port/rooms/burst" --scenario burst --clients 10 --writers 10 --window 256 \
        --duration 10s --json >"$work/burst-$buffer.json" || true
    burst[$buffer]=$(jq '.actionsPerSecond | floor' "$work/burst-$buffer.json")
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
done

# row LABEL FORMAT FIGURES: one table row, a figure per buffer (FIGURES names an array indexed by buffer size),
# then 512's against the default's.
row() {
    local -n figures=$3
    printf "| %s |" "$1"
    for buffer in "${buffers[@]}"; do printf " $2 |" "${figures[$buffer]}"; done
    printf " %.2f |\n" "$(echo "${figures[512]} / ${figures[1024]}" | bc -l)"
}
{
    echo "| | --receive-buffer 4096 | 1024 | 512 (default) | 512 against 1024 |"
    echo "| --- | ---: | ---: | ---: | ---: |"
    row "10 000 idle connections: server RSS per connection" "%.2f KiB" rss
    row "1 000 clients × 10 writers × 1 000/s: deliveries/s" "%d" fanout
    row "same: p99" "%.1f ms" p99
    row "10 writers × 256 in flight: acks/s" "%d" burst
} >"$out"
[[ "$out" == /dev/stdout ]] || cat "$out"
