#!/usr/bin/env bash
# Memory per idle connection, and the fan-out beside it, with libwebsockets' per-connection receive buffer at its old
# size (--receive-buffer 4096) and at the default (1024), in one run on this machine, every server fresh:
#   1. 10 000 idle connections (`lockstep load --scenario connect --server-pid`): server RSS per connection;
#   2. 1 000 clients, 10 writers, 1 000 actions/s: deliveries/s and p99, so the cut is seen to cost no fan-out.
#
#   Benchmarks/idle-memory.sh [OUTPUT.md]        (LOCKSTEP=path/to/lockstep skips the release build)
#
# Takes about a minute. Needs: swift, jq, bc.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-/dev/stdout}
source Benchmarks/bench-server.sh

release_lockstep idle-memory
common="--port 0 --app counter --memory --rate-limit 0 --max-connections 20000 --max-connections-per-ip 20000"

declare -A rss fanout p99
for buffer in 4096 1024; do
    $lockstep serve $common --receive-buffer "$buffer" --log-level warning >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    await_port "idle-memory: the server"
    $lockstep load --url "ws://127.0.0.1:$port/rooms/idle" --scenario connect --clients 10000 --duration 3s \
        --source-addresses 4 --server-pid "$server_pid" --json >"$work/idle-$buffer.json" || true
    rss[$buffer]=$(jq .serverRSSPerConnectionBytes "$work/idle-$buffer.json")
    $lockstep load --url "ws://127.0.0.1:$port/rooms/fanout" --clients 1000 --writers 10 --rate 1000 \
        --duration 10s --json >"$work/fanout-$buffer.json" || true
    fanout[$buffer]=$(jq '.deliveriesPerSecond | floor' "$work/fanout-$buffer.json")
    p99[$buffer]=$(jq .latencyMs.p99 "$work/fanout-$buffer.json")
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
done

{
    echo "| | --receive-buffer 4096 (before) | 1024 (default) | ratio |"
    echo "| --- | ---: | ---: | ---: |"
    printf "| 10 000 idle connections: server RSS per connection | %.2f KiB | %.2f KiB | %.2f |\n" \
        "$(echo "${rss[4096]} / 1024" | bc -l)" "$(echo "${rss[1024]} / 1024" | bc -l)" \
        "$(echo "${rss[1024]} / ${rss[4096]}" | bc -l)"
    printf "| 1 000 clients × 10 writers × 1 000/s: deliveries/s | %d | %d | %.2f |\n" \
        "${fanout[4096]}" "${fanout[1024]}" "$(echo "${fanout[1024]} / ${fanout[4096]}" | bc -l)"
    printf "| same: p99 | %.1f ms | %.1f ms | %.2f |\n" "${p99[4096]}" "${p99[1024]}" \
        "$(echo "${p99[1024]} / ${p99[4096]}" | bc -l)"
} >"$out"
[[ "$out" == /dev/stdout ]] || cat "$out"
