#!/usr/bin/env python3
"""Views and private parts against a real release `lockstep serve`, each figure beside its baseline from the same run.

    python3 Benchmarks/views.py [LOCKSTEP_BINARY] [OUTPUT.md]

Every run gets a fresh server (json app, in memory, no rate limit) and one `lockstep load --json --server-pid`:

1. views: 1 000 clients spread over 10 paths of one room (`--paths 10`), each action changing one path, beside the
   same 1 000 clients and actions following the whole room (`--room-clients 1000`). At the same deliveries/s
   offered (views: 10x the actions, each reaching 100 clients) and at saturation (burst);
2. private parts: 1 000 clients, each with its own subtree under `/hands` (`--private-part`), actions changing
   public state, on a server with `--private '/hands/{sub}'` beside the same room on a server without it;
3. a change inside the writer's own private subtree (`--own-writes`) with 10 clients in the room beside 1 000, on
   each event loop (`--event-loop poll`, then `epoll`).

The server's CPU comes from /proc (`serverCPUSeconds`), so the cost of a delivery is measured, not inferred.
DURATION (seconds, default 10) sets each run's length. The generator shares the machine with the server.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from benchmarking import release_binary

DURATION = int(os.environ.get("DURATION", "10"))
PRIVATE = "/hands/{sub}"


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


def p99(report):
    return report["latencyMs"]["p99"]


def deliveries(report):
    return report["deliveriesPerSecond"]


def fixed_and_burst(binary, baseline, measured, fixed, burst):
    """`baseline`, `measured`: (server arguments, load options), each run with `fixed`'s options and `burst`'s."""
    return {name: tuple(run(binary, server, **options, **extra) for server, options in (baseline, measured))
            for name, extra in (("fixed", fixed), ("burst", burst))}


def compare(title, columns, pairs, rows):
    """`pairs`: name -> (baseline report, measured report); `rows`: (measure, pair, metric, format, goal), followed
    by each pair's p99 latency."""
    rows = rows + [(f"{pair}: p99 latency", pair, p99, "{:.2f} ms", "") for pair in pairs]
    lines = [f"### {title}", "", f"| | {columns[0]} | {columns[1]} | ratio | goal |",
             "| --- | ---: | ---: | ---: | --- |"]
    for name, pair, metric, unit, goal in rows:
        baseline, value = (metric(report) for report in pairs[pair])
        lines.append(f"| {name} | {unit.format(baseline)} | {unit.format(value)} | {ratio(value, baseline)} | {goal} |")
    reports = [report for pair in pairs.values() for report in pair]
    lost = sum(r["gaps"] + r["missing"] + r["errors"] + r["closedByServer"] for r in reports)
    failed = sum(0 if r["passed"] else 1 for r in reports)
    cores = ", ".join(f"{r['generatorCPUSeconds'] / r['durationSeconds']:.2f}/"
                      f"{(r['serverCPUSeconds'] or 0) / r['durationSeconds']:.2f}" for r in reports)
    return "\n".join(lines) + (
        f"\n\nIntegrity: {failed} failed runs, {lost} gaps, missing deliveries, errors or closed clients, "
        f"{sum(r['snapshots'] for r in reports)} resync snapshots.\n"
        f"Cores used (generator/server, timed part and drain), per run: {cores}.\n")


def views(binary):
    print("views", file=sys.stderr)
    common = dict(clients=1000, paths=10)
    burst = dict(scenario="burst", writers=10, window=16)
    rate = int(os.environ.get("ROOM_RATE", "100"))
    pairs = {
        "fixed": (run(binary, [], writers=1, rate=rate, room_clients=1000, **common),
                  run(binary, [], writers=1, rate=rate * 10, **common)),
        "burst": (run(binary, [], room_clients=1000, **burst, **common), run(binary, [], **burst, **common)),
    }
    per_delivery = lambda report: report["serverMicrosPerDelivery"]
    return compare("1 000 clients over 10 views beside 1 000 whole-room clients", ("whole room", "views"), pairs, [
        (f"{rate} / {rate * 10} actions/s offered: deliveries/s", "fixed", deliveries, "{:,.0f}", ""),
        ("same: server CPU per delivery", "fixed", per_delivery, "{:.2f} µs", "≤ 1.25"),
        ("burst (10 writers × 16 in flight): deliveries/s", "burst", deliveries, "{:,.0f}", ""),
        ("burst: server CPU per delivery", "burst", per_delivery, "{:.2f} µs", ""),
    ])


def private_parts(binary, secret):
    print("private parts", file=sys.stderr)
    auth = ["--auth-secret-file", secret]
    private = auth + ["--private", PRIVATE]
    common = dict(clients=1000, private_part=PRIVATE, auth_secret_file=secret)
    burst = dict(scenario="burst", writers=10, window=16)
    rate = int(os.environ.get("PRIVATE_RATE", "100"))
    pairs = fixed_and_burst(binary, (auth, common), (private, common), dict(writers=1, rate=rate), burst)
    return compare(
        "1 000 clients with their own subtrees, public changes: `--private` beside without",
        ("without `--private`", "`--private`"), pairs, [
            (f"{rate} actions/s offered: deliveries/s", "fixed", deliveries, "{:,.0f}", ""),
            ("same: server CPU per delivery", "fixed", lambda r: r["serverMicrosPerDelivery"], "{:.2f} µs", ""),
            ("burst (10 writers × 16 in flight): deliveries/s", "burst", deliveries, "{:,.0f}", "≥ 0.9"),
        ])


def own_changes(binary, secret, event_loop):
    print(f"own private changes, --event-loop {event_loop}", file=sys.stderr)
    server = ["--auth-secret-file", secret, "--private", PRIVATE, "--event-loop", event_loop]
    common = dict(private_part=PRIVATE, auth_secret_file=secret, own_writes=True, writers=1)
    burst = dict(scenario="burst", window=16)
    rate = int(os.environ.get("OWN_RATE", "500"))
    pairs = fixed_and_burst(binary, (server, dict(clients=10, **common)), (server, dict(clients=1000, **common)),
                            dict(rate=rate), burst)
    per_action = lambda report: report["serverMicrosPerAction"]
    return compare(
        f"One writer changing its own private subtree: 10 clients in the room beside 1 000, `--event-loop {event_loop}`",
        ("10 clients", "1 000 clients"), pairs, [
            (f"{rate} actions/s offered: server CPU per action", "fixed", per_action, "{:.2f} µs", "≈ 1"),
            ("burst (16 in flight): acked actions/s", "burst", lambda r: r["actionsPerSecond"], "{:,.0f}", "≈ 1"),
            ("burst: server CPU per action", "burst", per_action, "{:.2f} µs", "≈ 1"),
        ])


def main():
    arguments = sys.argv[1:]
    binary = arguments[0] if arguments and not arguments[0].endswith(".md") else release_binary()
    output = next((a for a in arguments if a.endswith(".md")), None)
    with tempfile.TemporaryDirectory(prefix="lockstep-views-bench-") as work:
        secret = os.path.join(work, "secret")
        with open(secret, "w") as file:
            file.write(os.urandom(32).hex() + "\n")
        report = "\n".join([views(binary), private_parts(binary, secret)]
                           + [own_changes(binary, secret, loop) for loop in ("poll", "epoll")])
    if output:
        with open(output, "w") as file:
            file.write(report)
    print(report)


if __name__ == "__main__":
    main()
