#!/usr/bin/env python3
"""A client starting from its kept state against one downloading the room: time to first state and bytes received.

A counter-free `json` room with 100 000 items; lockstep-client runs through a byte-counting TCP proxy. "download" is
a client with nothing kept (it waits for the snapshot); "kept" is a client started again with `--keep` after a first
run kept the room (it shows the kept state at once, then resumes with since= and gets no patch when nothing changed);
"kept, 100 changed" is the same after 100 changes by others. Run from the project root after `swift build`:

    python3 Benchmarks/kept-start.py [--items 100000] [--runs 3]
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

BUILD = os.environ.get("LOCKSTEP_BUILD", ".build/debug")


class CountingProxy:
    """Forwards 127.0.0.1:port to the server and counts the bytes sent to clients."""

    def __init__(self, target):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = 0
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            server = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self.pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self.pump, args=(server, client, True), daemon=True).start()

    def pump(self, source, destination, to_client):
        try:
            while data := source.recv(65536):
                if to_client:
                    with self.lock:
                        self.received += len(data)
                destination.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, destination):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def take(self):
        with self.lock:
            count, self.received = self.received, 0
        return count


def act(port, room, actions):
    """Sends actions through a lockstep-client that reads them from stdin and exits once each is acknowledged."""
    commands = "".join(f"raw {json.dumps(action)}\n" for action in actions)
    subprocess.run([f"{BUILD}/lockstep-client", f"ws://127.0.0.1:{port}/rooms/{room}", "--app", "json"],
                   input=commands.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   timeout=600)


def fill(port, room, items):
    actions = [{"type": "patch", "ops": [{"op": "add", "path": "/items", "value": []}]}]
    for start in range(0, items, 2000):
        ops = [{"op": "add", "path": "/items/-", "value": {"id": i, "title": f"item {i}", "done": False}}
               for i in range(start, min(items, start + 2000))]
        actions.append({"type": "patch", "ops": ops})
    act(port, room, actions)


def run_client(proxy, room, keep=None):
    """Starts lockstep-client until it has synced; returns (seconds to first state, bytes received, version)."""
    arguments = [f"{BUILD}/lockstep-client", f"ws://127.0.0.1:{proxy.port}/rooms/{room}", "--exec", "",
                 "--app", "json"]
    if keep:
        arguments += ["--keep", keep, "--session", "bench"]
    proxy.take()
    start = time.perf_counter()
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first = None
    version = None
    for line in process.stdout:
        event = json.loads(line)
        if first is None and event.get("event") in ("snapshot", "restored"):
            first = time.perf_counter() - start
        if "version" in event:
            version = event["version"]
    process.wait(timeout=120)
    time.sleep(0.2)
    return first, proxy.take(), version


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    data = tempfile.mkdtemp(prefix="lockstep-bench-")
    keep = tempfile.mkdtemp(prefix="lockstep-bench-keep-")
    server = subprocess.Popen([f"{BUILD}/lockstep", "serve", "--port", "0", "--app", "json", "--data", data,
                               "--rate-limit", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = server.stdout.readline().decode()
        port = int(line.split("ws://127.0.0.1:")[1].split("/")[0])
        proxy = CountingProxy(port)
        fill(port, "big", options.items)
        results = {"download": [], "kept": [], "kept, 100 changed": []}
        for _ in range(options.runs):
            results["download"].append(run_client(proxy, "big"))
        run_client(proxy, "big", keep)  # keeps the room
        for _ in range(options.runs):
            results["kept"].append(run_client(proxy, "big", keep))
        for run in range(options.runs):
            act(port, "big", [{"type": "patch", "ops": [
                {"op": "replace", "path": f"/items/{run * 100 + i}/done", "value": True}]} for i in range(100)])
            results["kept, 100 changed"].append(run_client(proxy, "big", keep))
        print(f"{options.items} items; median of {options.runs} runs")
        download_bytes = sorted(r[1] for r in results["download"])[len(results["download"]) // 2]
        for name, runs in results.items():
            times = sorted(r[0] for r in runs)
            received = sorted(r[1] for r in runs)
            median_time = times[len(times) // 2]
            median_bytes = received[len(received) // 2]
            print(f"{name:>18}: first state {median_time * 1000:8.1f} ms, received {median_bytes:>10} bytes "
                  f"({median_bytes / download_bytes:.4f}x download)")
    finally:
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    main()
