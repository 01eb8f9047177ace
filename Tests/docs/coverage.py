#!/usr/bin/env python3
"""Every public symbol of the library products has a doc comment.

    python3 Tests/docs/coverage.py SYMBOLGRAPH_DIR MODULE...

Reads the symbol graphs `swift package dump-symbol-graph --minimum-access-level public` writes and lists each public
symbol of MODULE without a doc comment of its own. Members that implement a protocol requirement show the
protocol's documentation and are not listed. Exits 1 when any is missing.
"""
import glob
import json
import os
import sys


def undocumented(directory, module):
    missing = []
    for path in glob.glob(os.path.join(directory, f"{module}.symbols.json")) + glob.glob(
            os.path.join(directory, f"{module}@*.symbols.json")):
        graph = json.load(open(path))
        inherited = {r["source"] for r in graph["relationships"] if "sourceOrigin" in r}
        for symbol in graph["symbols"]:
            if symbol["accessLevel"] not in ("public", "open") or "docComment" in symbol:
                continue
            if symbol["identifier"]["precise"] in inherited:
                continue
            location = symbol.get("location", {})
            file = location.get("uri", "").split("/Sources/")[-1]
            line = location.get("position", {}).get("line", 0) + 1
            missing.append(f"Sources/{file}:{line}: {'.'.join(symbol['pathComponents'])}")
    return sorted(set(missing))


def main():
    directory, modules = sys.argv[1], sys.argv[2:]
    missing = [entry for module in modules for entry in undocumented(directory, module)]
    for entry in missing:
        print(entry)
    print(f"{len(missing)} public symbols without a doc comment in {', '.join(modules)}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
