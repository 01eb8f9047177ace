#!/usr/bin/env python3
"""100 000 sockets in one room across six servers on one PostgreSQL, on this machine.

    python3 Benchmarks/many-sockets.py [--clients N] [--servers S] [--processes P] [--source-addresses K]
                                        [--rate R] [--duration SECONDS] [--event-loop epoll|poll]
                                        [--generator-loop epoll|poll] [OUTPUT.md]

One process may hold at most `ulimit -Hn` descriptors (20 000 here, and root cannot raise it), so neither one
server nor one generator can hold 100 000 sockets: the script starts a throwaway PostgreSQL (see cluster.py), S
release `lockstep serve` nodes on it (counter app), and one `lockstep load --processes P --source-addresses K`
whose clients take the nodes' URLs in turn (client i on node i mod S, in process i mod P, from 127.0.0.<2 + i mod
K>). One writer sends R actions/s for the duration; every client checks that it got every version in order. The
nodes and the generator's loops run on epoll unless told otherwise (`--event-loop`, `--generator-loop`): most of
their connections are idle in most passes.

While the load runs, each node's RSS and `lockstep_connections` are sampled once a second; the report gives,
per node, the RSS beside the node's RSS before any client (the baseline of the same run) and the growth per
connection, then the generator's report: deliveries, in order (gaps, missing), p50/p99.

Needs root (or sudo) for the postgres user. LOCKSTEP_BINARY=PATH uses that `lockstep` instead of building a release.
"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

import cluster

OPTIONS = {"clients": 100_000, "servers": 6, "processes": 8, "source-addresses": 8, "rate": 5, "duration": 30,
           "event-loop": "epoll", "generator-loop": "epoll"}
LOOP_OPTIONS = ("event-loop", "generator-loop")


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def connections(port):
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("lockstep_connections "):
            return int(float(line.split()[1]))
    return 0


def main():
    arguments = sys.argv[1:]
    options = dict(OPTIONS)
    output = None
    while arguments:
        if arguments[0].startswith("--"):
            name = arguments[0][2:]
            options[name] = arguments[1] if name in LOOP_OPTIONS else int(arguments[1])
            arguments = arguments[2:]
        else:
            output, arguments = arguments[0], arguments[1:]
    binary = os.environ.get("LOCKSTEP_BINARY") or cluster.lockstep()
    url = cluster.start_postgres()
    nodes = [cluster.start_node(binary, ["--postgres", url, "--max-connections", "20000",
                                         "--event-loop", options["event-loop"]])
             for _ in range(options["servers"])]
    baseline = {node.pid: resident_kib(node.pid) for node, _ in nodes}
    peak = {node.pid: (0, baseline[node.pid]) for node, _ in nodes}
    done = threading.Event()

    def sample():
        while not done.wait(1):
            for node, port in nodes:
                count, rss = connections(port), resident_kib(node.pid)
                if (count, rss) > peak[node.pid]:
                    peak[node.pid] = (count, rss)

    sampler = threading.Thread(target=sample)
    sampler.start()
    urls = [f"ws://127.0.0.1:{port}/rooms/many" for _, port in nodes]
    cluster.DURATION = str(options["duration"])
    args = cluster.load_arguments(
        binary, urls, clients=options["clients"], writers=1, rate=options["rate"], processes=options["processes"],
        **{"source-addresses": options["source-addresses"], "threads": 1, "batch": 500, "open-timeout": "120s",
           "event-loop": options["generator-loop"]})
    began = time.time()
    result = subprocess.run(args, capture_output=True, text=True)
    done.set()
    sampler.join()
    try:
        report = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"lockstep load failed: {result.stderr[-3000:]}")

    lines = [f"{options['clients']} clients in one room over {options['servers']} servers on one PostgreSQL, "
             f"{options['processes']} generator processes, {options['source-addresses']} source addresses, one "
             f"writer at {options['rate']} actions/s for {options['duration']} s, nodes on `--event-loop "
             f"{options['event-loop']}`, generator on `--event-loop {options['generator-loop']}`; this machine "
             f"({os.cpu_count()} cores), whole run {time.time() - began:.0f} s.", "",
             "| node | connections | RSS before clients | RSS with clients | per connection |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for index, (node, port) in enumerate(nodes):
        count, rss = peak[node.pid]
        per = (rss - baseline[node.pid]) / count if count else 0
        lines.append(f"| {chr(65 + index)} | {count} | {baseline[node.pid] / 1024:.1f} MB | {rss / 1024:.1f} MB | "
                     f"{per:.2f} KiB |")
    latency = report["latencyMs"]
    expected = report["acked"] * report["connected"]
    lines += ["", "| connected | acked | deliveries | expected (acked × connected) | deliveries/s | gaps | missing "
              "| p50 ms | p99 ms | max ms | generator CPU s |",
              "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
              f"| {report['connected']} | {report['acked']} | {report['deliveries']} | {expected} | "
              f"{report['deliveriesPerSecond']:.0f} | {report['gaps']} | {report['missing']} | {latency['p50']:.1f} | "
              f"{latency['p99']:.1f} | {latency['max']:.1f} | {report['generatorCPUSeconds']:.1f} |", "",
              f"passed: {report['passed']}; every delivery in order: "
              f"{report['deliveries'] == expected and report['gaps'] == 0 and report['missing'] == 0}; "
              f"p99 under 500 ms: {latency['p99'] < 500}."]
    if report.get("firstError"):
        lines.append(f"first error: {report['firstError'][:300]}")
    text = "\n".join(lines) + "\n"
    if output:
        with open(output, "w") as file:
            file.write(text)
    print(text)


if __name__ == "__main__":
    cluster.run(main)
