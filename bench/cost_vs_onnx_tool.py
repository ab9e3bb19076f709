"""Benchmark: `onnx cost` against onnx-tool 1.0.1's profile, whole processes, side by side.

Usage (from the repository root; needs `pip install onnx==1.23.2 onnx-tool==1.0.1` in .venv):

    cargo build --release -p onnx-cli
    python3 bench/cost_vs_onnx_tool.py [--runs 5] [--write docs/benchmarks.md]

For each real model onnx-tool can profile, at the input sizes of its committed run data (as
`tests/fixtures/cost/gen_cost_cases.py` records them): ours is `onnx cost MODEL INPUT:DIMS…
--json` (read, fix the sizes, infer, count, print); onnx-tool's is a Python process that
imports it, loads the model, infers shapes from the same inputs' sizes and profiles every
node (`Model`, `shape_infer`, `profile`: what `python -m onnx_tool -i MODEL --dynamic_shapes …`
does, without printing its table). Median wall time of `--runs` runs each, alternated, and
the MACs each reports.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys

from common import ROOT, machine, run_timed, update_section

ONNX = ROOT / "target/release/onnx"
PYTHON = ROOT / ".venv/bin/python"
MODELS = ["pt_ts_spindle_eeg", "caffe2_light_inception_v1", "tf2onnx_basic_pitch", "p2o_ppocrv5_det",
          "keras2onnx_mtcnn_onet", "tf2onnx_deepcut", "pt_ts_romanizer_encoder"]

ONNX_TOOL = """
import json, sys, warnings, contextlib, io
import numpy, onnx_tool
warnings.simplefilter("ignore")
path, shapes = sys.argv[1], json.loads(sys.argv[2])
with contextlib.redirect_stdout(io.StringIO()):
    model = onnx_tool.Model(path, {"verbose": False})
    graph = model.graph
    graph.shape_infer({k: numpy.zeros(v, dtype=numpy.float32) for k, v in shapes.items()})
    graph.profile()
print(int(graph.macs[0]))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", help="update this markdown file's section")
    args = parser.parse_args()
    cases = json.loads((ROOT / "tests/fixtures/cost/onnx_tool.json").read_text())["cases"]
    rows = []
    for stem in MODELS:
        case = cases[stem]
        model = str(ROOT / case["model"])
        settings = [f"{k}:{','.join(map(str, v))}" for k, v in case["inputs"].items()]
        ours_cmd = [str(ONNX), "cost", model, *settings, "--json"]
        theirs_cmd = [str(PYTHON), "-c", ONNX_TOOL, model, json.dumps(case["inputs"])]
        ours, theirs = [], []
        for _ in range(args.runs):
            t, _, out = run_timed(ours_cmd)
            ours.append(t)
            our_macs = json.loads(out)["macs"]
            t, _, out = run_timed(theirs_cmd)
            theirs.append(t)
            their_macs = int(out.decode().strip().splitlines()[-1])
        o, t = statistics.median(ours), statistics.median(theirs)
        rows.append(f"| {stem} | {o * 1000:.0f} ms | {t * 1000:.0f} ms | {t / o:.0f}× | {our_macs:,} | {their_macs:,} |")
        print(rows[-1], flush=True)
    section = "\n".join([
        "## `onnx cost` against onnx-tool (issue 58)",
        "",
        f"`python3 bench/cost_vs_onnx_tool.py --runs {args.runs} --write docs/benchmarks.md` on "
        f"{datetime.date.today()}, {machine()}: whole processes, median of {args.runs} runs each, "
        "at the input sizes of each model's run data. onnx-tool's MACs differ where docs/cost.md "
        "says it miscounts (ConvTranspose, a bidirectional GRU, Tanh, Erf).",
        "",
        "| model | `onnx cost` | onnx-tool | faster | our MACs | onnx-tool's MACs |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
    if args.write:
        update_section(ROOT / args.write, "cost", section)
    else:
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
