"""Benchmark: MatMulInteger (uint8 × int8 → int32) in `onnx run` against onnxruntime, one
thread each, on the shapes of a dynamically quantized transformer's projections, with B a
graph input and with B a constant (a model's weights, prepared once by both engines).

Usage (from the repository root; needs `pip install onnx==1.23.2 onnxruntime numpy`):

    cargo build --release -p onnx-cli
    python3 bench/int8_matmul_vs_onnxruntime.py [--runs 20] [--write docs/benchmarks.md]

For each shape M×K×N, in one run: a one-node model (written to bench-data/int8_matmul/),
seeded operands with zero points inside the range; onnxruntime's `InferenceSession.run`
(one intra-op and one inter-op thread) median of N runs after a warm-up, checked equal to
numpy's exact int64 product; ours `onnx run MODEL INPUTS --repeat N --threads 1`, the
median it reports (in-process after a warm-up; reading the model and inputs is not timed),
its output checked equal to the same product. Prints a table of milliseconds and GOPS
(2·M·K·N per run), and with --write replaces its section in docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from common import DATA, ROOT, machine, update_section  # noqa: E402

BINARY = ROOT / "target/release/onnx"
SHAPES = [(128, 768, 3072), (128, 3072, 768), (1, 768, 768), (512, 512, 512)]
SECTION = "int8-matmul-vs-onnxruntime"


def model(m: int, k: int, n: int, weights: dict[str, np.ndarray] | None = None) -> onnx.ModelProto:
    """The one-node model; with `weights`, B and its zero point are initializers (a real
    model's constant weight, which both engines prepare once per session)."""
    node = helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
    inputs = [
        helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k]),
        helper.make_tensor_value_info("za", TensorProto.UINT8, []),
    ]
    initializers = []
    if weights is None:
        inputs += [
            helper.make_tensor_value_info("b", TensorProto.INT8, [k, n]),
            helper.make_tensor_value_info("zb", TensorProto.INT8, []),
        ]
    else:
        initializers = [numpy_helper.from_array(v, name) for name, v in weights.items()]
    graph = helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.INT32, [m, n])], initializers
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--write", type=__import__("pathlib").Path)
    args = parser.parse_args()
    out = DATA / "int8_matmul"
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(0)
    rows = []
    for (m, k, n), constant in [(shape, constant) for constant in (False, True) for shape in SHAPES]:
        name = f"{m}x{k}x{n}" + ("_weights" if constant else "")
        path = out / f"{name}.onnx"
        feed = {
            "a": rng.randint(0, 256, (m, k)).astype(np.uint8),
            "b": rng.randint(-128, 128, (k, n)).astype(np.int8),
            "za": np.array(131, dtype=np.uint8),
            "zb": np.array(-3, dtype=np.int8),
        }
        exact = (feed["a"].astype(np.int64) - 131) @ (feed["b"].astype(np.int64) + 3)
        weights = {key: feed.pop(key) for key in ("b", "zb")} if constant else None
        onnx.save(model(m, k, n, weights), path)
        inputs = []
        for key, value in feed.items():
            file = out / f"{name}_{key}.npy"
            np.save(file, value)
            inputs.append(f"{key}={file}")

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        assert (session.run(None, feed)[0] == exact).all(), f"onnxruntime is not exact on {name}"
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            session.run(None, feed)
            times.append(time.perf_counter() - start)
        theirs = statistics.median(times) * 1e3

        result = out / f"{name}_out"
        proc = subprocess.run(
            [str(BINARY), "run", str(path), *inputs, "--repeat", str(args.runs), "--threads", "1",
             "--output-dir", str(result)],
            capture_output=True, text=True, check=True,
        )
        ours = float(re.search(r"median ([0-9.]+) ms", proc.stdout + proc.stderr).group(1))
        got = numpy_helper.to_array(onnx.load_tensor(str(result / "output_0.pb")))
        assert (got == exact).all(), f"ours is not exact on {name}"
        ops = 2 * m * k * n
        label = f"{m}×{k}×{n}" + (", B constant" if constant else "")
        rows.append((label, ours, theirs, ops / ours / 1e6, ops / theirs / 1e6))

    lines = [
        "## MatMulInteger (uint8 × int8 → int32) against onnxruntime, one thread (issue 55)",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {machine()}; "
        f"`python3 bench/int8_matmul_vs_onnxruntime.py --runs {args.runs}`; onnxruntime {ort.__version__}. "
        "Both outputs equal numpy's exact product. \"B constant\": B and its zero point are "
        "initializers, as a model's weights are, which both engines prepare once per session.",
        "",
        "| M×K×N | ours (ms) | onnxruntime (ms) | ours ÷ onnxruntime | ours GOPS | onnxruntime GOPS |",
        "|---|---|---|---|---|---|",
    ]
    for name, ours, theirs, our_gops, their_gops in rows:
        lines.append(f"| {name} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.1f}× | {our_gops:.0f} | {their_gops:.0f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.write:
        update_section(args.write, SECTION, table)


if __name__ == "__main__":
    main()
