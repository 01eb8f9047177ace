#!/usr/bin/env bash
# The edge of issue #23 in one run on this machine, loopback only, every server fresh, reported as ratios:
#   1. server CPU per delivery, 1 000 deflate clients beside 1 000 plain ones against 2 000 plain (todos patches);
#   2. bytes on the wire, compressed against plain: a 100 000-item snapshot and a todos patch stream;
#   3. TLS beside plain: the fan-out rates held and deliveries per second around the knee.
#
#   Benchmarks/edge-transport.sh [OUTPUT.md]
#
# Takes about 5 minutes on 2 cores. Needs: swift, jq, bc, python3, openssl.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-/dev/stdout}
duration=${DURATION:-10s}
tls_rates=${TLS_RATES:-"1600 3200 6400 12800"}
source Benchmarks/bench-server.sh

# LOCKSTEP=path/to/lockstep skips the build.
release_lockstep edge-transport
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

common="--port 0 --memory --rate-limit 0 --max-connections 20000 --max-connections-per-ip 20000 --log-level warning"

# Starts a fresh `lockstep serve $common ARGS...`; sets server_pid and port.
start_server() {
    $lockstep serve $common "$@" >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    await_port "edge-transport: the server"
}

# User plus system CPU of the server so far, in clock ticks.
server_ticks() { awk '{ print $14 + $15 }' "/proc/$server_pid/stat"; }

# 1. CPU per delivery.
declare -A cpu
for mix in plain mixed; do
    start_server --app todos
    deflate=0
    [[ $mix == mixed ]] && deflate=1000
    before=$(server_ticks)
    $lockstep load --url "ws://127.0.0.1:$port/rooms/bench" --app todos --clients 2000 --writers 1 --rate 100 \
        --duration "$duration" --deflate "$deflate" --json >"$work/load-$mix.json" || true
    after=$(server_ticks)
    deliveries=$(jq .deliveries "$work/load-$mix.json")
    cpu[$mix]=$(echo "($after - $before) * 1000000 / $(getconf CLK_TCK) / $deliveries" | bc -l)
    cpu[$mix-deliveries]=$deliveries
    stop_server
done
cpu_ratio=$(echo "${cpu[mixed]} / ${cpu[plain]}" | bc -l)

# 2. Bytes on the wire.
start_server --app json --max-frame 67108864
snapshot=$(python3 Benchmarks/wire-bytes.py snapshot "$port")
stop_server
start_server --app todos
stream=$(python3 Benchmarks/wire-bytes.py todos "$port")
stop_server

# 3. TLS beside plain, 500 clients, rising rates.
tls_rows=""
for rate in $tls_rates; do
    for scheme in ws wss; do
        if [[ $scheme == wss ]]; then
            start_server --app counter --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
        else
            start_server --app counter
        fi
        $lockstep load --url "$scheme://127.0.0.1:$port/rooms/bench" --ca-file "$work/cert.pem" --clients 500 \
            --rate "$rate" --duration "$duration" --json >"$work/tls-$scheme.json" || true
        stop_server
    done
    row() { jq -r '"\(.actionsPerSecond | floor) | \(.deliveriesPerSecond | floor) | \(.latencyMs.p99) | \(.passed)"' "$1"; }
    plain_dps=$(jq .deliveriesPerSecond "$work/tls-ws.json")
    tls_dps=$(jq .deliveriesPerSecond "$work/tls-wss.json")
    ratio=$(echo "$tls_dps / $plain_dps" | bc -l)
    tls_rows+="| $rate | $(row "$work/tls-ws.json") | $(row "$work/tls-wss.json") | $(printf '%.2f' "$ratio") |"$'\n'
done

{
    echo "## Edge transport: deflate and TLS ($(date -u +%Y-%m-%d), $(nproc) cores, loopback)"
    echo
    echo "Server CPU per delivery, todos adds at 100/s to 2 000 clients for $duration (one run each, fresh servers):"
    echo
    echo "| clients | deliveries | server CPU per delivery |"
    echo "| --- | --- | --- |"
    printf '| 2 000 plain | %s | %.3f µs |\n' "${cpu[plain-deliveries]}" "${cpu[plain]}"
    printf '| 1 000 deflate + 1 000 plain | %s | %.3f µs |\n' "${cpu[mixed-deliveries]}" "${cpu[mixed]}"
    printf '\nRatio (mixed / plain): **%.2fx** (goal: at most 1.2x).\n\n' "$cpu_ratio"
    echo "Bytes on the wire, compressed against plain:"
    echo
    echo "| what | plain | deflate | ratio |"
    echo "| --- | --- | --- | --- |"
    echo "$snapshot" | jq -r '"| 100 000-item snapshot (one frame) | \(.snapshotBytes.plain) | \(.snapshotBytes.deflate) | \(.ratio) |"'
    echo "$stream" | jq -r '"| \(.patches) todos add patches | \(.patchBytes.plain) | \(.patchBytes.deflate) | \(.ratio) |"'
    echo
    echo "TLS beside plain, counter fan-out to 500 clients for $duration per rate (actions/s held, deliveries/s, p99 ms,"
    echo "passed), ratio = TLS deliveries/s over plain:"
    echo
    echo "| offered/s | ws acked/s | ws deliveries/s | ws p99 | ws passed | wss acked/s | wss deliveries/s | wss p99 | wss passed | ratio |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s' "$tls_rows"
} >"$out"
