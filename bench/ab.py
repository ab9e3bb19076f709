"""Side by side: one command, run by two (or more) builds alternately, whole processes.

Usage (from the repository root; plain Python):

    git worktree add /tmp/base REV
    CARGO_TARGET_DIR=/tmp/base-target cargo build --release -p onnx-cli
    cargo build --release -p onnx-cli
    python3 bench/ab.py --runs 21 "{bin} check model.onnx" /tmp/base-target/release/onnx target/release/onnx

`{bin}` in the command is replaced by each build in turn; the builds run alternately, so that
a slow spell of the machine falls on both. Prints the median and the best wall time of each.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("command", help="shell command with {bin} where the binary goes")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    times: dict[str, list[float]] = {b: [] for b in args.binaries}
    for _ in range(args.runs):
        for binary in args.binaries:
            start = time.perf_counter()
            subprocess.run(args.command.format(bin=binary), shell=True, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[binary].append(time.perf_counter() - start)
    for binary, runs in times.items():
        print(f"{binary}: median {statistics.median(runs) * 1000:.1f} ms, best {min(runs) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
