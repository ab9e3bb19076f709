"""Benchmark: simplifying a model over protobuf's 2 GiB, whose weights are in a side file, with
`onnx simplify` against onnxsim, OnnxSlim and polygraphy's constant folding (issue 58: "works on
a model over 2 GiB with external data"; onnxsim #158/#262/#355).

Usage (from the repository root):

    cargo build --release -p onnx-cli
    python3 -m venv /tmp/simenv && /tmp/simenv/bin/pip install onnx==1.23.2 onnxruntime==1.32.0 \\
        onnxsim==0.8.1 onnxslim==0.1.98 polygraphy==0.53.6 onnx-graphsurgeon==0.6.1
    python3 bench/simplify_big_model.py --python /tmp/simenv/bin/python [--write docs/benchmarks.md]

The model: nine feed-forward blocks (MatMul 4096→8192, Relu, MatMul 8192→4096) whose 18 weights
take 2.25 GiB in one side file of random bytes, each block with what exporters leave around
such layers (an Identity, a scale computed from constants, a Reshape to a shape computed from
`Shape`). The side file is written once and read by every tool from the page cache. Each tool reads the model file and writes its result beside
it, big tensors in a side file: ours the input's, where they come through unchanged, and with
`--external-data` a new one in another folder, as the others write theirs
(`onnx.save(..., save_as_external_data=True)`). Whole processes, wall time and peak RSS.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile

from common import ROOT, machine, run_timed, update_section

ONNX = ROOT / "target/release/onnx"
WIDTH, HIDDEN, BLOCKS = 4096, 8192, 9

SAVE = "onnx.save(m, sys.argv[2], save_as_external_data=True, location=os.path.basename(sys.argv[2]) + '.data')"
TOOLS = {
    "onnxsim": "import onnx, onnxsim, sys, os; m, _ = onnxsim.simplify(onnx.load(sys.argv[1]), check_n=0); "
               f"{SAVE}; print(len(m.graph.node))",
    "OnnxSlim": "import onnx, onnxslim, sys, os; m = onnxslim.slim(onnx.load(sys.argv[1])); "
                f"{SAVE}; print(len(m.graph.node))",
    "polygraphy": "import onnx, sys, os; from polygraphy.backend.onnx import fold_constants; "
                  f"m = fold_constants(onnx.load(sys.argv[1])); {SAVE}; print(len(m.graph.node))",
}


def write_model(folder: str) -> tuple[str, int]:
    """The text model and its sparse side file; returns the text's path and the side file's size."""
    weights, nodes, offset = [], [], 0
    for b in range(BLOCKS):
        for name, rows, cols in ((f"up{b}", WIDTH, HIDDEN), (f"down{b}", HIDDEN, WIDTH)):
            length = rows * cols * 4
            weights.append(f'float[{rows},{cols}] {name} = ["location": "weights.bin", "offset": "{offset}", '
                           f'"length": "{length}"]')
            offset = (offset + length + 63) // 64 * 64
        h = "x" if b == 0 else f"out{b - 1}"
        nodes += [
            f"u{b} = MatMul({h}, up{b})", f"r{b} = Relu(u{b})", f"d{b} = MatMul(r{b}, down{b})",
            f"i{b} = Identity(d{b})",
            f"root{b} = Sqrt(width)", f"scale{b} = Div(one, root{b})", f"s{b} = Mul(i{b}, scale{b})",
            f"shape{b} = Shape({h})", f"rows{b} = Gather(shape{b}, zero)", f"rows1d{b} = Unsqueeze(rows{b}, axes)",
            f"target{b} = Concat <axis = 0> (rows1d{b}, cols)", f"out{b} = Reshape(s{b}, target{b})",
        ]
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        # Random bytes (some are NaN as floats: nothing here computes with the weights),
        # so that no two weights are the same, as in a trained model.
        left = offset
        while left:
            chunk = min(left, 64 << 20)
            f.write(os.urandom(chunk))
            left -= chunk
    constants = [f"float width = {{{WIDTH}.0}}", "float one = {1.0}", "int64 zero = {0}", "int64[1] axes = {0}",
                 f"int64[1] cols = {{{WIDTH}}}"]
    text = (f'<ir_version: 8, opset_import: ["" : 17]>\nbig (float[1,{WIDTH}] x) => (float[1,{WIDTH}] out{BLOCKS - 1})\n'
            f"<{', '.join(weights + constants)}>\n{{\n" + "\n".join(f"  {n}" for n in nodes) + "\n}\n")
    path = os.path.join(folder, "big.onnxtxt")
    with open(path, "w") as f:
        f.write(text)
    return path, offset


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True, help="a Python with onnxsim, onnxslim and polygraphy")
    parser.add_argument("--write", help="update this markdown file's section")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        text, size = write_model(tmp)
        model = os.path.join(tmp, "big.onnx")
        run_timed([str(ONNX), "convert", text, model])
        nodes_before = 12 * BLOCKS
        t, rss, stdout = run_timed([str(ONNX), "simplify", model, os.path.join(tmp, "ours.onnx"), "--json"])
        report = json.loads(stdout)
        rows.append(f"| `onnx simplify` | {report['nodes_after']} | {t:.2f} s | {rss / 1024:.0f} MB | "
                    f"{os.path.getsize(os.path.join(tmp, 'ours.onnx')):,} bytes, refers to the input's side file |")
        print(rows[-1], flush=True)
        # As the others write it: every weight copied into a new side file.
        os.mkdir(os.path.join(tmp, "out"))
        out = os.path.join(tmp, "out", "ours.onnx")
        t, rss, stdout = run_timed([str(ONNX), "simplify", model, out, "--external-data", "ours.onnx.data", "--json"])
        rows.append(f"| `onnx simplify --external-data` | {json.loads(stdout)['nodes_after']} | {t:.2f} s | "
                    f"{rss / 1024:.0f} MB | {os.path.getsize(out):,} bytes + "
                    f"{os.path.getsize(out + '.data') / 2**30:.2f} GiB side file |")
        print(rows[-1], flush=True)
        os.remove(out + ".data")
        for name, code in TOOLS.items():
            out = os.path.join(tmp, f"{name}.onnx")
            t, rss, stdout = run_timed([args.python, "-c", code, model, out], ok=(0, 1))
            if os.path.exists(out):
                nodes = stdout.decode().split()[-1]
                result = f"{os.path.getsize(out):,} bytes + {os.path.getsize(out + '.data') / 2**30:.2f} GiB side file"
            else:
                import subprocess
                err = subprocess.run([args.python, "-c", code, model, out], capture_output=True, text=True).stderr
                nodes, result = "fails", (err.strip().splitlines() or ["no output"])[-1][:160].replace("|", "\\|")
            rows.append(f"| {name} | {nodes} | {t:.2f} s | {rss / 1024:.0f} MB | {result} |")
            print(rows[-1], flush=True)
            for leftover in (out, out + ".data"):
                if os.path.exists(leftover):
                    os.remove(leftover)
    section = "\n".join([
        "## `onnx simplify` on a model over 2 GiB (issue 58)",
        "",
        f"`python3 bench/simplify_big_model.py --python /tmp/simenv/bin/python --write docs/benchmarks.md` on "
        f"{datetime.date.today()}, {machine()}: {BLOCKS} feed-forward blocks whose weights take "
        f"{size / 2**30:.2f} GiB in one side file, {nodes_before} nodes (an Identity, a scale from constants and a "
        "Reshape to a computed shape around each block's two MatMuls). Whole processes, one run each: nodes left, "
        "wall time, peak RSS (the side file is mapped: its pages count once read).",
        "",
        "| tool | nodes left | time | peak RSS | written |",
        "|---|---|---|---|---|",
        *rows,
    ])
    if args.write:
        update_section(ROOT / args.write, "simplify-big", section)
    else:
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
