#!/usr/bin/env python3
"""Cursors as presence state against the same cursor moves written into the room's state as actions, on a real
release `lockstep serve --memory --app json`, in one run.

    python3 Benchmarks/presence.py [LOCKSTEP_BINARY] [OUTPUT.md]

CLIENTS clients (default 100) in one room each move a cursor MOVES times a second (default 30):

- presence: `lockstep load --scenario presence`; each move is `{"type":"presence","state":{..}}`, which the server
  merges and sends at most once per `--presence-interval` (default 50 ms) as `changed` entries;
- actions: `lockstep load --scenario fanout`; each move is an action (a JSON Patch of one value), so it becomes a
  version, a patch to every client, an entry in undo and in the log.

Both at the same total rate (CLIENTS x MOVES per second) for DURATION seconds (default 10), on each of the server's
event loops (`--event-loop poll` and `epoll`). Compared: the server's CPU over the timed part (/proc) and the bytes
every client received (`receivedBytes`); goal ≤ 0.2x for both. Each figure is the median of REPEAT (default 3) runs,
the kinds taking turns on a fresh server each. LOCKSTEP (a
built binary) or SCRATCH_PATH (the release build's scratch path) pick the server; the generator shares the machine.
"""
import json
import os
import re
import statistics
import subprocess
import sys

from benchmarking import publish, release_binary

CLIENTS = int(os.environ.get("CLIENTS", "100"))
MOVES = int(os.environ.get("MOVES", "30"))
DURATION = int(os.environ.get("DURATION", "10"))
REPEAT = int(os.environ.get("REPEAT", "3"))


def chosen_binary():
    """The binary named on the command line, or the release build."""
    if len(sys.argv) > 1 and not sys.argv[1].endswith(".md"):
        return os.path.abspath(sys.argv.pop(1))
    return release_binary()


def run(binary, scenario, loop):
    """One `lockstep load` of `scenario` against a fresh server on event loop `loop`; its JSON report."""
    server = subprocess.Popen(
        [binary, "serve", "--port", "0", "--app", "json", "--memory", "--rate-limit", "0",
         "--max-connections-per-ip", "20000", "--log-level", "warning", "--event-loop", loop],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        match = re.search(r"127\.0\.0\.1:(\d+)/", server.stdout.readline())
        if not match:
            raise SystemExit("the server did not start")
        args = [binary, "load", "--json", "--url", f"ws://127.0.0.1:{match.group(1)}/rooms/cursors",
                "--app", "json", "--scenario", scenario, "--clients", str(CLIENTS), "--writers", str(CLIENTS),
                "--rate", str(CLIENTS * MOVES), "--duration", f"{DURATION}s", "--drain", "30s",
                "--server-pid", str(server.pid)]
        result = subprocess.run(args, capture_output=True, text=True)
        try:
            report = json.loads(result.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            raise SystemExit(f"lockstep load {' '.join(args[2:])} failed: {result.stderr[-2000:]}")
    finally:
        server.terminate()
        server.wait(timeout=15)
    if not report["passed"]:
        raise SystemExit(f"the {scenario} run did not pass: {report.get('firstError')}")
    print(f"  {scenario} ({loop}): sent {report['sent']}, server {report['serverCPUSeconds']:.2f} s, "
          f"received {report['receivedBytes'] / 1e6:.1f} MB in {report['deliveries']} messages", file=sys.stderr)
    return report


def main():
    binary = chosen_binary()
    output = sys.argv[1] if len(sys.argv) > 1 else None
    kinds = {"presence": "presence", "actions": "fanout"}
    loops = ["poll", "epoll"]
    reports = {(name, loop): [] for name in kinds for loop in loops}
    for _ in range(REPEAT):
        for loop in loops:
            for name, scenario in kinds.items():
                reports[(name, loop)].append(run(binary, scenario, loop))

    def median(key, field):
        return statistics.median(report[field] for report in reports[key])

    lines = [
        f"## Cursors: presence state against actions ({CLIENTS} clients, {MOVES} moves/s each, {DURATION} s, "
        f"median of {REPEAT})",
        "",
        "| event loop | moves sent as | server CPU (s) | bytes received by all clients | messages received |",
        "|---|---|---:|---:|---:|",
    ]
    for loop in loops:
        for name in kinds:
            key = (name, loop)
            lines.append(f"| {loop} | {name} | {median(key, 'serverCPUSeconds'):.2f} | "
                         f"{median(key, 'receivedBytes'):,.0f} | {median(key, 'deliveries'):,.0f} |")
    lines.append("")
    for loop in loops:
        cpu = median(("presence", loop), "serverCPUSeconds") / median(("actions", loop), "serverCPUSeconds")
        received = median(("presence", loop), "receivedBytes") / median(("actions", loop), "receivedBytes")
        lines.append(f"- {loop}: server CPU, presence ÷ actions **{cpu:.3f}x**; bytes received **{received:.3f}x** "
                     "(goal ≤ 0.2x each)")
    publish("\n".join(lines) + "\n", output)


if __name__ == "__main__":
    main()
