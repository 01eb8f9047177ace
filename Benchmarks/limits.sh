#!/usr/bin/env bash
# One machine's limits, each figure beside its baseline from the same run, every server fresh. The baseline is the
# bare C libwebsockets loop (Benchmarks/baseline), or the in-memory server for the durable one:
#   1. 10 000 idle connections: server RSS per connection;
#   2. 15 000 clients of one server on --event-loop epoll, one writer at 3 actions/s: server CPU per delivery, p99;
#   3. moderate rates (10 writers): p99 at 1 000 clients × 200/s, 1 000 × 1 000/s and 5 000 × 50/s;
#   4. the knee: 1 000 clients, one writer at 4 000 actions/s: p99, in memory and durable (SQLite), and beside the C
#      loop sending patches as long as Lockstep's ($patch_bytes below, `--patch-bytes`), which tells the bytes' cost from
#      the rest;
#   5. durable against memory, acks/s with --data against --memory, 10 writers: with 16 actions in flight each, where a
#      durable ack's wait for its write bounds the rate, and with 256 each, which saturates both servers.
# 100 000 sockets over six servers need PostgreSQL and root: Benchmarks/many-sockets.py.
#
#   Benchmarks/limits.sh [OUTPUT.md]        (LOCKSTEP=path/to/lockstep skips the release build)
#
# Takes about 5 minutes. Needs: swift, cc, libwebsockets-dev, jq, bc.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-/dev/stdout}
source Benchmarks/bench-server.sh

release_lockstep limits
make -s -C Benchmarks/baseline >&2
limits="--max-connections 20000 --max-connections-per-ip 20000 --log-level warning"
# The length of a counter patch from Lockstep, which the padded C loop's patches are given.
patch_bytes=212

# serve NAME: starts server NAME (baseline, padded, memory, epoll, durable) on a free port; sets server_pid and port.
serve() {
    local command
    case $1 in
    baseline) command=(Benchmarks/baseline/baseline --port 0) ;;
    padded) command=(Benchmarks/baseline/baseline --port 0 --patch-bytes "$patch_bytes") ;;
    memory) command=("$lockstep" serve --port 0 --app counter --memory --rate-limit 0 $limits) ;;
    epoll) command=("$lockstep" serve --port 0 --app counter --memory --rate-limit 0 --event-loop epoll $limits) ;;
    durable) command=("$lockstep" serve --port 0 --app counter --data "$work/data-$RANDOM" --rate-limit 0 $limits) ;;
    esac
    "${command[@]}" >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    await_port "limits: the $1 server"
}

# run SERVER NAME LOAD-ARGUMENTS...: one `lockstep load` against a fresh SERVER; its report is $work/SERVER-NAME.json.
run() {
    local server=$1 name=$2
    shift 2
    serve "$server"
    echo "== $server $name: lockstep load $*" >&2
    $lockstep load --url "ws://127.0.0.1:$port/rooms/limits" --server-pid "$server_pid" --json "$@" \
        >"$work/$server-$name.json" || true
    [[ -s "$work/$server-$name.json" ]] || echo '{"passed":false}' >"$work/$server-$name.json"
    stop_server
}

# get SERVER NAME JQ: one value of a run's report.
get() { jq -r "$3" "$work/$1-$2.json"; }

# row LABEL UNIT LOCKSTEP BASELINE: one table row; the ratio is Lockstep's figure over the baseline's.
row() {
    printf "| %s | %s %s | %s %s | %.2f |\n" "$1" "$3" "$2" "$4" "$2" "$(echo "$3 / $4" | bc -l)"
}

for server in baseline epoll; do
    run "$server" idle --scenario connect --clients 10000 --duration 3s --source-addresses 4
    run "$server" sockets --clients 15000 --writers 1 --rate 3 --duration 20s --threads 1 --batch 500 \
        --event-loop epoll
done
for server in baseline memory; do
    run "$server" r200 --clients 1000 --writers 10 --rate 200 --duration 10s
    run "$server" r1000 --clients 1000 --writers 10 --rate 1000 --duration 10s
    run "$server" c5000 --clients 5000 --writers 10 --rate 50 --duration 10s
done
for server in baseline padded memory durable; do
    run "$server" knee --clients 1000 --writers 1 --rate 4000 --duration 10s
done
for server in memory durable; do
    run "$server" burst --scenario burst --clients 10 --writers 10 --duration 10s
    run "$server" saturated --scenario burst --clients 10 --writers 10 --window 256 --duration 10s
done

kib='(.serverRSSPerConnectionBytes / 1024 * 100 | round / 100)'
per_delivery='(.serverCPUSeconds * 1e6 / .deliveries * 100 | round / 100)'
p99='.latencyMs.p99'
{
    echo "| figure | Lockstep | baseline | ratio |"
    echo "| --- | ---: | ---: | ---: |"
    row "10 000 idle connections: server RSS per connection" KiB "$(get epoll idle "$kib")" \
        "$(get baseline idle "$kib")"
    row "15 000 clients, 3 actions/s, epoll: server CPU per delivery" µs "$(get epoll sockets "$per_delivery")" \
        "$(get baseline sockets "$per_delivery")"
    row "same: p99" ms "$(get epoll sockets "$p99")" "$(get baseline sockets "$p99")"
    row "1 000 clients × 200 actions/s: p99" ms "$(get memory r200 "$p99")" "$(get baseline r200 "$p99")"
    row "1 000 clients × 1 000 actions/s: p99" ms "$(get memory r1000 "$p99")" "$(get baseline r1000 "$p99")"
    row "5 000 clients × 50 actions/s: p99" ms "$(get memory c5000 "$p99")" "$(get baseline c5000 "$p99")"
    row "1 000 clients, one writer at 4 000 actions/s, in memory: p99" ms "$(get memory knee "$p99")" \
        "$(get baseline knee "$p99")"
    row "same, durable (SQLite): p99" ms "$(get durable knee "$p99")" "$(get baseline knee "$p99")"
    row "same, in memory, beside the C loop sending $patch_bytes-byte patches as Lockstep does: p99" ms \
        "$(get memory knee "$p99")" "$(get padded knee "$p99")"
    row "10 writers × 16 in flight: acks/s, durable against memory" "/s" \
        "$(get durable burst '.actionsPerSecond | floor')" "$(get memory burst '.actionsPerSecond | floor')"
    row "10 writers × 256 in flight (saturated): acks/s, durable against memory" "/s" \
        "$(get durable saturated '.actionsPerSecond | floor')" "$(get memory saturated '.actionsPerSecond | floor')"
    echo
    echo "Every run passed (every delivery in order, none missing): $(cat "$work"/*.json | jq -s 'all(.passed)')."
} >"$out"
[[ "$out" == /dev/stdout ]] || cat "$out"
