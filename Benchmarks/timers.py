#!/usr/bin/env python3
"""Pending timers of rooms no longer in memory, on a real release `lockstep serve --data DIR`, in one run.

    python3 Benchmarks/timers.py [LOCKSTEP_BINARY] [OUTPUT.md]

Two fresh servers (counter app, `--room-idle 1s`, a fresh data directory each) get the same ROOMS rooms (default
1 000) and TIMERS requests per room (default 10) over HTTP:

- timers: each request is an action scheduled with `after`, named, due between DUE and DUE + 10 seconds after the
  first request (default DUE 60), spread evenly;
- baseline: the same actions applied at once.

Once every room has left memory (`lockstep_rooms` 0), the server's RSS is read: timers ÷ baseline (goal ≤ 1.1x).
Then the timers fire: every room's log is read and every change a timer made is matched with its `scheduled`
answer's `due`; all ROOMS x TIMERS must fire, once each, within 1 s of due (the goal), and the report gives the worst
lateness. LOCKSTEP (a built binary) or SCRATCH_PATH (the release build's scratch path) pick the server.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from benchmarking import publish, release_binary

# This script's directory would hide the standard library's `http` package behind Benchmarks/http.py.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import http.client  # noqa: E402

ROOMS = int(os.environ.get("ROOMS", "1000"))
TIMERS = int(os.environ.get("TIMERS", "10"))
DUE = int(os.environ.get("DUE", "60"))
SPREAD_MS = 10_000


def chosen_binary():
    """The binary named on the command line, or the release build."""
    if len(sys.argv) > 1 and not sys.argv[1].endswith(".md"):
        return os.path.abspath(sys.argv.pop(1))
    return release_binary()


class Server:
    def __init__(self, binary):
        self.directory = tempfile.TemporaryDirectory(prefix="lockstep-timers-bench-")
        self.process = subprocess.Popen(
            [binary, "serve", "--port", "0", "--app", "counter", "--rate-limit", "0", "--room-idle", "1s",
             "--log-level", "warning", "--data", self.directory.name],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        match = re.search(r"127\.0\.0\.1:(\d+)/", self.process.stdout.readline())
        if not match:
            self.stop()
            raise SystemExit("the server did not start")
        self.port = int(match.group(1))
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port)

    def request(self, method, path, body=None):
        """One request on the kept-alive connection; a read is asked again on a new one if the server had closed it
        while idle."""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        for attempt in range(2):
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, ConnectionError):
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port)
                # A POST may have been applied: only a read is asked again.
                if attempt or method != "GET":
                    raise

    def rooms_in_memory(self):
        _, text = self.request("GET", "/metrics")
        match = re.search(rb"^lockstep_rooms (\d+)", text, re.MULTILINE)
        return int(match.group(1)) if match else -1

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))

    def settled_rss(self):
        """The RSS once no room is in memory (and a moment for the allocator), in KiB."""
        deadline = time.time() + 120
        while self.rooms_in_memory() != 0:
            if time.time() > deadline:
                raise SystemExit(f"{self.rooms_in_memory()} rooms still in memory after 120 s")
            time.sleep(0.5)
        time.sleep(2)
        return self.rss_kib()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.directory.cleanup()


def fill(server, scheduled):
    """ROOMS x TIMERS requests; with `scheduled`, each an action with `after`; returns {(room, timer): due ms}."""
    first = time.time() * 1000
    dues = {}
    for index in range(ROOMS * TIMERS):
        room, timer = f"r{index % ROOMS}", f"t{index // ROOMS}"
        request = {"type": "action", "action": {"type": "increment"}}
        if scheduled:
            due = first + DUE * 1000 + index * SPREAD_MS / (ROOMS * TIMERS)
            request.update(after=max(0, int(due - time.time() * 1000)), timer=timer)
        status, body = server.request("POST", f"/rooms/{room}", json.dumps(request).encode())
        if status not in (200, 202):
            raise SystemExit(f"POST /rooms/{room} answered {status}: {body[:200]!r}")
        if scheduled:
            answer = json.loads(body)
            dues[(room, answer["timer"])] = answer["due"]
    return dues


def fired(server, dues):
    """Each timer's lateness in ms (fire time less due) from the rooms' logs; raises if one fired twice or never."""
    lateness = {}
    for room in sorted({room for room, _ in dues}):
        status, body = server.request("GET", f"/rooms/{room}/log")
        if status != 200:
            raise SystemExit(f"GET /rooms/{room}/log answered {status}")
        for line in body.splitlines():
            cause = json.loads(line).get("cause") or {}
            if cause.get("kind") != "timer":
                continue
            key = (room, cause.get("timer"))
            if key in lateness:
                raise SystemExit(f"timer {key} fired twice")
            lateness[key] = cause["at"] - dues[key]
    missing = set(dues) - set(lateness)
    if missing:
        raise SystemExit(f"{len(missing)} timers never fired, e.g. {sorted(missing)[:3]}")
    return lateness


def main():
    binary = chosen_binary()
    output = sys.argv[1] if len(sys.argv) > 1 else None
    baseline = Server(binary)
    try:
        fill(baseline, scheduled=False)
        baseline_rss = baseline.settled_rss()
    finally:
        baseline.stop()
    server = Server(binary)
    try:
        dues = fill(server, scheduled=True)
        timers_rss = server.settled_rss()
        wait = max(dues.values()) / 1000 - time.time() + 3
        if wait < 0:
            raise SystemExit("the timers fell due before the rooms left memory: raise DUE")
        time.sleep(wait)
        lateness = fired(server, dues)
    finally:
        server.stop()
    late = sorted(lateness.values())
    within = sum(1 for value in late if 0 <= value <= 1000)
    lines = [
        f"## {ROOMS * TIMERS} pending timers in {ROOMS} rooms, none in memory",
        "",
        "| | RSS (MiB) |",
        "|---|---:|",
        f"| the same actions applied at once (baseline) | {baseline_rss / 1024:.1f} |",
        f"| pending timers | {timers_rss / 1024:.1f} |",
        "",
        f"- RSS, timers ÷ baseline: **{timers_rss / baseline_rss:.3f}x** (goal ≤ 1.1x)",
        f"- fired: {len(late)} of {len(dues)}, each once; within 1 s of due: **{within}** "
        f"(lateness p50 {late[len(late) // 2]} ms, max {late[-1]} ms, min {late[0]} ms)",
    ]
    publish("\n".join(lines) + "\n", output)


if __name__ == "__main__":
    main()
