"""Benchmark: `onnx reduce` against `polygraphy debug reduce --mode=bisect` on the real models,
side by side: nodes left, checks run, wall time.

Usage (from the repository root):

    cargo build --release -p onnx-cli
    python3 -m venv /tmp/simenv && /tmp/simenv/bin/pip install onnx==1.23.2 onnxruntime==1.32.0 \\
        polygraphy==0.53.6
    python3 bench/reduce_vs_polygraphy.py --python /tmp/simenv/bin/python [--write docs/benchmarks.md]

The check, the same for both: the candidate fails while it holds the model's middle named
node (what a converter that cannot take one node looks like); each run of it appends a line
to a counter file, so both tools' checks are counted the same way. Both start from the
model and its committed inputs (polygraphy computes the values it folds in with
onnxruntime, ours with the evaluator).
"""
from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from common import ROOT, machine, update_section

ONNX = ROOT / "target/release/onnx"

CHECK = r"""
import os, sys, onnx
with open(os.environ["CHECK_COUNTER"], "a") as f:
    f.write("x\n")
m = onnx.load(sys.argv[1], load_external_data=False)
sys.exit(1 if any(n.name == os.environ["TARGET"] for n in m.graph.node) else 0)
"""

MIDDLE = r"""
import sys, onnx
named = [n.name for n in onnx.load(sys.argv[1]).graph.node if n.name]
print(named[len(named) // 2] if named else "")
"""

NODES = "import sys, onnx; print(len(onnx.load(sys.argv[1]).graph.node))"


def timed(cmd: list[str], env: dict, cwd: str) -> tuple[float, int]:
    start = time.perf_counter()
    code = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return time.perf_counter() - start, code


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True, help="a Python with onnx, onnxruntime and polygraphy")
    parser.add_argument("--write", help="update this markdown file's section")
    args = parser.parse_args()
    polygraphy = str(pathlib.Path(args.python).parent / "polygraphy")
    rows, fewer_or_equal, counted = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        check = pathlib.Path(tmp) / "check.py"
        check.write_text(CHECK)
        for data in sorted((ROOT / "tests/fixtures/run").iterdir()):
            model = ROOT / f"tests/corpus/real/{data.name}.onnx"
            if not (data / "input_0.pb").exists() or not model.exists():
                continue
            target = subprocess.run([args.python, "-c", MIDDLE, str(model)], capture_output=True, text=True).stdout.strip()
            if not target:
                continue
            results = {}
            for tool in ["ours", "polygraphy"]:
                counter = pathlib.Path(tmp) / f"{tool}.count"
                counter.unlink(missing_ok=True)
                env = {**os.environ, "CHECK_COUNTER": str(counter), "TARGET": target}
                out = pathlib.Path(tmp) / f"{data.name}_{tool}.onnx"
                if tool == "ours":
                    cmd = [str(ONNX), "reduce", str(model), str(out), "--check", f"{args.python} {check} {{}}",
                           "--test-data", str(data)]
                else:
                    cmd = [polygraphy, "debug", "reduce", str(model), "-o", str(out), "--mode=bisect",
                           "--check", args.python, str(check), "polygraphy_debug.onnx"]
                seconds, code = timed(cmd, env, tmp)
                checks = len(counter.read_text().splitlines()) if counter.exists() else 0
                nodes = (subprocess.run([args.python, "-c", NODES, str(out)], capture_output=True, text=True).stdout.strip()
                         if code == 0 and out.exists() else "fails")
                results[tool] = (nodes, checks, seconds)
            (on, oc, ot), (pn, pc, pt) = results["ours"], results["polygraphy"]
            if pn != "fails":
                counted += 1
                fewer_or_equal += on != "fails" and int(on) <= int(pn) and oc <= pc
            def shown(nodes: str, checks: int, seconds: float) -> str:
                kept = "fails" if nodes == "fails" else f"{nodes} node{'' if nodes == '1' else 's'}"
                return f"{kept}, {checks} checks, {seconds:.1f} s"
            rows.append(f"| {data.name} | {target} | {shown(on, oc, ot)} | {shown(pn, pc, pt)} |")
            print(rows[-1], file=sys.stderr)
    today = datetime.date.today().isoformat()
    section = "\n".join([
        "## Reducing a failing model: `onnx reduce` against `polygraphy debug reduce` (issue 58)",
        "",
        f"Measured {today} on {machine()}; `python3 bench/reduce_vs_polygraphy.py --python PY`; polygraphy 0.53.6 "
        "(`--mode=bisect`) with onnxruntime 1.32.0. The check fails while the candidate holds the model's middle "
        f"named node. Ours as small in no more checks than polygraphy on {fewer_or_equal} of the {counted} models "
        "polygraphy reduces.",
        "",
        "| model | node | ours | polygraphy |",
        "|---|---|---|---|",
        *rows,
    ])
    print(section)
    if args.write:
        update_section(ROOT / args.write, "reduce-vs-polygraphy", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
