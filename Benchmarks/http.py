#!/usr/bin/env python3
"""Requests over HTTP and following a room's log against a real release `lockstep serve`, each figure beside its
WebSocket baseline from the same run, on one room, with a `--memory` server and with a `--data DIR` server.

    python3 Benchmarks/http.py [LOCKSTEP_BINARY] [OUTPUT.md]

Every run gets a fresh server (counter app, no rate limit; for `--data`, a fresh directory) and one
`lockstep load --json --server-pid`:

1. writes: 8 HTTP writers, each posting one action at a time over its own keep-alive connection
   (`--scenario http --writers 8`, with 8 WebSocket readers), beside 8 WebSocket writers keeping their default window
   of actions in flight (`--scenario burst --writers 8`, the same 8 sockets reading): acked requests/s over acked
   actions/s (goal ≥ 0.5);
2. following: at a fixed rate (one writer, RATE changes/s, default 2 000), the server's CPU with READERS extra
   followers (`GET /rooms/ROOM/log?follow=true`, each read by a thread of this script that checks its versions are
   contiguous) and with READERS extra WebSocket clients, each less the CPU of the same run without an extra reader:
   the cost of one follow stream over the cost of one WebSocket client (goal ≤ 1.5). READERS (default 10) spreads
   the measurement over several readers of each kind, so that a reader's cost stands out of the run's noise.

The server's CPU comes from /proc (`serverCPUSeconds`, the timed part and its drain). DURATION (seconds, default 10)
sets each run's length. LOCKSTEP (a built binary) or SCRATCH_PATH (the release build's scratch path) pick the server.
The generator and the followers share the machine with the server.
"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

DURATION = int(os.environ.get("DURATION", "10"))
RATE = int(os.environ.get("RATE", "2000"))
READERS = int(os.environ.get("READERS", "10"))
WRITERS = 8
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def release_binary():
    if os.environ.get("LOCKSTEP"):
        return os.path.abspath(os.environ["LOCKSTEP"])
    build = ["swift", "build", "-c", "release", "--product", "lockstep"]
    if os.environ.get("SCRATCH_PATH"):
        build += ["--scratch-path", os.environ["SCRATCH_PATH"]]
    subprocess.run(build, cwd=ROOT, check=True)
    path = subprocess.run(build + ["--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return os.path.join(path.strip(), "lockstep")


class Server:
    """A fresh `lockstep serve` on a free port for one run; `--data` in a fresh directory unless in memory."""

    def __init__(self, binary, memory):
        self.directory = None if memory else tempfile.TemporaryDirectory(prefix="lockstep-http-bench-")
        storage = ["--memory"] if memory else ["--data", self.directory.name]
        self.process = subprocess.Popen(
            [binary, "serve", "--port", "0", "--app", "counter", "--rate-limit", "0",
             "--max-connections-per-ip", "20000", "--log-level", "warning"] + storage,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"127\.0\.0\.1:(\d+)/", line)
        if not match:
            self.stop()
            raise SystemExit(f"the server did not start: {line!r}")
        self.port = int(match.group(1))

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        if self.directory:
            self.directory.cleanup()


class Follower:
    """One `GET /rooms/ROOM/log?follow=true` read line by line on a thread: counts the changes and checks that their
    versions are contiguous."""

    def __init__(self, port, room):
        self.connection = http.client.HTTPConnection("127.0.0.1", port)
        self.connection.request("GET", f"/rooms/{room}/log?after=0&follow=true")
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise SystemExit(f"following failed: {self.response.status} {self.response.read()[:200]!r}")
        self.changes = 0
        self.gaps = 0
        self.last = None
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for line in self.response:
                if not line.strip():
                    continue
                message = json.loads(line)
                version = message.get("version")
                if not isinstance(version, int):
                    continue
                if message.get("type") == "patch":
                    if self.last is not None and version != self.last + 1:
                        self.gaps += 1
                    self.changes += 1
                self.last = version
        except (OSError, http.client.HTTPException, ValueError):
            pass

    def close(self):
        self.connection.close()


def load(binary, server, **options):
    """One `lockstep load` against `server`; its JSON report, with the server's CPU per acked change."""
    args = [binary, "load", "--json", "--url", f"ws://127.0.0.1:{server.port}/rooms/bench",
            "--duration", f"{DURATION}s", "--drain", "30s", "--server-pid", str(server.process.pid)]
    for key, value in options.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    result = subprocess.run(args, capture_output=True, text=True)
    try:
        report = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"lockstep load {' '.join(args[2:])} failed: {result.stderr[-2000:]}")
    cpu = report.get("serverCPUSeconds") or 0
    report["serverMicrosPerChange"] = cpu / report["acked"] * 1e6 if report["acked"] else 0
    print(f"  {' '.join(args[2:])}: {report['actionsPerSecond']:.0f} acked/s, server {cpu:.2f} s, "
          f"generator {report['generatorCPUSeconds']:.2f} s, passed {report['passed']}", file=sys.stderr)
    return report


def run(binary, memory, followers=0, **options):
    """`load` against a fresh server, with `followers` following the room from before the run to its end."""
    server = Server(binary, memory)
    readers = []
    try:
        readers = [Follower(server.port, "bench") for _ in range(followers)]
        report = load(binary, server, **options)
        if readers:
            time.sleep(1)  # the followers' last lines, after the run's own clients had theirs
    finally:
        for reader in readers:
            reader.close()
        server.stop()
    report["followed"] = [reader.changes for reader in readers]
    report["followGaps"] = sum(reader.gaps for reader in readers)
    return report


def ratio(value, baseline):
    return f"{value / baseline:.2f}" if baseline else "n/a"


def writes(binary, memory):
    http_run = run(binary, memory, scenario="http", writers=WRITERS, clients=WRITERS)
    ws_run = run(binary, memory, scenario="burst", writers=WRITERS, clients=WRITERS)
    return http_run, ws_run


def following(binary, memory):
    fixed = dict(scenario="fanout", writers=1, rate=RATE)
    alone = run(binary, memory, clients=1, **fixed)
    clients = run(binary, memory, clients=1 + READERS, **fixed)
    followed = run(binary, memory, followers=READERS, clients=1, **fixed)
    return alone, clients, followed


def main():
    arguments = sys.argv[1:]
    binary = arguments[0] if arguments and not arguments[0].endswith(".md") else release_binary()
    output = next((a for a in arguments if a.endswith(".md")), None)
    storages = (("--memory", True), ("--data DIR", False))
    lines = [f"### Requests over HTTP and following, one room ({os.cpu_count()} cores, {DURATION} s per run)", "",
             f"| server | HTTP requests/s ({WRITERS} writers, 1 in flight each) | request p99 | "
             f"WebSocket actions/s (burst, {WRITERS} writers) | ratio | goal |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    reports = []
    for name, memory in storages:
        print(f"writes, {name}", file=sys.stderr)
        http_run, ws_run = writes(binary, memory)
        reports += [http_run, ws_run]
        lines.append(f"| `{name}` | {http_run['actionsPerSecond']:,.0f} | "
                     f"{(http_run.get('requestLatencyMs') or {}).get('p99', 0):.2f} ms | "
                     f"{ws_run['actionsPerSecond']:,.0f} | "
                     f"{ratio(http_run['actionsPerSecond'], ws_run['actionsPerSecond'])} | ≥ 0.5 |")
    lines += ["", f"Server CPU at {RATE} changes/s, per extra reader ({READERS} of each kind, less the run without):",
              "", "| server | without (s) | + WebSocket clients (s) | + followers (s) | µs per change: client | "
              "follower | ratio | goal |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    follow_short = 0
    follow_gaps = 0
    for name, memory in storages:
        print(f"following, {name}", file=sys.stderr)
        alone, clients, followed = following(binary, memory)
        reports += [alone, clients, followed]
        base, with_clients, with_followers = (r["serverCPUSeconds"] or 0 for r in (alone, clients, followed))
        per_client = (with_clients - base) / READERS / max(clients["acked"], 1) * 1e6
        per_follower = (with_followers - base) / READERS / max(followed["acked"], 1) * 1e6
        follow_short += followed["acked"] - min(followed["followed"], default=0)
        follow_gaps += followed["followGaps"]
        lines.append(f"| `{name}` | {base:.2f} | {with_clients:.2f} | {with_followers:.2f} | {per_client:.2f} | "
                     f"{per_follower:.2f} | {ratio(per_follower, per_client)} | ≤ 1.5 |")
    lost = sum(r["gaps"] + r["missing"] + r["errors"] + r["closedByServer"] for r in reports)
    failed = sum(0 if r["passed"] else 1 for r in reports)
    lines += ["", f"Integrity: {failed} failed runs, {lost} gaps, missing deliveries, errors or closed clients; "
              f"followers: {follow_gaps} gaps, {follow_short} changes short of the acked ones (0: each follower "
              f"got every change)."]
    report = "\n".join(lines) + "\n"
    if output:
        with open(output, "w") as file:
            file.write(report)
    print(report)


if __name__ == "__main__":
    main()
