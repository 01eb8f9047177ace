"""The `lockstep` binary a benchmark runs: LOCKSTEP when set, else a release build (in SCRATCH_PATH when set)."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def release_binary():
    if os.environ.get("LOCKSTEP"):
        return os.path.abspath(os.environ["LOCKSTEP"])
    build = ["swift", "build", "-c", "release", "--product", "lockstep"]
    if os.environ.get("SCRATCH_PATH"):
        build += ["--scratch-path", os.environ["SCRATCH_PATH"]]
    subprocess.run(build, cwd=ROOT, check=True)
    path = subprocess.run(build + ["--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return os.path.join(path.strip(), "lockstep")
