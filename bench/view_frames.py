"""Benchmark: how fast `onnx-view` shows a big model and answers keys (issue 25's budgets).

Usage (from the repository root):

    cargo build --release -p onnx-view --example frame_times
    python3 bench/view_frames.py [--runs 5] [--write docs/benchmarks.md]

Models: the generated 100,001-node chain (bench-data/nodes100k.onnx, written by
bench/load_vs_onnx.py) and a real 65 MB model (bench-data/real/tf2onnx_vgg16_tumor.onnx), plus
every model of tests/corpus/real.

Two measurements, side by side:

* the whole process, as a user starts it: `onnx-view MODEL --trace-startup
  --exit-after-first-frame` in a 200x60 pseudo-terminal; its own report of loading,
  indexing and the first frame (from process start to the frame drawn), and the wall time
  until it has exited (terminal restored). Median of N runs.
* keys, in process (`tui/examples/frame_times.rs`): update plus redraw into a 200x60 test
  terminal for 300 `j`, 50 `PageDown`, `G`/`Home` and screen switches (median and worst);
  building the search haystack, and matching each keystroke of a query over every node and
  value in all scopes.

Aims (issue 25): first frame <= 300 ms for the 50 MB model and for 100,000 nodes; key to
frame <= 16 ms; search results <= 50 ms after a keystroke.
"""
from __future__ import annotations

import argparse
import datetime
import fcntl
import json
import os
import pathlib
import re
import statistics
import struct
import subprocess
import termios
import time

from common import DATA, ROOT, machine, update_section

VIEW = ROOT / "target/release/onnx-view"
FRAMES = ROOT / "target/release/examples/frame_times"
TRACE = re.compile(r"load ([\d.]+)(µs|ms|s) · index ([\d.]+)(µs|ms|s) · first frame ([\d.]+)(µs|ms|s)")


def to_ms(value: str, unit: str) -> float:
    return float(value) * {"µs": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def in_terminal(model: pathlib.Path) -> tuple[float, float, float, float]:
    """Load, index and first-frame times the binary reports, and the wall time to exit (ms)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(VIEW), str(model), "--trace-startup", "--exit-after-first-frame"],
        stdin=slave, stdout=slave, stderr=slave, close_fds=True,
    )
    os.close(slave)
    output = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    proc.wait()
    wall = (time.perf_counter() - start) * 1e3
    os.close(master)
    found = TRACE.search(output.decode(errors="replace"))
    if proc.returncode != 0 or not found:
        raise SystemExit(f"onnx-view {model} failed ({proc.returncode}): {output[-500:]!r}")
    g = found.groups()
    return to_ms(g[0], g[1]), to_ms(g[2], g[3]), to_ms(g[4], g[5]), wall


def keys(model: pathlib.Path, query: str) -> dict:
    out = subprocess.run([str(FRAMES), str(model), query], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", type=pathlib.Path)
    args = parser.parse_args()
    for needed in (VIEW, FRAMES):
        if not needed.exists():
            raise SystemExit(f"{needed} is missing: cargo build --release -p onnx-view --example frame_times")
    models = [(DATA / "nodes100k.onnx", "r4242"), (DATA / "real/tf2onnx_vgg16_tumor.onnx", "conv")]
    models += [(p, "conv") for p in sorted((ROOT / "tests/corpus/real").glob("*.onnx"))]
    rows = []
    for model, query in models:
        if not model.exists():
            raise SystemExit(f"{model} is missing (bench-data: see bench/README.md)")
        runs = [in_terminal(model) for _ in range(args.runs)]
        load, index, first, wall = (statistics.median(r[i] for r in runs) for i in range(4))
        k = keys(model, query)
        size = model.stat().st_size / 1e6
        rows.append(
            f"| {model.name} | {size:.1f} | {k['nodes']:,} | {load:.1f} | {index:.1f} | **{first:.1f}** | {wall:.0f} "
            f"| {k['scroll']['median_ms']:.2f} / {k['scroll']['max_ms']:.2f} "
            f"| {k['page']['median_ms']:.2f} / {k['page']['max_ms']:.2f} "
            f"| {k['screens']['median_ms']:.2f} / {k['screens']['max_ms']:.2f} "
            f"| {k['haystack_ms']:.1f} | {k['search_keystroke']['median_ms']:.2f} / {k['search_keystroke']['max_ms']:.2f} |"
        )
        print(rows[-1], flush=True)
    text = "\n".join([
        "## onnx-view: first frame, keys and search (issue 25)",
        "",
        f"`python3 bench/view_frames.py --runs {args.runs} --write docs/benchmarks.md`, "
        f"{datetime.date.today()}, {machine()}. Release build.",
        "First frame: the binary's own report (`--trace-startup`) from process start to the first",
        "frame drawn in a 200x60 pseudo-terminal (load = read + decode, index = scopes, positions,",
        "definitions and uses), median of the runs; exit = wall time until the process has left",
        "(terminal restored). Keys: update + redraw into a 200x60 test terminal, median / worst",
        "(a screen's first visit builds its rows: the Values screen of 100,000 nodes once).",
        "Search: building the haystack of every node and value (on a worker, after the first",
        "frame), then matching each keystroke of a query, median / worst. All times in ms.",
        "Aims: first frame <= 300, key <= 16, search keystroke <= 50.",
        "",
        "| model | MB | nodes | load | index | first frame | exit | `j` | PgDn | screens | haystack | keystroke |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
    ])
    print(text)
    if args.write:
        update_section(args.write, "view-frames", text)


if __name__ == "__main__":
    main()
