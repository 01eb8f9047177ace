#!/usr/bin/env python3
"""Requests over HTTP and following a room's log against a real release `lockstep serve`, each figure beside its
WebSocket baseline from the same run, on one room, with a `--memory` server and with a `--data DIR` server.

    python3 Benchmarks/http.py [LOCKSTEP_BINARY] [OUTPUT.md]

Every run gets a fresh server (counter app, no rate limit; for `--data`, a fresh directory) and one
`lockstep load --json --server-pid`:

1. writes: 8 HTTP writers, each posting one action at a time over its own keep-alive connection
   (`--scenario http --writers 8`, with 8 WebSocket readers), beside 8 WebSocket writers keeping their default window
   of actions in flight (`--scenario burst --writers 8`, the same 8 sockets reading): acked requests/s over acked
   actions/s (goal ≥ 0.5); and, to tell the transport from the pipelining, beside WebSocket writers with one action
   in flight each (`--window 1`), as the HTTP writers. One request in flight per connection is what a backend does;
   no pipelining. And, to put as many requests in flight as the burst does, 128 HTTP writers (8 x the default window
   of 16) beside the same burst. Both kinds of writer run in the same generator process on the same cores as the
   server: the HTTP writers share one thread polling their sockets, as the WebSocket clients share their loop (a
   thread per writer, woken by each answer, would have the kernel charge each wake-up to the server that sends it),
   and each builds its request in place and reads each answer's head as bytes;
2. following: at a fixed rate (one writer, RATE changes/s, default 2 000), the server's CPU per change with READERS
   extra followers (`GET /rooms/ROOM/log?follow=true`, all read by one thread of this script polling their sockets,
   as the generator reads its WebSocket clients, each checked for contiguous versions) and with READERS extra WebSocket clients, each less the CPU per change of the same run without an
   extra reader: the cost of one follow stream over the cost of one WebSocket client (goal ≤ 1.5). READERS (default
   10) spreads the measurement over several readers of each kind, so that a reader's cost stands out of the noise.

Each figure is the median of REPEAT (default 3) runs, the kinds compared taking turns. The server's CPU comes from
/proc (`serverCPUSeconds`, the timed part and its drain). DURATION (seconds, default 10) sets each run's length.
LOCKSTEP (a built binary) or SCRATCH_PATH (the release build's scratch path) pick the server. The generator and the
followers share the machine with the server.
"""
import json
import os
import re
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from benchmarking import release_binary

# This script's own name would hide the standard library's `http` package.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import http.client  # noqa: E402

DURATION = int(os.environ.get("DURATION", "10"))
RATE = int(os.environ.get("RATE", "2000"))
READERS = int(os.environ.get("READERS", "10"))
WRITERS = 8
WINDOW = 16
REPEAT = int(os.environ.get("REPEAT", "3"))
PATCH = re.compile(rb'^\{"type":"patch","version":(\d+)', re.MULTILINE)


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
    """One `GET /rooms/ROOM/log?follow=true` over a socket of its own: takes the chunked body as it arrives, counts
    the changes and checks that their versions are contiguous."""

    def __init__(self, port, room):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.sendall(f"GET /rooms/{room}/log?after=1&follow=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            data = self.socket.recv(1 << 16)
            if not data:
                raise SystemExit(f"following failed: the server closed after {head[:200]!r}")
            head += data
        head, _, rest = head.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200") or b"transfer-encoding: chunked" not in head.lower():
            raise SystemExit(f"following failed: {head[:200]!r}")
        self.changes = 0
        self.gaps = 0
        self.last = None
        self.raw = b""  # received, not yet taken apart into chunks
        self.remaining = 0  # bytes left of the chunk being read
        self.skip = 0  # bytes of the CRLF that ends a chunk still to pass over
        self.lines = b""  # the body, up to its last whole line
        self.feed(rest)

    def feed(self, data):
        """Takes apart the chunks in what arrived and scans their whole lines."""
        self.raw += data
        while self.raw:
            if self.skip:
                passed = min(self.skip, len(self.raw))
                self.raw = self.raw[passed:]
                self.skip -= passed
            elif self.remaining == 0:
                end = self.raw.find(b"\r\n")
                if end < 0:
                    return
                self.remaining = int(self.raw[:end].split(b";")[0], 16)
                self.raw = self.raw[end + 2:]
                if self.remaining == 0:  # the last chunk: the server ended the response
                    self.raw = b""
            else:
                piece = self.raw[:self.remaining]
                self.raw = self.raw[len(piece):]
                self.remaining -= len(piece)
                if self.remaining == 0:
                    self.skip = 2
                self.scan(piece)

    def scan(self, piece):
        """Finds the patch versions in whole lines: a JSON parser per line would make this script, on the server's
        cores, the slowest reader."""
        self.lines += piece
        cut = self.lines.rfind(b"\n") + 1
        for match in PATCH.finditer(self.lines, 0, cut):
            version = int(match.group(1))
            if self.last is not None and version != self.last + 1:
                self.gaps += 1
            self.last = version
            self.changes += 1
        self.lines = self.lines[cut:]


class Followers:
    """`count` followers of one room, all read by one thread that polls their sockets, as the load generator reads its
    WebSocket clients: a thread of each reader would cost the server a wake-up of its own on every send over
    loopback, which a WebSocket client of the generator does not, and the two would not compare."""

    def __init__(self, port, room, count):
        self.readers = [Follower(port, room) for _ in range(count)]
        self.selector = selectors.DefaultSelector()
        for reader in self.readers:
            reader.socket.setblocking(False)
            self.selector.register(reader.socket, selectors.EVENT_READ, reader)
        self.running = True
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while self.running and self.selector.get_map():
            for key, _ in self.selector.select(timeout=0.2):
                try:
                    data = key.fileobj.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.selector.unregister(key.fileobj)
                    continue
                key.data.feed(data)

    def close(self):
        self.running = False
        self.thread.join()
        for reader in self.readers:
            reader.socket.close()


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


def create(port, room):
    """Makes the room's first change (version 1) over HTTP, so that it exists before anyone follows it."""
    connection = http.client.HTTPConnection("127.0.0.1", port)
    connection.request("POST", f"/rooms/{room}", body=b'{"type":"action","action":{"type":"increment"}}',
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        raise SystemExit(f"creating the room failed: {response.status} {response.read()[:200]!r}")
    connection.close()


def run(binary, memory, followers=0, **options):
    """`load` against a fresh server whose room has its first change, with `followers` following the room from
    before the run to its end."""
    server = Server(binary, memory)
    group = None
    try:
        create(server.port, "bench")
        group = Followers(server.port, "bench", followers)
        report = load(binary, server, **options)
        if followers:
            time.sleep(1)  # the followers' last lines, after the run's own clients had theirs
    finally:
        if group:
            group.close()
        server.stop()
    report["followed"] = [reader.changes for reader in group.readers]
    report["followGaps"] = sum(reader.gaps for reader in group.readers)
    return report


def ratio(value, baseline):
    return f"{value / baseline:.2f}" if baseline else "n/a"


def rounds(binary, memory, kinds):
    """REPEAT rounds of one run of each of `kinds` (name -> run options), interleaved so that the machine's other
    load falls on all of them alike; the reports by name."""
    reports = {name: [] for name in kinds}
    for _ in range(REPEAT):
        for name, options in kinds.items():
            reports[name].append(run(binary, memory, **options))
    return reports


def median(reports, metric):
    return statistics.median(metric(report) for report in reports)


def writes(binary, memory):
    return rounds(binary, memory, {
        "http": dict(scenario="http", writers=WRITERS, clients=WRITERS),
        "httpwide": dict(scenario="http", writers=WRITERS * WINDOW, clients=WRITERS),
        "ws": dict(scenario="burst", writers=WRITERS, clients=WRITERS),
        "ws1": dict(scenario="burst", writers=WRITERS, clients=WRITERS, window=1),
    })


def following(binary, memory):
    fixed = dict(scenario="fanout", writers=1, rate=RATE)
    return rounds(binary, memory, {
        "alone": dict(clients=1, **fixed),
        "clients": dict(clients=1 + READERS, **fixed),
        "followed": dict(followers=READERS, clients=1, **fixed),
    })


def main():
    arguments = sys.argv[1:]
    binary = arguments[0] if arguments and not arguments[0].endswith(".md") else release_binary()
    output = next((a for a in arguments if a.endswith(".md")), None)
    storages = (("--memory", True), ("--data DIR", False))
    average = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [f"### Requests over HTTP and following, one room ({os.cpu_count()} cores, load average {average} at the "
             f"start; medians of {REPEAT} runs of {DURATION} s each)", "",
             f"| server | HTTP requests/s ({WRITERS} writers, 1 in flight each) | request p99 | "
             f"WebSocket actions/s (burst, {WRITERS} writers) | ratio | goal | WebSocket, 1 in flight each | ratio | "
             f"HTTP requests/s ({WRITERS * WINDOW} writers, as many in flight as the burst) | ratio to the burst | "
             f"generator CPU per change: HTTP, burst, 1 in flight, {WRITERS * WINDOW} HTTP |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    reports = []
    acked_per_second = lambda report: report["actionsPerSecond"]
    generator_per_change = lambda report: report["generatorCPUSeconds"] / report["acked"] * 1e6 if report["acked"] else 0
    for name, memory in storages:
        print(f"writes, {name}", file=sys.stderr)
        runs = writes(binary, memory)
        reports += runs["http"] + runs["ws"] + runs["ws1"] + runs["httpwide"]
        http_rate, ws_rate, ws1_rate, wide_rate = (median(runs[kind], acked_per_second)
                                                   for kind in ("http", "ws", "ws1", "httpwide"))
        p99 = median(runs["http"], lambda report: report["requestLatencyMs"]["p99"])
        # The generator shares the server's cores: its cost per change says whether it, not the server, set a rate.
        generator = " / ".join(f"{median(runs[kind], generator_per_change):.1f} µs"
                               for kind in ("http", "ws", "ws1", "httpwide"))
        lines.append(f"| `{name}` | {http_rate:,.0f} | {p99:.2f} ms | {ws_rate:,.0f} | {ratio(http_rate, ws_rate)} | "
                     f"≥ 0.5 | {ws1_rate:,.0f} | {ratio(http_rate, ws1_rate)} | {wide_rate:,.0f} | "
                     f"{ratio(wide_rate, ws_rate)} | {generator} |")
    lines += ["", f"Server CPU per change at {RATE} changes/s: alone, with {READERS} extra WebSocket clients, with "
              f"{READERS} followers; each extra reader's share of it (less the run alone, over {READERS}):",
              "", "| server | alone | + clients | + followers | one client | one follower | ratio | goal |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    follow_short = 0
    follow_gaps = 0
    per_change = lambda report: report["serverMicrosPerChange"]
    for name, memory in storages:
        print(f"following, {name}", file=sys.stderr)
        runs = following(binary, memory)
        reports += runs["alone"] + runs["clients"] + runs["followed"]
        base, with_clients, with_followers = (median(runs[kind], per_change)
                                              for kind in ("alone", "clients", "followed"))
        per_client = (with_clients - base) / READERS
        per_follower = (with_followers - base) / READERS
        for report in runs["followed"]:
            follow_short += report["acked"] - min(report["followed"], default=0)
            follow_gaps += report["followGaps"]
        lines.append(f"| `{name}` | {base:.2f} µs | {with_clients:.2f} µs | {with_followers:.2f} µs | "
                     f"{per_client:.2f} µs | {per_follower:.2f} µs | {ratio(per_follower, per_client)} | ≤ 1.5 |")
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
