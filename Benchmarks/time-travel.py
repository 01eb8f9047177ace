#!/usr/bin/env python3
"""Time travel against a real `lockstep serve`: revert 1 000 versions back in a room of 100 000 todos items, and the
time to the first byte of GET /rooms/ROOM/log for a 100 000-change room, beside an ordinary action in the same run.

The room is written straight into a data directory (100 000 `add` changes with their inverses, and a snapshot at
the end), the way the server itself logs them, so the run does not spend minutes building it through the socket.

    python3 Benchmarks/time-travel.py .build/release/lockstep [ITEMS]
"""
import base64
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOM = "big"


def message(version, ops, cause, undo):
    return json.dumps(
        {"type": "patch", "version": version, "ops": ops, "cause": cause, "undo": undo, "redo": 0},
        separators=(",", ":"),
    ).encode()


def write_room(directory, items):
    """A todos room whose version k added item k, logged like the server logs it, with a snapshot at the end."""
    db = sqlite3.connect(os.path.join(directory, "rooms.sqlite"))
    db.executescript(
        """
        PRAGMA journal_mode = WAL;
        CREATE TABLE changes (room TEXT NOT NULL, version INTEGER NOT NULL, message BLOB NOT NULL,
            inverse BLOB NOT NULL, time REAL NOT NULL, PRIMARY KEY (room, version)) WITHOUT ROWID;
        CREATE TABLE snapshots (room TEXT NOT NULL, version INTEGER NOT NULL, state BLOB NOT NULL,
            history BLOB NOT NULL, time REAL NOT NULL, PRIMARY KEY (room, version)) WITHOUT ROWID;
        """
    )
    now = time.time()
    rows = []
    for k in range(1, items + 1):
        item = {"id": k, "title": f"item {k}", "done": False}
        ops = [{"op": "add", "path": f"/items/{k - 1}", "value": item}, {"op": "replace", "path": "/nextId", "value": k + 1}]
        inverse = [{"op": "replace", "path": "/nextId", "value": k}, {"op": "remove", "path": f"/items/{k - 1}"}]
        cause = {"kind": "action", "client": "c1", "id": f"a{k}", "action": {"type": "add", "title": f"item {k}"}}
        rows.append((ROOM, k, message(k, ops, cause, min(k, 1000)), json.dumps(inverse, separators=(",", ":")).encode(), now))
    db.executemany("INSERT INTO changes VALUES (?, ?, ?, ?, ?)", rows)
    state = {"items": [{"id": k, "title": f"item {k}", "done": False} for k in range(1, items + 1)], "nextId": items + 1}
    db.execute(
        "INSERT INTO snapshots VALUES (?, ?, ?, ?, ?)",
        (ROOM, items, json.dumps(state, separators=(",", ":")).encode(), b'{"undo":[],"redo":[]}', now),
    )
    db.commit()
    db.close()


class Client:
    """Just enough RFC 6455 for one text conversation: masked frames out, unmasked frames in."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET /rooms/{ROOM} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1]

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def receive(self):
        head = self._read(2)
        length = head[1] & 0x7F
        if length == 126:
            length = int.from_bytes(self._read(2), "big")
        elif length == 127:
            length = int.from_bytes(self._read(8), "big")
        return json.loads(self._read(length))

    def send(self, obj):
        payload = json.dumps(obj, separators=(",", ":")).encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + len(payload).to_bytes(2, "big")
        else:
            header += bytes([0x80 | 127]) + len(payload).to_bytes(8, "big")
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def request(self, obj):
        """Sends `obj` and returns (seconds to its ack or error, that reply)."""
        started = time.perf_counter()
        self.send(obj)
        while True:
            reply = self.receive()
            if reply.get("type") in ("ack", "error") and reply.get("id") == obj["id"]:
                return time.perf_counter() - started, reply


def first_byte(port, path):
    """Seconds to the first byte of the answer, seconds to its end, and its size."""
    sock = socket.create_connection(("127.0.0.1", port))
    started = time.perf_counter()
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    first = sock.recv(65536)
    ttfb = time.perf_counter() - started
    size = len(first)
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        size += len(chunk)
    total = time.perf_counter() - started
    sock.close()
    assert first.startswith(b"HTTP/1.1 200"), first[:80]
    return ttfb, total, size


def main():
    binary = sys.argv[1]
    items = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    directory = tempfile.mkdtemp(prefix="lockstep-bench-")
    started = time.perf_counter()
    write_room(directory, items)
    print(f"wrote a {items}-change todos room in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    server = subprocess.Popen(
        [binary, "serve", "--port", "0", "--app", "todos", "--data", directory, "--rate-limit", "0",
         "--keep-history", str(2 * items), "--log-level", "warning"] + sys.argv[3:],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        line = server.stdout.readline()
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        client = Client(port)
        snapshot = client.receive()
        version = snapshot["version"]
        assert len(snapshot["state"]["items"]) == items

        def median(samples):
            return statistics.median(samples) * 1e3

        # An ordinary action, toggled back and forth.
        action = []
        for index in range(40):
            seconds, reply = client.request({"type": "action", "id": f"t{index}", "action": {"type": "toggle", "id": 1}})
            assert reply["type"] == "ack", reply
            action.append(seconds)
        version += 40

        # 1 000 versions back, mostly from the log (the room was loaded: only the 40 toggles are in memory).
        seconds, reply = client.request({"type": "revert", "id": "from-log", "to": version - 1_000})
        assert reply["type"] == "ack", reply
        from_log = seconds
        version += 1
        seconds, reply = client.request({"type": "undo", "id": "u0"})
        version += 1

        # 1 000 versions back, from memory: 1 000 fresh changes, then back over them.
        for index in range(1_000):
            client.send({"type": "action", "id": f"m{index}", "action": {"type": "toggle", "id": 2}})
        while True:
            reply = client.receive()
            if reply.get("type") == "ack" and reply.get("id") == "m999":
                break
        version += 1_000
        in_memory = []
        for index in range(5):
            seconds, reply = client.request({"type": "revert", "id": f"r{index}", "to": version - 1_000})
            assert reply["type"] == "ack", reply
            in_memory.append(seconds)
            version += 1
            _, reply = client.request({"type": "undo", "id": f"ru{index}"})
            version += 1

        recent = [first_byte(port, f"/rooms/{ROOM}/log?after={version - 1_000}") for _ in range(5)]
        whole = first_byte(port, f"/rooms/{ROOM}/log")
        past = [first_byte(port, f"/rooms/{ROOM}?version={version - 1_000}") for _ in range(5)]

        base = median(action)
        rows = [
            ("action (toggle), median of 40", base, None),
            ("revert 1 000 versions back, 960 inverses from the log", from_log * 1e3, None),
            ("revert 1 000 versions back, inverses in memory, median of 5", median(in_memory), None),
            ("GET ?version=V, 1 000 back, median of 5", median([p[0] for p in past]), None),
            ("GET /log?after=V, 1 000 back: first byte, median of 5", median([r[0] for r in recent]), None),
            (f"GET /log, all {version} changes: first byte", whole[0] * 1e3, None),
            (f"GET /log, all {version} changes: whole body ({whole[2] / 1e6:.1f} MB)", whole[1] * 1e3, None),
        ]
        print(f"| measured ({items} todos items, room at version {version}) | ms | × action |")
        print("| --- | ---: | ---: |")
        for name, ms, _ in rows:
            print(f"| {name} | {ms:.2f} | {ms / base:.0f} |")
    finally:
        server.terminate()
        server.wait()
        subprocess.run(["rm", "-rf", directory])


if __name__ == "__main__":
    main()
