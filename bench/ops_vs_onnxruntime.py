"""Benchmark: GFLOP/s of the heavy operators, ours against onnxruntime's, on the shapes the
real models run (issue 55: Conv, depthwise Conv, Gemm/MatMul and MatMulInteger within 1.5×).

Usage (from the repository root; needs `pip install onnx==1.23.2 onnxruntime numpy`):

    cargo build --release -p onnx-cli
    python3 bench/ops_vs_onnxruntime.py [--runs 200] [--category depthwise] [--write docs/benchmarks.md]

Where the shapes come from: every model with golden data in tests/fixtures/run and
tests/fixtures/run_contrib is run once by `onnx run --all-values` on its fixed inputs, which
gives the shape of every value of its main graph. Every float32 Conv, MatMul and Gemm and
every MatMulInteger whose inputs have known shapes becomes a case: its operator, attributes
and input shapes, and whether each input was an initializer (a weight) or computed. Cases
of the same signature in several models are one case.

Each case is timed as a model of its own: K copies of the node side by side reading one
shared input (K so that a run does at least about 20 MFLOP, at most 16: a lone 10 µs node
would measure the runners' per-run costs, not the kernel), each copy with its own random
weights (so that onnxruntime's common-subexpression elimination cannot merge them), run by

* ours: `onnx run CASE --test-data DIR --repeat N --threads 1`, the median per run it reports
  (in-process; outputs allocated by the run);
* onnxruntime 1.32: `InferenceSession.run_with_iobinding`, one thread, default graph
  optimizations (its NCHWc layout and weight pre-packing included), inputs and outputs bound
  to buffers made once, median of N after a warm-up.

GFLOP/s counts two operations per multiply-add of the operator's definition (a convolution's
padded zeros included, as onnxruntime's and our profilers count them). The table gives per
case both rates and the time ratio (ours ÷ onnxruntime; above 1 we are slower), then per
category the geometric mean and the worst case, the figures issue 55's bar is stated in.
"""
from __future__ import annotations

import argparse
import datetime
import math
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from common import ROOT, machine, onnx_run_median, update_section

BINARY = ROOT / "target/release/onnx"
CORPORA = [("tests/fixtures/run", "tests/corpus/real"), ("tests/fixtures/run_contrib", "tests/corpus/contrib")]
OPERATORS = {"Conv", "MatMul", "Gemm", "MatMulInteger"}
CATEGORIES = ["Conv", "depthwise Conv", "Gemm/MatMul", "MatMulInteger"]
# FLOPs a timed run does at least, by copying the node (at most MAX_COPIES times).
TARGET_FLOPS = 20e6
MAX_COPIES = 16


def value_shapes(model: pathlib.Path, data: pathlib.Path, scratch: pathlib.Path) -> dict[str, tuple[list[int], int]] | None:
    """Shape and element type of every value of the model's main graph on its fixed inputs,
    from our run's `--all-values`."""
    out = scratch / "values"
    shutil.rmtree(out, ignore_errors=True)
    done = subprocess.run(
        [str(BINARY), "run", str(model), "--test-data", str(data), "--output-dir", str(out), "--all-values", "--threads", "1"],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        print(f"{model.name}: skipped (ours cannot run it: {done.stderr.strip()[-160:]})", file=sys.stderr)
        return None
    shapes = {}
    for line in (out / "values.tsv").read_text().splitlines():
        file, name = line.split("\t", 1)
        tensor = onnx.load_tensor(str(out / file))
        shapes[name] = (list(tensor.dims), tensor.data_type)
    for path in list(data.glob("input_*.pb")):
        tensor = onnx.load_tensor(str(path))
        shapes[tensor.name] = (list(tensor.dims), tensor.data_type)
    return shapes


def category(node: onnx.NodeProto, shapes: list[list[int]]) -> str | None:
    if node.op_type == "Conv":
        group = next((a.i for a in node.attribute if a.name == "group"), 1)
        channels = shapes[0][1] if len(shapes[0]) > 1 else 0
        return "depthwise Conv" if group > 1 and group == channels else "Conv"
    if node.op_type in ("MatMul", "Gemm"):
        return "Gemm/MatMul"
    return "MatMulInteger"


def flops(node: onnx.NodeProto, shapes: list[list[int]], output: list[int]) -> int:
    if node.op_type == "Conv":
        w = shapes[1]
        return 2 * math.prod(output) * math.prod(w[1:])
    if node.op_type == "Gemm":
        trans_a = next((a.i for a in node.attribute if a.name == "transA"), 0)
        a = shapes[0]
        k = a[0] if trans_a else a[1]
        return 2 * math.prod(output) * k
    a = shapes[0]
    return 2 * math.prod(output) * a[-1]


def cases_of(model_path: pathlib.Path, shapes: dict, seen: dict) -> None:
    model = onnx.load(str(model_path), load_external_data=False)
    initializers = {t.name: t for t in model.graph.initializer}
    constants = {o: n for n in model.graph.node if n.op_type == "Constant" for o in n.output}
    shapes = dict(shapes)
    for tensor in model.graph.initializer:
        shapes.setdefault(tensor.name, (list(tensor.dims), tensor.data_type))
    for index, node in enumerate(model.graph.node):
        if node.domain not in ("", "ai.onnx") or node.op_type not in OPERATORS:
            continue
        names = [i for i in node.input]
        if any(n and n not in shapes for n in names) or not node.output or node.output[0] not in shapes:
            continue
        if node.op_type != "MatMulInteger" and shapes[names[0]][1] != TensorProto.FLOAT:
            continue
        in_shapes = [shapes[n][0] if n else None for n in names]
        types = [shapes[n][1] if n else None for n in names]
        # Zero points keep their values (they change the kernel's path); the rest is random.
        fixed = {}
        for slot, name in enumerate(names):
            if node.op_type == "MatMulInteger" and slot >= 2 and name:
                tensor = initializers.get(name)
                if tensor is None and name in constants:
                    tensor = constants[name].attribute[0].t
                if tensor is not None:
                    fixed[slot] = numpy_helper.to_array(tensor)
        weights = tuple(bool(n) and (n in initializers or n in constants) for n in names)
        attributes = [a for a in node.attribute]
        key = (node.op_type, tuple(map(lambda s: tuple(s) if s is not None else None, in_shapes)), tuple(types), weights,
               tuple(sorted(helper.printable_attribute(a) for a in attributes)),
               tuple((k, v.tobytes()) for k, v in sorted(fixed.items())))
        output = shapes[node.output[0]][0]
        if key in seen:
            seen[key]["where"].add(model_path.stem)
            continue
        seen[key] = {
            "op": node.op_type, "category": category(node, in_shapes), "shapes": in_shapes, "types": types,
            "weights": weights, "attributes": attributes, "fixed": fixed, "output": output,
            "output_type": shapes[node.output[0]][1], "flops": flops(node, in_shapes, output),
            "where": {model_path.stem}, "node": node.name or f"#{index}",
        }


def random_of(shape: list[int], elem: int, rng: np.random.Generator) -> np.ndarray:
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    if dtype == np.int8:
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    return rng.standard_normal(shape).astype(dtype)


def build(case: dict, copies: int, rng: np.random.Generator) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """K copies of the case's node: computed inputs shared graph inputs, weights per copy."""
    graph_inputs, feeds, initializers, nodes, outputs = [], {}, [], [], []
    for slot, (shape, elem, weight) in enumerate(zip(case["shapes"], case["types"], case["weights"])):
        if shape is None or weight or slot in case["fixed"]:
            continue
        name = f"in{slot}"
        graph_inputs.append(helper.make_tensor_value_info(name, elem, shape))
        feeds[name] = random_of(shape, elem, rng)
    for k in range(copies):
        inputs = []
        for slot, (shape, elem, weight) in enumerate(zip(case["shapes"], case["types"], case["weights"])):
            if shape is None:
                inputs.append("")
            elif slot in case["fixed"]:
                name = f"fixed{slot}_{k}"
                initializers.append(numpy_helper.from_array(case["fixed"][slot], name))
                inputs.append(name)
            elif weight:
                name = f"w{slot}_{k}"
                initializers.append(numpy_helper.from_array(random_of(shape, elem, rng), name))
                inputs.append(name)
            else:
                inputs.append(f"in{slot}")
        nodes.append(helper.make_node(case["op"], inputs, [f"out{k}"], name=f"n{k}"))
        nodes[-1].attribute.extend(case["attributes"])
        outputs.append(helper.make_tensor_value_info(f"out{k}", case["output_type"], case["output"]))
    graph = helper.make_graph(nodes, "case", graph_inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model, feeds


def onnxruntime(model: pathlib.Path, feeds: dict[str, np.ndarray], runs: int) -> float:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value))
    for output in session.get_outputs():
        binding.bind_output(output.name)
    session.run_with_iobinding(binding)
    # Bound again to the buffers the first run made, so that later runs reuse them.
    produced = binding.get_outputs()
    binding.clear_binding_outputs()
    for output, value in zip(session.get_outputs(), produced):
        binding.bind_ortvalue_output(output.name, value)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run_with_iobinding(binding)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def describe(case: dict) -> str:
    shapes = "·".join("×".join(map(str, s)) or "scalar" for s in case["shapes"] if s is not None)
    extra = []
    for a in case["attributes"]:
        if a.name in ("strides", "dilations") and any(v != 1 for v in a.ints):
            extra.append(f"{a.name[:-1]} {'×'.join(map(str, a.ints))}")
        if a.name in ("transA", "transB") and a.i:
            extra.append(a.name)
    return shapes + (f" ({', '.join(extra)})" if extra else "")


def main() -> None:
    global BINARY
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200, help="timed runs per engine and case (fewer for slow cases)")
    parser.add_argument("--category", choices=CATEGORIES, action="append", help="only these categories")
    parser.add_argument("--models", help="only models whose name contains this")
    parser.add_argument("--binary", type=pathlib.Path, default=ROOT / "target/release/onnx", help="our `onnx` (another build, to compare)")
    parser.add_argument("--write", type=pathlib.Path)
    args = parser.parse_args()
    BINARY = args.binary
    ort.set_default_logger_severity(3)
    rng = np.random.default_rng(55)
    seen: dict = {}
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = pathlib.Path(scratch_name)
        for fixtures, corpus in CORPORA:
            for data in sorted((ROOT / fixtures).iterdir()):
                model = ROOT / corpus / f"{data.name}.onnx"
                if not data.is_dir() or not model.is_file() or (args.models and args.models not in data.name):
                    continue
                shapes = value_shapes(model, data, scratch)
                if shapes is not None:
                    cases_of(model, shapes, seen)
        cases = [c for c in seen.values() if not args.category or c["category"] in args.category]
        cases.sort(key=lambda c: (CATEGORIES.index(c["category"]), -c["flops"]))
        print(f"{len(cases)} cases", file=sys.stderr)
        rows = []
        for number, case in enumerate(cases):
            copies = max(1, min(MAX_COPIES, math.ceil(TARGET_FLOPS / max(case["flops"], 1))))
            model, feeds = build(case, copies, rng)
            directory = scratch / f"case{number}"
            directory.mkdir()
            path = directory / "model.onnx"
            onnx.save(model, str(path))
            for i, (name, value) in enumerate(feeds.items()):
                onnx.save_tensor(numpy_helper.from_array(value, name), str(directory / f"input_{i}.pb"))
            work = case["flops"] * copies
            # About 0.3 s per engine at 20 GFLOP/s, never more runs than asked.
            runs = max(5, min(args.runs, int(0.3 / (work / 20e9))))
            t_ours = onnx_run_median(BINARY, path, directory, runs, ["--threads", "1"])
            t_ort = onnxruntime(path, feeds, runs)
            if t_ours is None:
                continue
            row = (case, copies, work / t_ours / 1e6, work / t_ort / 1e6, t_ours / t_ort)
            rows.append(row)
            print(f"{case['category']:15} {describe(case):60} ours {row[2]:7.1f} GFLOP/s  onnxruntime {row[3]:7.1f}  "
                  f"ratio {row[4]:.2f}  ({', '.join(sorted(case['where']))})", file=sys.stderr)
    section = table(rows, args.runs)
    print(section)
    if args.write:
        update_section(args.write, "ops-vs-onnxruntime", section)


def table(rows: list, runs: int) -> str:
    lines = [
        "## Heavy operators: GFLOP/s against onnxruntime on the real models' shapes (issue 55)",
        "",
        f"Measured {datetime.date.today()} on {machine()}, onnxruntime {ort.__version__}, one thread each. "
        f"Command: `cargo build --release -p onnx-cli && python3 bench/ops_vs_onnxruntime.py --runs {runs} --write docs/benchmarks.md`.",
        "",
        "| category | cases | geometric mean, ours ÷ onnxruntime (time) | worst | ours GFLOP/s (median) | onnxruntime GFLOP/s (median) |",
        "|---|---|---|---|---|---|",
    ]
    for name in CATEGORIES:
        mine = [r for r in rows if r[0]["category"] == name]
        if not mine:
            continue
        mean = math.exp(statistics.fmean(math.log(r[4]) for r in mine))
        worst = max(mine, key=lambda r: r[4])
        lines.append(
            f"| {name} | {len(mine)} | **{mean:.2f}×** | {worst[4]:.2f}× ({describe(worst[0])}) | "
            f"{statistics.median(r[2] for r in mine):.1f} | {statistics.median(r[3] for r in mine):.1f} |"
        )
    lines += ["", "<details><summary>Every case</summary>", "",
              "| category | inputs (attributes) | MFLOP × copies | ours GFLOP/s | onnxruntime GFLOP/s | ours ÷ onnxruntime | models |",
              "|---|---|---|---|---|---|---|"]
    for case, copies, mine, theirs, ratio in rows:
        where = ", ".join(sorted(case["where"])[:3]) + (f" +{len(case['where']) - 3}" if len(case["where"]) > 3 else "")
        lines.append(f"| {case['category']} | {describe(case)} | {case['flops'] / 1e6:.2f} × {copies} | {mine:.1f} | "
                     f"{theirs:.1f} | {ratio:.2f}× | {where} |")
    lines += ["", "</details>"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
