"""What the benchmark scripts share: the binary they run and how they hand over their report."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def release_binary():
    """The `lockstep` to run: LOCKSTEP when set, else a release build (in SCRATCH_PATH when set)."""
    if os.environ.get("LOCKSTEP"):
        return os.path.abspath(os.environ["LOCKSTEP"])
    build = ["swift", "build", "-c", "release", "--product", "lockstep"]
    if os.environ.get("SCRATCH_PATH"):
        build += ["--scratch-path", os.environ["SCRATCH_PATH"]]
    subprocess.run(build, cwd=ROOT, check=True)
    path = subprocess.run(build + ["--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return os.path.join(path.strip(), "lockstep")


def publish(text, output):
    """Prints a report, and writes it to `output` too when one was named."""
    print(text)
    if output:
        with open(output, "w") as file:
            file.write(text)
