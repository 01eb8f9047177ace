#!/usr/bin/env python3
"""Cursors as presence state against the same cursor moves written into the room's state as actions, on a real
release `lockstep serve --memory --app json`, in one run.

    python3 Benchmarks/presence.py [LOCKSTEP_BINARY] [OUTPUT.md]

CLIENTS clients (default 100) in one room each move a cursor MOVES times a second (default 30):

- presence: `lockstep load --scenario presence`; each move is `{"type":"presence","state":{..}}`, which the server
  merges and sends at most once per `--presence-interval` (default 50 ms) as `changed` entries;
- actions: `lockstep load --scenario fanout`; each move is an action (a JSON Patch of one value), so it becomes a
  version, a patch to every client, an entry in undo and in the log.

Both at the same total rate (CLIENTS x MOVES per second) for DURATION seconds (default 10). Compared: the server's
CPU over the timed part (/proc) and the bytes every client received (`receivedBytes`); goal ≤ 0.2x for both. Each
figure is the median of REPEAT (default 3) runs, the two kinds taking turns on a fresh server each. LOCKSTEP (a
built binary) or SCRATCH_PATH (the release build's scratch path) pick the server; the generator shares the machine.
"""
import json
import os
import re
import statistics
import subprocess
import sys

CLIENTS = int(os.environ.get("CLIENTS", "100"))
MOVES = int(os.environ.get("MOVES", "30"))
DURATION = int(os.environ.get("DURATION", "10"))
REPEAT = int(os.environ.get("REPEAT", "3"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def release_binary():
    if len(sys.argv) > 1 and not sys.argv[1].endswith(".md"):
        return os.path.abspath(sys.argv.pop(1))
    if os.environ.get("LOCKSTEP"):
        return os.path.abspath(os.environ["LOCKSTEP"])
    build = ["swift", "build", "-c", "release", "--product", "lockstep"]
    if os.environ.get("SCRATCH_PATH"):
        build += ["--scratch-path", os.environ["SCRATCH_PATH"]]
    subprocess.run(build, cwd=ROOT, check=True)
    path = subprocess.run(build + ["--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return os.path.join(path.strip(), "lockstep")


def run(binary, scenario):
    """One `lockstep load` of `scenario` against a fresh server; its JSON report."""
    server = subprocess.Popen(
        [binary, "serve", "--port", "0", "--app", "json", "--memory", "--rate-limit", "0",
         "--max-connections-per-ip", "20000", "--log-level", "warning"],
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
    print(f"  {scenario}: sent {report['sent']}, server {report['serverCPUSeconds']:.2f} s, "
          f"received {report['receivedBytes'] / 1e6:.1f} MB in {report['deliveries']} messages", file=sys.stderr)
    return report


def main():
    binary = release_binary()
    output = sys.argv[1] if len(sys.argv) > 1 else None
    kinds = {"presence": "presence", "actions": "fanout"}
    reports = {name: [] for name in kinds}
    for _ in range(REPEAT):
        for name, scenario in kinds.items():
            reports[name].append(run(binary, scenario))

    def median(name, field):
        return statistics.median(report[field] for report in reports[name])

    cpu = {name: median(name, "serverCPUSeconds") for name in kinds}
    received = {name: median(name, "receivedBytes") for name in kinds}
    messages = {name: median(name, "deliveries") for name in kinds}
    lines = [
        f"## Cursors: presence state against actions ({CLIENTS} clients, {MOVES} moves/s each, {DURATION} s, "
        f"median of {REPEAT})",
        "",
        "| | server CPU (s) | bytes received by all clients | messages received |",
        "|---|---:|---:|---:|",
    ]
    for name in kinds:
        lines.append(f"| {name} | {cpu[name]:.2f} | {received[name]:,.0f} | {messages[name]:,.0f} |")
    lines += [
        "",
        f"- server CPU, presence ÷ actions: **{cpu['presence'] / cpu['actions']:.3f}x** (goal ≤ 0.2x)",
        f"- bytes received, presence ÷ actions: **{received['presence'] / received['actions']:.3f}x** (goal ≤ 0.2x)",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if output:
        with open(output, "w") as file:
            file.write(text)


if __name__ == "__main__":
    main()
