#!/usr/bin/env python3
"""Lockstep on PostgreSQL, measured beside SQLite and beside one server, in one run on this machine.

    python3 Benchmarks/cluster.py [--before BINARY] [--saturation-only] [OUTPUT.md]

Starts a throwaway PostgreSQL (default settings: fsync on, synchronous_commit on) as the `postgres` user,
release `lockstep serve` nodes and `lockstep load` on loopback, and prints (or writes) a markdown report:

1. one node on PostgreSQL beside one node on SQLite: acked actions/s and latency at 1 000 actions/s offered,
   and at saturation (burst) in one room and in eight rooms at once; with `--before BINARY` (a `lockstep` built
   from an earlier commit) the saturation runs of that binary too, so a change is measured against its baseline
   in the same run; it ends with PostgreSQL ÷ SQLite in one room and in eight rooms, and PostgreSQL's eight rooms ÷
   its one room (`--saturation-only` stops there);
2. cross-node delivery: one writer on node A, 1 000 readers spread over A, B and C, beside all on A;
3. one room with a writer on each of three nodes: the highest rate held with p99 under 100 ms, beside three
   writers on one node.

Each run lasts DURATION seconds (default 10). Needs root (or sudo) for the postgres user, and a release build: the
script builds one (`swift build -c release`, in SCRATCH_PATH when set) unless LOCKSTEP names a `lockstep` binary.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from benchmarking import release_binary

DURATION = os.environ.get("DURATION", "10")
work = tempfile.mkdtemp(prefix="lockstep-cluster-bench-")
processes = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres():
    return ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else ["sudo", "-u", "postgres"]


def run_as_postgres(args):
    return subprocess.run(as_postgres() + args, check=True, capture_output=True, text=True)


def start_postgres():
    binaries = sorted(d for d in os.listdir("/usr/lib/postgresql") if os.path.exists(f"/usr/lib/postgresql/{d}/bin/initdb"))
    bin_dir = f"/usr/lib/postgresql/{binaries[-1]}/bin"
    directory = os.path.join(work, "postgres")
    os.makedirs(directory)
    shutil.chown(directory, "postgres")
    os.chmod(work, 0o755)
    run_as_postgres([f"{bin_dir}/initdb", "-D", f"{directory}/data", "-U", "postgres", "--auth=trust", "-E", "UTF8"])
    port = free_port()
    server = subprocess.Popen(
        as_postgres() + [f"{bin_dir}/postgres", "-D", f"{directory}/data", "-p", str(port), "-k", directory,
                  "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(server)
    for _ in range(100):
        if subprocess.run([f"{bin_dir}/pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    run_as_postgres([f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(port), "lockstep"])
    return f"postgres://postgres@127.0.0.1:{port}/lockstep"


def start_node(binary, storage):
    node = subprocess.Popen(
        [binary, "serve", "--port", "0", "--app", "counter", "--rate-limit", "0", "--max-connections-per-ip", "20000",
         "--log-level", "warning"] + storage,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    processes.append(node)
    line = node.stdout.readline()
    match = re.search(r"127\.0\.0\.1:(\d+)/", line)
    if not match:
        raise SystemExit(f"a node did not start: {line!r}")
    return node, int(match.group(1))


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


def load_arguments(binary, urls, **options):
    args = [binary, "load", "--json", "--duration", f"{DURATION}s", "--drain", "30s"]
    for url in urls:
        args += ["--url", url]
    for key, value in options.items():
        args += [f"--{key}", str(value)]
    return args


def load(binary, urls, **options):
    args = load_arguments(binary, urls, **options)
    result = subprocess.run(args, capture_output=True, text=True)
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"lockstep load {' '.join(args[1:])} failed: {result.stderr[-2000:]}")


room_counter = 0


def room_urls(ports):
    global room_counter
    room_counter += 1
    return [f"ws://127.0.0.1:{port}/rooms/bench{room_counter}" for port in ports]


def row(name, report):
    latency = report["latencyMs"]
    return (f"| {name} | {report['actionsPerSecond']:.0f} | {report['deliveriesPerSecond']:.0f} | "
            f"{latency['p50']:.2f} | {latency['p99']:.2f} | {report['gaps']} | {report['missing']} |")


HEADER = ("| run | acked actions/s | deliveries/s | p50 ms | p99 ms | gaps | missing |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")


def load_rooms(binary, port, count):
    """Saturation in `count` rooms of one node at once, one generator per room; the reports summed."""
    runs = []
    for _ in range(count):
        args = load_arguments(binary, room_urls([port]), scenario="burst", clients=4, writers=4, window=16)
        runs.append(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    reports = []
    for run in runs:
        out, err = run.communicate()
        try:
            reports.append(json.loads(out.strip().splitlines()[-1]))
        except (IndexError, json.JSONDecodeError):
            # A build that cannot serve eight new rooms at once is reported as such, not as a crash of the benchmark.
            print(f"lockstep load {' '.join(run.args[1:])} failed: {err.strip()[-300:]}", file=sys.stderr)
            return None
    return {
        "actionsPerSecond": sum(r["actionsPerSecond"] for r in reports),
        "deliveriesPerSecond": sum(r["deliveriesPerSecond"] for r in reports),
        "latencyMs": {key: max(r["latencyMs"][key] for r in reports) for key in ("p50", "p99")},
        "gaps": sum(r["gaps"] for r in reports),
        "missing": sum(r["missing"] for r in reports),
    }


def main():
    arguments = sys.argv[1:]
    before = None
    if arguments[:1] == ["--before"]:
        before, arguments = arguments[1], arguments[2:]
    saturation_only = "--saturation-only" in arguments
    arguments = [argument for argument in arguments if argument != "--saturation-only"]
    output = arguments[0] if arguments else None
    summaries = []
    binary = release_binary()
    url = start_postgres()
    lines = [f"Lockstep on PostgreSQL, one run on this machine ({os.cpu_count()} cores), {DURATION} s per run, "
             "generator on the same machine; counter app.", ""]

    # 1. One node: SQLite beside PostgreSQL.
    lines += ["## One node: SQLite beside PostgreSQL", "", HEADER]
    binaries = [("", binary)] + ([("before: ", before)] if before else [])
    for prefix, build in binaries:
        ratios = {}
        for name, storage in [("SQLite", ["--data", os.path.join(work, f"data{room_counter}")]),
                              ("PostgreSQL", ["--postgres", url])]:
            node, port = start_node(build, storage)
            if not prefix:
                offered = load(build, room_urls([port]), clients=10, writers=10, rate=1000)
                lines.append(row(f"{name}, 1 000/s offered", offered))
            burst = load(build, room_urls([port]), scenario="burst", clients=10, writers=10, window=16)
            rooms = load_rooms(build, port, 8)
            stop(node)
            lines.append(row(f"{prefix}{name}, saturation (burst), one room", burst))
            lines.append(row(f"{prefix}{name}, saturation (burst), eight rooms at once (sum)", rooms) if rooms
                         else f"| {prefix}{name}, saturation (burst), eight rooms at once | failed: joins refused |")
            ratios[name] = (burst["actionsPerSecond"], rooms["actionsPerSecond"] if rooms else 0)
        eight = (f"{ratios['PostgreSQL'][1] / ratios['SQLite'][1]:.2f}" if ratios["SQLite"][1] else "n/a")
        summaries.append(f"{prefix or 'this build: '}PostgreSQL ÷ SQLite at saturation: "
                         f"{ratios['PostgreSQL'][0] / ratios['SQLite'][0]:.2f} in one room, {eight} in eight rooms; "
                         f"PostgreSQL's eight rooms ÷ its one room: "
                         f"{ratios['PostgreSQL'][1] / ratios['PostgreSQL'][0]:.2f}.")
    lines += [""] + summaries + [""]
    if saturation_only:
        return write_report(lines, output)

    # 2. Cross-node delivery.
    nodes = [start_node(binary, ["--postgres", url]) for _ in range(3)]
    ports = [port for _, port in nodes]
    lines += ["## Cross-node delivery: one writer on A, 1 000 readers", "", HEADER]
    one = load(binary, room_urls(ports[:1]), clients=1000, writers=1, rate=200)
    spread = load(binary, room_urls(ports), clients=1000, writers=1, rate=200)
    lines += [row("all on A, 200/s", one), row("spread over A, B, C, 200/s", spread), "",
              f"p99 spread ÷ one node: {spread['latencyMs']['p99'] / max(one['latencyMs']['p99'], 0.001):.2f}; "
              f"p50: {spread['latencyMs']['p50'] / max(one['latencyMs']['p50'], 0.001):.2f}.", ""]

    # 3. Writers on every node of one room.
    lines += ["## One room, three writers: on three nodes beside on one", "", HEADER]
    best = {}
    for name, targets in [("three writers on A", ports[:1]), ("one writer on each of A, B, C", ports)]:
        best[name] = 0
        for rate in [250, 500, 1000, 2000, 4000, 8000]:
            report = load(binary, room_urls(targets), clients=30, writers=3, rate=rate)
            lines.append(row(f"{name}, {rate}/s offered", report))
            if report["latencyMs"]["p99"] >= 100 or report["actionsPerSecond"] < 0.95 * rate:
                break
            best[name] = rate
    for node, _ in nodes:
        stop(node)
    lines += ["", "Highest rate held with p99 under 100 ms: "
              + "; ".join(f"{name} {rate}/s" for name, rate in best.items()) + "."]

    write_report(lines, output)


def write_report(lines, output):
    text = "\n".join(lines) + "\n"
    if output:
        with open(output, "w") as file:
            file.write(text)
    print(text)


def run(body):
    """Runs `body`, then stops every process it started and removes the work directory."""
    try:
        body()
    finally:
        for process in reversed(processes):
            stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    run(main)
