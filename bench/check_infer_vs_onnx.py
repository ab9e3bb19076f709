"""Benchmark: check and infer a 20,000-node model, ours against onnx 1.23.2, side by side.

Usage (from the repository root; needs `pip install onnx==1.23.2 numpy`):

    cargo build --release -p onnx-cli && cargo build --release -p onnx-core --examples
    python3 bench/check_infer_vs_onnx.py [--repeat 3] [--blocks 4000] [--write docs/benchmarks.md]

Generates (once, in bench-data/) a model of 4,000 blocks `MatMul → Add → Relu → Shape →
Reshape` (20,000 nodes, symbolic batch dim, shape computations for data propagation;
`--blocks` makes another size, recorded in a section of its own). Then:

* check — onnx: `onnx.checker.check_model(path, full_check=True)` in-process (it reads the
  file itself, checks, then runs strict shape inference); ours in-process
  (`core/examples/check_infer_times.rs`): read the file, `check_model` with `full_check`
  (the rules, then inference with type constraints and declared types against inferred
  ones); ours whole process: `onnx check model.onnx`.
* infer — onnx: `onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)`
  in-process on a model already loaded (it serializes the model for C++, infers, and
  parses the answer back); ours in-process: decode the bytes, infer, and give the input's
  bytes with the new value descriptions appended (what `onnx infer` writes); ours whole
  process: `onnx infer model.onnx out.onnx` (also writes and syncs the file).
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time

from common import DATA, ROOT, machine, run_timed, update_section

BLOCKS = 4000


def model_path(blocks: int = BLOCKS):
    """The generated model of `blocks` blocks: `nodes20k.onnx` for the default 4,000."""
    return DATA / f"nodes{blocks * 5 // 1000}k.onnx"


MODEL = model_path()


def generate(blocks: int = BLOCKS) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((64, 64), dtype=np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((64,), dtype=np.float32), "B")
    nodes = []
    h = "x"
    for i in range(blocks):
        nodes += [
            helper.make_node("MatMul", [h, "W"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", "B"], [f"a{i}"]),
            helper.make_node("Relu", [f"a{i}"], [f"r{i}"]),
            helper.make_node("Shape", [f"r{i}"], [f"s{i}"]),
            helper.make_node("Reshape", [f"r{i}", f"s{i}"], [f"h{i}"]),
        ]
        h = f"h{i}"
    nodes.append(helper.make_node("Identity", [h], ["y"]))
    graph = helper.make_graph(
        nodes,
        model_path(blocks).stem,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64])],
        initializer=[w, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    DATA.mkdir(exist_ok=True)
    onnx.save(model, model_path(blocks))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", help="update this markdown file's section")
    parser.add_argument("--blocks", type=int, default=BLOCKS,
                        help="blocks of 5 nodes in the generated model (another size gets a section of its own)")
    args = parser.parse_args()
    MODEL = model_path(args.blocks)
    import onnx
    import onnx.checker
    import onnx.shape_inference

    if not MODEL.exists():
        generate(args.blocks)
    binary = str(ROOT / "target" / "release" / "onnx")
    out = MODEL.with_suffix(".inferred.onnx")
    model = onnx.load(str(MODEL))
    rows = {
        "check": (
            lambda: onnx.checker.check_model(str(MODEL), full_check=True),
            [binary, "check", str(MODEL)],
        ),
        "infer": (
            lambda: onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True),
            [binary, "infer", str(MODEL), str(out)],
        ),
    }
    example = ROOT / "target" / "release" / "examples" / "check_infer_times"
    in_process: dict[str, list[float]] = {"check": [], "infer": []}
    stages = []
    if example.exists():
        for _ in range(args.repeat):
            out = run_timed([str(example), str(MODEL)])[2].decode().strip().splitlines()
            stages.append(out[0])
            for task, seconds in json.loads(out[-1]).items():
                in_process[task].append(seconds)
    blocks_arg = "" if args.blocks == BLOCKS else f" --blocks {args.blocks}"
    lines = [
        f"Measured {datetime.date.today()} on {machine()}; model: {len(model.graph.node):,} nodes "
        f"({MODEL.stat().st_size / 1e6:.1f} MB). Command: `cargo build --release -p onnx-cli && "
        f"cargo build --release -p onnx-core --examples && python3 bench/check_infer_vs_onnx.py "
        f"--repeat {args.repeat}{blocks_arg} --write docs/benchmarks.md`.",
        "",
        "| task | onnx 1.23.2, in-process (min) | ours, in-process (min) | ratio | ours, whole process (min) | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for name, (theirs, ours_cmd) in rows.items():
        t_onnx = [timed(theirs) for _ in range(args.repeat)]
        t_ours = [run_timed(ours_cmd)[0] for _ in range(args.repeat)]
        ratio = min(t_onnx) / min(t_ours)
        inside = in_process[name]
        inside_cells = f"{min(inside):.4f} s | {min(t_onnx) / min(inside):.1f}×" if inside else "– | –"
        lines.append(
            f"| {name} | {min(t_onnx):.4f} s | {inside_cells} | {min(t_ours):.4f} s | {ratio:.1f}× |"
        )
        print(f"{name}: onnx {min(t_onnx):.4f}s (median {statistics.median(t_onnx):.4f}), "
              f"ours in-process {min(inside) if inside else float('nan'):.4f}s, "
              f"whole process {min(t_ours):.4f}s (median {statistics.median(t_ours):.4f}) -> {ratio:.1f}x", file=sys.stderr)
    if stages:
        # The stages of the run whose whole check was fastest (the runs are noisy alike).
        fastest = min(range(len(stages)), key=lambda i: in_process["check"][i])
        lines += ["", f"Ours in-process by stage (`core/examples/check_infer_times.rs`): `{stages[fastest]}`."]
    section = "\n".join(lines)
    print(section)
    if args.write:
        if args.blocks == BLOCKS:
            update_section(ROOT / args.write, "check-infer", "## Check and infer (issue #4)\n\n" + section)
        else:
            nodes = f"{len(model.graph.node):,}"
            update_section(ROOT / args.write, f"check-infer-{MODEL.stem}",
                           f"### The same on a {nodes}-node model\n\n" + section)


if __name__ == "__main__":
    main()
