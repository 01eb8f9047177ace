#!/usr/bin/env python3
"""Views and private parts against a real release `lockstep serve`, each figure beside its baseline from the same run.

    python3 Benchmarks/views.py [LOCKSTEP_BINARY] [OUTPUT.md]

Every run gets a fresh server (json app, in memory, no rate limit) and one `lockstep load --json --server-pid`:

1. views: 1 000 clients spread over 10 paths of one room (`--paths 10`), each action changing one path, beside the
   same 1 000 clients and actions following the whole room (`--room-clients 1000`). At the same deliveries/s
   offered (views: 10x the actions, each reaching 100 clients) and at saturation (burst);
2. private parts: 1 000 clients, each with its own subtree under `/hands` (`--private-part`), actions changing
   public state, on a server with `--private '/hands/{sub}'` beside the same room on a server without it;
3. a change inside the writer's own private subtree (`--own-writes`) with 10 clients in the room beside 1 000.

The server's CPU comes from /proc (`serverCPUSeconds`), so the cost of a delivery is measured, not inferred.
DURATION (seconds, default 10) sets each run's length. The generator shares the machine with the server.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

DURATION = int(os.environ.get("DURATION", "10"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRIVATE = "/hands/{sub}"


def release_binary():
    subprocess.run(["swift", "build", "-c", "release", "--product", "lockstep"], cwd=ROOT, check=True)
    path = subprocess.run(["swift", "build", "-c", "release", "--product", "lockstep", "--show-bin-path"],
                          cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "lockstep")


class Server:
    """A fresh `lockstep serve` on a free port for one run."""

    def __init__(self, binary, extra):
        self.process = subprocess.Popen(
            [binary, "serve", "--port", "0", "--app", "json", "--memory", "--rate-limit", "0",
             "--max-connections-per-ip", "20000", "--log-level", "warning"] + extra,
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


def run(binary, server_args, **options):
    """One `lockstep load` against a fresh server; its JSON report with the server's CPU per delivery and action."""
    server = Server(binary, server_args)
    try:
        args = [binary, "load", "--json", "--url", f"ws://127.0.0.1:{server.port}/rooms/bench",
                "--app", "json", "--duration", f"{DURATION}s", "--drain", "30s",
                "--server-pid", str(server.process.pid)]
        for key, value in options.items():
            flag = "--" + key.replace("_", "-")
            args += [flag] if value is True else [flag, str(value)]
        result = subprocess.run(args, capture_output=True, text=True)
    finally:
        server.stop()
    try:
        report = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"lockstep load {' '.join(args[2:])} failed: {result.stderr[-2000:]}")
    cpu = report.get("serverCPUSeconds") or 0
    report["serverMicrosPerDelivery"] = cpu / report["deliveries"] * 1e6 if report["deliveries"] else 0
    report["serverMicrosPerAction"] = cpu / report["acked"] * 1e6 if report["acked"] else 0
    print(f"  {' '.join(args[2:])}: {report['deliveriesPerSecond']:.0f} deliveries/s, "
          f"p99 {report['latencyMs']['p99']:.2f} ms, server {cpu:.2f} s, generator "
          f"{report['generatorCPUSeconds']:.2f} s, passed {report['passed']}", file=sys.stderr)
    return report


def ratio(value, baseline):
    return f"{value / baseline:.2f}" if baseline else "n/a"


def table(title, columns, rows):
    """`rows`: (measure, baseline value, measured value, format, goal)."""
    lines = [f"### {title}", "", f"| | {columns[0]} | {columns[1]} | ratio | goal |", "| --- | ---: | ---: | ---: | --- |"]
    for name, baseline, value, unit, goal in rows:
        lines.append(f"| {name} | {unit.format(baseline)} | {unit.format(value)} | {ratio(value, baseline)} | {goal} |")
    return "\n".join(lines) + "\n"


def integrity(reports):
    lost = sum(r["gaps"] + r["missing"] + r["errors"] + r["closedByServer"] for r in reports)
    resyncs = sum(r["snapshots"] for r in reports)
    failed = sum(0 if r["passed"] else 1 for r in reports)
    return (f"Integrity: {failed} failed runs, {lost} gaps, missing deliveries, errors or closed clients, "
            f"{resyncs} resync snapshots.\n")


def generator_note(reports):
    shares = ", ".join(f"{r['generatorCPUSeconds'] / r['durationSeconds']:.2f}/{(r['serverCPUSeconds'] or 0) / r['durationSeconds']:.2f}"
                       for r in reports)
    return f"Cores used, generator/server, per run in table order: {shares}.\n"


def views(binary):
    print("views", file=sys.stderr)
    common = dict(clients=1000, paths=10)
    room_rate = int(os.environ.get("ROOM_RATE", "100"))
    fixed_room = run(binary, [], writers=1, rate=room_rate, room_clients=1000, **common)
    fixed_views = run(binary, [], writers=1, rate=room_rate * 10, **common)
    burst_room = run(binary, [], scenario="burst", writers=10, window=16, room_clients=1000, **common)
    burst_views = run(binary, [], scenario="burst", writers=10, window=16, **common)
    micros = "{:.2f} µs"
    reports = [fixed_room, fixed_views, burst_room, burst_views]
    return table(
        "1 000 clients over 10 views beside 1 000 whole-room clients", ("whole room", "views"),
        [
            (f"{room_rate} / {room_rate * 10} actions/s offered: deliveries/s", fixed_room["deliveriesPerSecond"],
             fixed_views["deliveriesPerSecond"], "{:,.0f}", ""),
            ("same: p99 latency", fixed_room["latencyMs"]["p99"], fixed_views["latencyMs"]["p99"], "{:.2f} ms", ""),
            ("same: server CPU per delivery", fixed_room["serverMicrosPerDelivery"],
             fixed_views["serverMicrosPerDelivery"], micros, "≤ 1.25"),
            ("burst (10 writers × 16 in flight): deliveries/s", burst_room["deliveriesPerSecond"],
             burst_views["deliveriesPerSecond"], "{:,.0f}", "≥ 0.8"),
            ("burst: p99 latency", burst_room["latencyMs"]["p99"], burst_views["latencyMs"]["p99"], "{:.2f} ms", ""),
            ("burst: server CPU per delivery", burst_room["serverMicrosPerDelivery"],
             burst_views["serverMicrosPerDelivery"], micros, "≤ 1.25"),
        ]) + "\n" + integrity(reports) + generator_note(reports)


def private_parts(binary, secret):
    print("private parts", file=sys.stderr)
    auth = ["--auth-secret-file", secret]
    common = dict(clients=1000, private_part=PRIVATE, auth_secret_file=secret)
    rate = int(os.environ.get("PRIVATE_RATE", "100"))
    fixed_open = run(binary, auth, writers=1, rate=rate, **common)
    fixed_private = run(binary, auth + ["--private", PRIVATE], writers=1, rate=rate, **common)
    burst_open = run(binary, auth, scenario="burst", writers=10, window=16, **common)
    burst_private = run(binary, auth + ["--private", PRIVATE], scenario="burst", writers=10, window=16, **common)
    reports = [fixed_open, fixed_private, burst_open, burst_private]
    return table(
        "1 000 clients with their own subtrees, public changes: `--private` beside without",
        ("without `--private`", "`--private`"),
        [
            (f"{rate} actions/s offered: deliveries/s", fixed_open["deliveriesPerSecond"],
             fixed_private["deliveriesPerSecond"], "{:,.0f}", ""),
            ("same: p99 latency", fixed_open["latencyMs"]["p99"], fixed_private["latencyMs"]["p99"], "{:.2f} ms", ""),
            ("same: server CPU per delivery", fixed_open["serverMicrosPerDelivery"],
             fixed_private["serverMicrosPerDelivery"], "{:.2f} µs", ""),
            ("burst (10 writers × 16 in flight): deliveries/s", burst_open["deliveriesPerSecond"],
             burst_private["deliveriesPerSecond"], "{:,.0f}", "≥ 0.9"),
            ("burst: p99 latency", burst_open["latencyMs"]["p99"], burst_private["latencyMs"]["p99"], "{:.2f} ms", ""),
        ]) + "\n" + integrity(reports) + generator_note(reports)


def own_changes(binary, secret):
    print("own private changes", file=sys.stderr)
    server = ["--auth-secret-file", secret, "--private", PRIVATE]
    common = dict(private_part=PRIVATE, auth_secret_file=secret, own_writes=True, writers=1)
    rate = int(os.environ.get("OWN_RATE", "500"))
    fixed_few = run(binary, server, clients=10, rate=rate, **common)
    fixed_many = run(binary, server, clients=1000, rate=rate, **common)
    burst_few = run(binary, server, clients=10, scenario="burst", window=16, **common)
    burst_many = run(binary, server, clients=1000, scenario="burst", window=16, **common)
    reports = [fixed_few, fixed_many, burst_few, burst_many]
    return table(
        "One writer changing its own private subtree: 10 clients in the room beside 1 000",
        ("10 clients", "1 000 clients"),
        [
            (f"{rate} actions/s offered: server CPU per action", fixed_few["serverMicrosPerAction"],
             fixed_many["serverMicrosPerAction"], "{:.2f} µs", "≈ 1"),
            ("same: p99 latency (the owner's patch)", fixed_few["latencyMs"]["p99"], fixed_many["latencyMs"]["p99"],
             "{:.2f} ms", ""),
            ("burst (16 in flight): acked actions/s", burst_few["actionsPerSecond"], burst_many["actionsPerSecond"],
             "{:,.0f}", "≈ 1"),
            ("burst: server CPU per action", burst_few["serverMicrosPerAction"], burst_many["serverMicrosPerAction"],
             "{:.2f} µs", "≈ 1"),
        ]) + "\n" + integrity(reports) + generator_note(reports)


def main():
    arguments = sys.argv[1:]
    binary = arguments[0] if arguments and not arguments[0].endswith(".md") else release_binary()
    output = next((a for a in arguments if a.endswith(".md")), None)
    with tempfile.TemporaryDirectory(prefix="lockstep-views-bench-") as work:
        secret = os.path.join(work, "secret")
        with open(secret, "w") as file:
            file.write(os.urandom(32).hex() + "\n")
        report = "\n".join([views(binary), private_parts(binary, secret), own_changes(binary, secret)])
    if output:
        with open(output, "w") as file:
            file.write(report)
    print(report)


if __name__ == "__main__":
    main()
