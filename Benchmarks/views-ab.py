#!/usr/bin/env python3
"""Views and private parts against two builds taking turns: the server's CPU per delivery and deliveries per second.

    python3 Benchmarks/views-ab.py BEFORE_BINARY AFTER_BINARY

Each round runs, for each build, the saturating runs of `views.py` on a fresh server: 1 000 clients over 10 views
(`--paths 10`, burst of 10 writers × 16 in flight), and 1 000 clients with their own subtrees on a server with
`--private '/hands/{sub}'` (the same burst). REPEAT (default 3) rounds; DURATION (default 6) seconds a run. Prints
each build's medians and AFTER ÷ BEFORE.
"""
import os
import statistics
import sys
import tempfile

os.environ.setdefault("DURATION", "6")
from views import PRIVATE, run  # noqa: E402

REPEAT = int(os.environ.get("REPEAT", "3"))
BURST = dict(scenario="burst", writers=10, window=16, clients=1000)


def scenarios(secret):
    auth = ["--auth-secret-file", secret]
    return {
        "10 views": ([], dict(paths=10, **BURST)),
        "private parts": (auth + ["--private", PRIVATE],
                          dict(private_part=PRIVATE, auth_secret_file=secret, **BURST)),
    }


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    builds = {"before": sys.argv[1], "after": sys.argv[2]}
    figures = {}
    with tempfile.TemporaryDirectory(prefix="lockstep-views-ab-") as work:
        secret = os.path.join(work, "secret")
        with open(secret, "w") as file:
            file.write(os.urandom(32).hex() + "\n")
        for round_number in range(REPEAT):
            print(f"round {round_number + 1}", file=sys.stderr)
            for name, (server, options) in scenarios(secret).items():
                for build, binary in builds.items():
                    report = run(binary, server, **options)
                    entry = figures.setdefault((name, build), {"micros": [], "rate": [], "lost": 0})
                    entry["micros"].append(report["serverMicrosPerDelivery"])
                    entry["rate"].append(report["deliveriesPerSecond"])
                    entry["lost"] += report["gaps"] + report["missing"] + report["errors"] + report["closedByServer"]
    print("| | before | after | after ÷ before |")
    print("| --- | ---: | ---: | ---: |")
    for name in scenarios("").keys():
        before, after = figures[(name, "before")], figures[(name, "after")]
        for label, key, unit in (("server CPU per delivery", "micros", "{:.2f} µs"),
                                 ("deliveries/s", "rate", "{:,.0f}")):
            b, a = statistics.median(before[key]), statistics.median(after[key])
            print(f"| {name}: {label} | {unit.format(b)} | {unit.format(a)} | {a / b:.2f} |")
    lost = sum(entry["lost"] for entry in figures.values())
    print(f"\nIntegrity: {lost} gaps, missing deliveries, errors or closed clients in {REPEAT * 4} runs.")


if __name__ == "__main__":
    main()
