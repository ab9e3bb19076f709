"""Benchmark: `onnx opset M OUT --to N` against onnx's version converter
(`onnx.version_converter.convert_version`, then `onnx.checker.check_model` and `onnx.save`),
side by side on the real and contrib corpus: which conversions each makes, and the time and
peak memory of whole processes.

Usage (from the repository root):

    cargo build --release -p onnx-cli
    python3 bench/opset_vs_onnx.py --python .venv/bin/python [--runs 3] [--write docs/benchmarks.md]

Coverage: every model of tests/corpus/real and tests/corpus/contrib that imports the default
domain, to every opset from 7 to the newest but its own; a conversion counts for onnx when
its converter returns and its checker accepts the result, for ours when `onnx opset` exits 0
(it checks its result against the target's schemas itself). Whether the converted models
compute the same is the tests' business (tests/tests/opset_corpus.rs, opset_node_tests.rs).
Time: each model converted to the newest opset by both, median of --runs whole processes.
"""
from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

from common import ROOT, machine, run_timed, update_section

ONNX = ROOT / "target/release/onnx"

# Converts one model to every target it is given; prints the targets it converted to.
ONNX_ALL_TARGETS = r"""
import sys, json, onnx
from onnx import version_converter
model = onnx.load(sys.argv[1], load_external_data=False)
done = []
for t in json.loads(sys.argv[2]):
    try:
        onnx.checker.check_model(version_converter.convert_version(model, t))
        done.append(t)
    except Exception:
        pass
print(json.dumps(done))
"""

# One whole conversion, as a user runs it.
ONNX_ONE = r"""
import sys, onnx
from onnx import version_converter
converted = version_converter.convert_version(onnx.load(sys.argv[1]), int(sys.argv[3]))
onnx.checker.check_model(converted)
onnx.save(converted, sys.argv[2])
"""


def default_opset(python: str, model: pathlib.Path) -> int | None:
    code = "import onnx,sys; m=onnx.load(sys.argv[1], load_external_data=False); " \
           "print(next((o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')), ''))"
    out = subprocess.run([python, "-c", code, str(model)], capture_output=True, text=True, check=True).stdout.strip()
    return int(out) if out else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True, help="a Python with onnx 1.23.2")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", help="update this markdown file's section")
    args = parser.parse_args()
    newest = int(subprocess.run([args.python, "-c", "import onnx; print(onnx.defs.onnx_opset_version())"],
                                capture_output=True, text=True, check=True).stdout)
    models = sorted((ROOT / "tests/corpus/real").glob("*.onnx")) + sorted((ROOT / "tests/corpus/contrib").glob("*.onnx"))
    total = ours_made = theirs_made = only_ours = only_theirs = 0
    timing = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            own = default_opset(args.python, model)
            if own is None:
                continue
            targets = [t for t in range(7, newest + 1) if t != own]
            theirs = set(json.loads(subprocess.run([args.python, "-c", ONNX_ALL_TARGETS, str(model), json.dumps(targets)],
                                                   capture_output=True, text=True, check=True).stdout))
            ours = set()
            for t in targets:
                code = subprocess.run([str(ONNX), "opset", str(model), f"{tmp}/out.onnx", "--to", str(t), "-q"],
                                      capture_output=True).returncode
                if code == 0:
                    ours.add(t)
            total += len(targets)
            ours_made += len(ours)
            theirs_made += len(theirs)
            only_ours += len(ours - theirs)
            only_theirs += len(theirs - ours)
            if newest in ours and newest in theirs:
                ours_t, ours_m, theirs_t, theirs_m = [], [], [], []
                for _ in range(args.runs):
                    s, m, _ = run_timed([str(ONNX), "opset", str(model), f"{tmp}/ours.onnx", "--to", str(newest), "-q"])
                    ours_t.append(s)
                    ours_m.append(m)
                    s, m, _ = run_timed([args.python, "-c", ONNX_ONE, str(model), f"{tmp}/theirs.onnx", str(newest)])
                    theirs_t.append(s)
                    theirs_m.append(m)
                timing.append((model.stem, model.stat().st_size, own, statistics.median(ours_t), max(ours_m),
                               statistics.median(theirs_t), max(theirs_m)))
            print(f"{model.stem}: opset {own}; ours {len(ours)}, onnx {len(theirs)} of {len(targets)} targets",
                  file=sys.stderr)
    timing.sort(key=lambda r: -r[1])
    lines = [
        f"`python3 bench/opset_vs_onnx.py --python .venv/bin/python --runs {args.runs}` "
        f"({datetime.date.today()}, {machine()}; onnx 1.23.2's converter then its checker and save, against "
        "`onnx opset`, release build). Coverage over every real and contrib model that imports the default "
        f"domain, each to every opset from 7 to {newest} but its own:",
        "",
        "| conversions asked | ours made | onnx made | only ours | only onnx |",
        "|---:|---:|---:|---:|---:|",
        f"| {total} | {ours_made} | {theirs_made} | {only_ours} | {only_theirs} |",
        "",
        f"Whole processes converting to opset {newest}, the largest models both convert (median of {args.runs} runs; "
        "peak RSS the largest):",
        "",
        "| model | size | from | ours | onnx | time ratio | ours peak | onnx peak |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for stem, size, own, ot, om, tt, tm in timing[:10]:
        lines.append(f"| {stem} | {size / 1e6:.1f} MB | {own} | {ot:.3f} s | {tt:.3f} s | {tt / ot:.1f}× | "
                     f"{om / 1024:.0f} MB | {tm / 1024:.0f} MB |")
    if timing:
        ratios = [tt / ot for _, _, _, ot, _, tt, _ in timing]
        lines.append("")
        lines.append(f"Over all {len(timing)} models both convert: time ratio median {statistics.median(ratios):.1f}×, "
                     f"smallest {min(ratios):.1f}×.")
    section = "\n".join(lines)
    print(section)
    if args.write:
        update_section(pathlib.Path(args.write), "opset", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
