"""Benchmark: peak memory and time of a model of more than 500 MB as text, ours against
onnx 1.23.2's printer, as whole processes side by side in one run (issue 26, point 5).

Usage (from the repository root; needs `pip install onnx==1.23.2 numpy`, 5 GB of disk):

    cargo build --release -p onnx-cli
    python3 bench/big_model_memory.py [--write docs/benchmarks.md]

The model (made once, in bench-data/big512/): eight float32 4096×4096 initializers (seeded
random) and eight MatMul nodes, written by `onnx.save`: 537 MB. Tasks, each run once:

* ours, every number inline: `onnx convert big512.onnx big512.onnxtxt --inline` (1.67 GB);
* onnx: a Python process that runs `onnx.load`, `onnx.printer.to_text` and writes the file;
* ours back: `onnx convert big512.onnxtxt back.onnx` (checked byte-identical to the input);
* ours `onnx fmt --check big512.onnxtxt`;
* ours, the default outline: `onnx convert big512.onnx outline.onnxtxt`, and back from it.
"""
from __future__ import annotations

import argparse
import datetime
import filecmp
import sys

from common import DATA, ROOT, machine, run_timed, update_section

OURS = ROOT / "target" / "release" / "onnx"
DIR = DATA / "big512"
MODEL = DIR / "big512.onnx"

ONNX_PRINT = """
import sys, onnx, onnx.printer
model = onnx.load(sys.argv[1])
with open(sys.argv[2], "w") as f:
    f.write(onnx.printer.to_text(model))
"""


def make_model() -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits, nodes, prev = [], [], "x"
    for i in range(8):
        weight = rng.standard_normal((4096, 4096), dtype=np.float32)
        inits.append(numpy_helper.from_array(weight, f"w{i}"))
        out = "y" if i == 7 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [out]))
        prev = out
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4096])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4096])],
        inits,
    )
    DIR.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(MODEL))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", help="update this markdown file's section")
    args = ap.parse_args()
    if not OURS.exists():
        sys.exit(f"{OURS} is missing: run cargo build --release -p onnx-cli")
    if not MODEL.exists():
        make_model()
    text, onnx_text = DIR / "big512.onnxtxt", DIR / "onnx-printed.onnxtxt"
    outline, back = DIR / "outline.onnxtxt", DIR / "back.onnx"
    tasks = [
        ("ours: convert to text, every number inline", [str(OURS), "convert", str(MODEL), str(text), "--inline"]),
        ("onnx: load + printer.to_text + write", [sys.executable, "-c", ONNX_PRINT, str(MODEL), str(onnx_text)]),
        ("ours: convert that text back to binary", [str(OURS), "convert", str(text), str(back)]),
        ("ours: fmt --check of that text", [str(OURS), "fmt", "--check", str(text)]),
        ("ours: convert to the default outline", [str(OURS), "convert", str(MODEL), str(outline)]),
        ("ours: convert the outline back to binary", [str(OURS), "convert", str(outline), str(back)]),
    ]
    rows = []
    for label, cmd in tasks:
        seconds, peak_kib, _ = run_timed(cmd)
        rows.append(f"| {label} | {seconds:.2f} s | {peak_kib / 1024 / 1024:.2f} GB |")
        print(rows[-1], flush=True)
        # Compared in blocks: reading both files whole into this process would be counted in
        # the next child's peak (a forked child starts with its parent's resident memory).
        if "back to binary" in label and not filecmp.cmp(back, MODEL, shallow=False):
            sys.exit(f"{label}: {back} differs from {MODEL}")
    sizes = f"model {MODEL.stat().st_size / 1e6:.0f} MB, our text {text.stat().st_size / 1e9:.2f} GB, "
    sizes += f"onnx's text {onnx_text.stat().st_size / 1e9:.2f} GB, outline {outline.stat().st_size} bytes"
    section = "\n".join(
        [
            "## A model of more than 500 MB as text: peak memory, side by side",
            "",
            "Command: `cargo build --release -p onnx-cli && python3 bench/big_model_memory.py "
            "--write docs/benchmarks.md`",
            "",
            f"{machine()}, {datetime.date.today()}; {sizes}. Each task once, as a whole process; "
            "peak RSS from `wait4`. Both round trips are checked byte-identical.",
            "",
            "| task | time | peak RSS |",
            "|---|---|---|",
            *rows,
        ]
    )
    print(section)
    if args.write:
        update_section(ROOT / args.write, "big-model-memory", section)


if __name__ == "__main__":
    main()
