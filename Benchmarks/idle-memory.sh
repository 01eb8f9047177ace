#!/usr/bin/env bash
# Memory per idle connection, and what the receive buffer's size costs elsewhere, with libwebsockets' per-connection
# receive buffer at its first size (--receive-buffer 4096), at its second (1024) and at the default (512), in one run
# on this machine, every server fresh:
#   1. 10 000 idle connections (`lockstep load --scenario connect --server-pid`): server RSS per connection, in memory
#      (--memory) and durable (--data, a fresh SQLite log), side by side with their ratio;
#   2. 1 000 clients, 10 writers, 1 000 actions/s: deliveries/s and p99 (the fan-out, in memory);
#   3. 10 writers keeping 256 actions in flight each: acks/s (fast writers, whose input is read a buffer a pass).
#
#   Benchmarks/idle-memory.sh [OUTPUT.md]        (LOCKSTEP=path/to/lockstep skips the release build)
#
# Takes about three minutes. Needs: swift, jq, bc.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-/dev/stdout}
source Benchmarks/bench-server.sh

release_lockstep idle-memory
common="--port 0 --app counter --rate-limit 0 --max-connections 20000 --max-connections-per-ip 20000"

# idle STORAGE BUFFER: 10 000 idle connections to the server just started; prints its RSS per connection in KiB.
idle() {
    $lockstep load --url "ws://127.0.0.1:$port/rooms/idle" --scenario connect --clients 10000 --duration 3s \
        --source-addresses 4 --server-pid "$server_pid" --json >"$work/idle-$1-$2.json" || true
    jq '.serverRSSPerConnectionBytes / 1024' "$work/idle-$1-$2.json"
}

declare -A rss durable ratio fanout p99 burst
buffers=(4096 1024 512)
for buffer in "${buffers[@]}"; do
    # Durable first, on a log of its own: only the idle connections, beside the in-memory server's below.
    $lockstep serve $common --data "$work/data-$buffer" --receive-buffer "$buffer" --log-level warning \
        >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    await_port "idle-memory: the durable server"
    durable[$buffer]=$(idle durable "$buffer")
    stop_server
    $lockstep serve $common --memory --receive-buffer "$buffer" --log-level warning \
        >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    await_port "idle-memory: the server"
    rss[$buffer]=$(idle memory "$buffer")
    ratio[$buffer]=$(echo "${durable[$buffer]} / ${rss[$buffer]}" | bc -l)
    $lockstep load --url "ws://127.0.0.1:$port/rooms/fanout" --clients 1000 --writers 10 --rate 1000 \
        --duration 10s --json >"$work/fanout-$buffer.json" || true
    fanout[$buffer]=$(jq '.deliveriesPerSecond | floor' "$work/fanout-$buffer.json")
    p99[$buffer]=$(jq .latencyMs.p99 "$work/fanout-$buffer.json")
    $lockstep load --url "ws://127.0.0.1:$port/rooms/burst" --scenario burst --clients 10 --writers 10 --window 256 \
        --duration 10s --json >"$work/burst-$buffer.json" || true
    burst[$buffer]=$(jq '.actionsPerSecond | floor' "$work/burst-$buffer.json")
    stop_server
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
    row "10 000 idle connections: server RSS per connection, in memory" "%.2f KiB" rss
    row "same, durable (--data)" "%.2f KiB" durable
    row "same, durable against in memory (goal: within 1.1x)" "%.2fx" ratio
    row "1 000 clients × 10 writers × 1 000/s: deliveries/s" "%d" fanout
    row "same: p99" "%.1f ms" p99
    row "10 writers × 256 in flight: acks/s" "%d" burst
} >"$out"
[[ "$out" == /dev/stdout ]] || cat "$out"
