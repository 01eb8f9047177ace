#!/usr/bin/env bash
# Runs the fan-out load matrix against the bare C libwebsockets baseline and against `lockstep serve`, on this
# machine, loopback only, and writes a markdown report (default docs/performance-load.md).
#
#   Benchmarks/run-load-matrix.sh [OUTPUT.md]
#
# Each run lasts about DURATION (default 10s); the whole matrix takes about 25 minutes on 2 cores.
# Needs: swift, cc, libwebsockets-dev, jq.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-docs/performance-load.md}
duration=${DURATION:-10s}
drain=${DRAIN:-20s}
rates=${RATES:-"50 100 200 400 800 1600 3200 6400 12800"}
bisections=${BISECTIONS:-3}
source Benchmarks/bench-server.sh

command -v jq >/dev/null || { echo "run-load-matrix: needs jq (apt-get install jq)" >&2; exit 2; }

echo "== building release lockstep and the baseline" >&2
swift build -c release --product lockstep >&2
make -s -C Benchmarks/baseline >&2
lockstep=$(swift build -c release --product lockstep --show-bin-path)/lockstep
baseline=Benchmarks/baseline/baseline

declare -A server_cmd=(
    [baseline]="$baseline --port 0"
    [lockstep]="$lockstep serve --port 0 --app counter --memory --rate-limit 0 --max-connections 20000 --max-connections-per-ip 20000 --log-level warning"
)
commands=()

# Starts a fresh server for TARGET on a free port; sets server_pid and port.
start_server() {
    local target=$1
    rm -f "$work/server.out" "$work/server.err"
    ${server_cmd[$target]} >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    await_port "run-load-matrix: $target"
}

# run_load TARGET NAME ARGS...: one load run on a fresh server; the JSON report lands in $work/TARGET-NAME.json.
run_load() {
    local target=$1 name=$2
    shift 2
    start_server "$target"
    local args=(--url "ws://127.0.0.1:$port/rooms/bench" --drain "$drain" --json "$@")
    [[ " $* " == *" connect "* ]] && args+=(--server-pid "$server_pid")
    commands+=("${server_cmd[$target]/$lockstep/lockstep} &  # port $port")
    commands+=("lockstep load ${args[*]}")
    echo "== $target $name: lockstep load ${args[*]}" >&2
    "$lockstep" load "${args[@]}" >"$work/$target-$name.json" || true
    [[ -s "$work/$target-$name.json" ]] || echo '{"passed":false,"firstError":"no report"}' >"$work/$target-$name.json"
    jq -c '{passed, deliveriesPerSecond, p99: .latencyMs.p99, missing, gaps, snapshots, firstError}' \
        "$work/$target-$name.json" >&2
    stop_server
}

# field RUN PATH: one number or value of a run's report, rounded to 3 significant digits past the point.
field() { jq -r "($2 // \"n/a\") | if type == \"number\" then (. * 10 | round / 10) else . end" "$work/$1.json"; }

# One cell: the key numbers of a run, for people.
details() {
    jq -r '"\(.deliveriesPerSecond|floor) deliv/s, \(.actionsPerSecond*10|floor/10) acked/s, p50 \(.latencyMs.p50) / '\
'p99 \(.latencyMs.p99) / max \(.latencyMs.max) ms, missing \(.missing), gaps \(.gaps), resyncs \(.snapshots), '\
'gen CPU \(.generatorCPUSeconds*10|floor/10) s, \(if .passed then "PASS" else "FAIL" end)"' "$work/$1.json" 2>/dev/null \
        || echo "no report"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b+0 == 0 || a == "n/a" || b == "n/a") print "n/a"; else printf "%.2f", a / b }'; }

rows=(
    "light|100 clients, 1 writer, 1 000 actions/s|p99 ms|.latencyMs.p99|--clients 100 --writers 1 --rate 1000 --duration $duration"
    "c1000|1 000 clients, 1 writer, 50 actions/s|deliveries/s|.deliveriesPerSecond|--clients 1000 --writers 1 --rate 50 --duration $duration"
    "c5000|5 000 clients, 1 writer, 20 actions/s|deliveries/s|.deliveriesPerSecond|--clients 5000 --writers 1 --rate 20 --duration $duration"
    "saturation|1 000 clients, 10 writers, 1 000 actions/s offered|deliveries/s|.deliveriesPerSecond|--clients 1000 --writers 10 --rate 1000 --duration $duration"
    "overload|1 000 clients, 10 writers, 10 000 actions/s offered (past saturation)|deliveries/s|.deliveriesPerSecond|--clients 1000 --writers 10 --rate 10000 --duration $duration"
)

declare -A best idle searched

# held TARGET RATE: one search run; succeeds if every delivery arrived and p99 < 100 ms.
held() {
    searched[$1]+=" $2"
    run_load "$1" "search-$2" --clients 1000 --writers 1 --rate "$2" --duration "$duration"
    [[ $(field "$1-search-$2" .passed) == true ]] \
        && awk -v p="$(field "$1-search-$2" .latencyMs.p99)" 'BEGIN { exit !(p < 100) }'
}

for target in baseline lockstep; do
    for row in "${rows[@]}"; do
        IFS='|' read -r name _ _ _ args <<<"$row"
        # shellcheck disable=SC2086
        run_load "$target" "$name" $args
    done
    # The highest rate 1 000 clients x 1 writer hold with p99 < 100 ms and nothing lost: doubling until a rate
    # fails, then halving the interval between the last rate held and the first one missed.
    best[$target]=0
    failed=""
    for rate in $rates; do
        if held "$target" "$rate"; then best[$target]=$rate; else failed=$rate; break; fi
    done
    if [[ -n "$failed" && ${best[$target]} -gt 0 ]]; then
        low=${best[$target]} high=$failed
        for _ in $(seq "$bisections"); do
            mid=$(( (low + high) / 2 ))
            if held "$target" "$mid"; then low=$mid; else high=$mid; fi
        done
        best[$target]=$low
    fi
    run_load "$target" idle --scenario connect --clients 10000 --batch 500 --duration 5s
done

{
    echo "# Fan-out load: Lockstep vs a bare C libwebsockets loop"
    echo
    echo "Generated by \`Benchmarks/run-load-matrix.sh\` on $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)."
    echo "Machine: $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), Linux $(uname -r),"
    echo "libwebsockets $(pkg-config --modversion libwebsockets 2>/dev/null || echo '?'). Load generator on the same"
    echo "machine (\`lockstep load\`, $(nproc) client loops). Each run: a fresh server, one room, ${duration} of sending,"
    echo "latency = scheduled send to receipt for every delivery (open loop)."
    echo
    echo "| Scenario | Key metric | baseline | lockstep | lockstep/baseline |"
    echo "| --- | --- | ---: | ---: | ---: |"
    for row in "${rows[@]}"; do
        IFS='|' read -r name label metric path _ <<<"$row"
        b=$(field "baseline-$name" "$path"); l=$(field "lockstep-$name" "$path")
        echo "| $label | $metric | $b | $l | $(ratio "$l" "$b") |"
    done
    echo "| Highest rate held, 1 000 clients x 1 writer (p99 < 100 ms, nothing lost) | actions/s | ${best[baseline]} | ${best[lockstep]} | $(ratio "${best[lockstep]}" "${best[baseline]}") |"
    b=$(field baseline-idle .serverRSSPerConnectionBytes); l=$(field lockstep-idle .serverRSSPerConnectionBytes)
    echo "| 10 000 idle connections | server RSS bytes/connection | $b | $l | $(ratio "$l" "$b") |"
    echo
    echo "## Details"
    echo
    echo "| Run | baseline | lockstep |"
    echo "| --- | --- | --- |"
    for row in "${rows[@]}"; do
        IFS='|' read -r name label _ _ _ <<<"$row"
        echo "| $label | $(details "baseline-$name") | $(details "lockstep-$name") |"
    done
    for rate in $(tr ' ' '\n' <<<"${searched[baseline]} ${searched[lockstep]}" | sort -nu); do
        echo "| search: 1 000 clients, $rate actions/s | $(details "baseline-search-$rate") | $(details "lockstep-search-$rate") |"
    done
    for target in baseline lockstep; do
        idle[$target]="$(field "$target-idle" .connected) connected, RSS $(field "$target-idle" .serverRSSBeforeKiB) -> $(field "$target-idle" .serverRSSAfterKiB) KiB"
    done
    echo "| 10 000 idle connections | ${idle[baseline]} | ${idle[lockstep]} |"
    echo
    echo "## Commands"
    echo
    echo '```'
    printf '%s\n' "${commands[@]}"
    echo '```'
} >"$out"
echo "wrote $out" >&2
