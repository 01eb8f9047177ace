#!/usr/bin/env python3
"""A room that only HTTP uses (a backend posting, no WebSocket client), against two builds taking turns: requests
answered, the server's CPU per request and its resident memory at the end.

    python3 Benchmarks/http-only-room.py BEFORE_BINARY AFTER_BINARY

Each run starts `lockstep serve --data DIR --app counter --rate-limit 0` in a fresh directory and has WRITERS
(default 8) threads of this script post one `increment` at a time each, over a keep-alive connection of its own, to
one room for DURATION seconds (default 30). With no client the room becomes idle after every request, which is what
this measures. REPEAT (default 2) rounds.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

DURATION = float(os.environ.get("DURATION", "30"))
WRITERS = int(os.environ.get("WRITERS", "8"))
REPEAT = int(os.environ.get("REPEAT", "2"))
TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def post_for(port, seconds, answered, index):
    body = json.dumps({"type": "action", "action": {"type": "increment"}}).encode()
    request = (b"POST /rooms/busy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    connection = socket.create_connection(("127.0.0.1", port))
    pending = b""
    end = time.time() + seconds
    while time.time() < end:
        connection.sendall(request)
        while b"\r\n\r\n" not in pending:
            pending += connection.recv(65536)
        head, pending = pending.split(b"\r\n\r\n", 1)
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(pending) < length:
            pending += connection.recv(65536)
        pending = pending[length:]
        if head.startswith(b"HTTP/1.1 200"):
            answered[index] += 1
    connection.close()


def run(binary):
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        server = subprocess.Popen(
            [binary, "serve", "--port", str(port), "--data", directory, "--app", "counter", "--rate-limit", "0",
             "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port)).close()
                    break
                except OSError:
                    time.sleep(0.1)
            answered = [0] * WRITERS
            threads = [threading.Thread(target=post_for, args=(port, DURATION, answered, i)) for i in range(WRITERS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            with open(f"/proc/{server.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / TICKS
            with open(f"/proc/{server.pid}/status") as status:
                rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
        finally:
            server.terminate()
            server.wait()
    requests = sum(answered)
    return {"requests": requests, "cpu_us_per_request": cpu / max(1, requests) * 1e6, "rss_mb": rss / 1024}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = sys.argv[1], sys.argv[2]
    for round_number in range(1, REPEAT + 1):
        for name, binary in (("before", before), ("after", after)):
            result = run(binary)
            print(f"round {round_number} {name}: {result['requests']} requests in {DURATION:g} s, "
                  f"{result['cpu_us_per_request']:.1f} µs of server CPU each, {result['rss_mb']:.0f} MB resident")


if __name__ == "__main__":
    main()
