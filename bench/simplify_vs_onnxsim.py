"""Benchmark: `onnx simplify` against onnxsim, OnnxSlim and polygraphy's constant folding on
the real models, whole processes, side by side: nodes left and wall time.

Usage (from the repository root):

    cargo build --release -p onnx-cli
    python3 -m venv /tmp/simenv && /tmp/simenv/bin/pip install onnx==1.23.2 onnxruntime==1.32.0 \\
        onnxsim==0.8.1 onnxslim==0.1.98 polygraphy==0.53.6 onnx-graphsurgeon==0.6.1
    python3 bench/simplify_vs_onnxsim.py --python /tmp/simenv/bin/python [--runs 3] [--write docs/benchmarks.md]

Each tool reads the model file and writes its result: ours `onnx simplify IN OUT`; onnxsim
`onnxsim IN OUT --no-large-tensor … ` is not used: its Python API with its checks off
(`onnxsim.simplify(model, check_n=0)` then `onnx.save`), OnnxSlim `onnxslim.slim(IN, OUT)`,
polygraphy `fold_constants` then `onnx.save`, each in a fresh Python process (what a user's
command costs, imports included). Median wall time of `--runs` runs, alternated.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import tempfile

from common import ROOT, machine, run_timed, update_section

ONNX = ROOT / "target/release/onnx"

# Each runs in the temporary folder (argv[3]): OnnxSlim and onnxruntime's symbolic shape
# inference leave files in the working directory.
TOOLS = {
    "onnxsim": "import onnx, onnxsim, sys, os; os.chdir(sys.argv[3]); m, _ = onnxsim.simplify(onnx.load(sys.argv[1]), check_n=0); "
               "onnx.save(m, sys.argv[2]); print(len(m.graph.node))",
    "OnnxSlim": "import onnx, onnxslim, sys, os; os.chdir(sys.argv[3]); m = onnxslim.slim(onnx.load(sys.argv[1])); onnx.save(m, sys.argv[2]); "
                "print(len(m.graph.node))",
    "polygraphy": "import onnx, sys, os; os.chdir(sys.argv[3]); from polygraphy.backend.onnx import fold_constants; "
                  "m = fold_constants(onnx.load(sys.argv[1])); onnx.save(m, sys.argv[2]); print(len(m.graph.node))",
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True, help="a Python with onnxsim, onnxslim and polygraphy")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", help="update this markdown file's section")
    args = parser.parse_args()
    models = sorted((ROOT / "tests/corpus/real").glob("*.onnx"))
    rows = []
    wins = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            out = f"{tmp}/{model.stem}.onnx"
            ours_cmd = [str(ONNX), "simplify", str(model), out, "--json"]
            times = {name: [] for name in ["ours", *TOOLS]}
            nodes = {}
            for _ in range(args.runs):
                t, _, stdout = run_timed(ours_cmd)
                times["ours"].append(t)
                report = json.loads(stdout)
                nodes["before"], nodes["ours"] = report["nodes_before"], report["nodes_after"]
                for name, code in TOOLS.items():
                    try:
                        t, _, stdout = run_timed([args.python, "-c", code, str(model), f"{tmp}/{name}.onnx", tmp])
                        times[name].append(t)
                        nodes[name] = int(stdout.decode().split()[-1])
                    except SystemExit:
                        nodes[name] = None
            cell = lambda name: "fails" if nodes.get(name) is None else f"{nodes[name]} ({statistics.median(times[name]) * 1000:.0f} ms)"
            best_other = min((n for k, n in nodes.items() if k in TOOLS and n is not None), default=None)
            wins += best_other is None or nodes["ours"] <= best_other
            rows.append(f"| {model.stem} | {nodes['before']} | {cell('ours')} | {cell('onnxsim')} | {cell('OnnxSlim')} | "
                        f"{cell('polygraphy')} |")
            print(rows[-1], flush=True)
    section = "\n".join([
        "## `onnx simplify` against onnxsim, OnnxSlim and polygraphy (issue 58)",
        "",
        f"`python3 bench/simplify_vs_onnxsim.py --python /tmp/simenv/bin/python --runs {args.runs} --write "
        f"docs/benchmarks.md` on {datetime.date.today()}, {machine()}: nodes left in the main graph and the median "
        f"wall time of {args.runs} whole processes each (onnxsim 0.8.1 with its checks off, OnnxSlim 0.1.98, "
        "polygraphy 0.53.6's `fold_constants`; each at the model's own input shapes). Ours leaves a node whose "
        "folded result would be bigger than its inputs (caffe2's ConstantOfShape weights: 28 MB for a 37 KB model; "
        f"`--allow-growth` folds them). Ours leaves at most the best of the three on {wins} of {len(models)} models.",
        "",
        "| model | nodes | `onnx simplify` | onnxsim | OnnxSlim | polygraphy |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
    if args.write:
        update_section(ROOT / args.write, "simplify", section)
    else:
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
