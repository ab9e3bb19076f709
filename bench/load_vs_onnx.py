"""Benchmark: read a large model with our `onnx info` versus `onnx.load` of onnx 1.23.2.

Usage (from the repository root; needs `pip install onnx==1.23.2 numpy`):

    cargo build --release -p onnx-cli
    python3 bench/load_vs_onnx.py [--repeat 5] [--write docs/benchmarks.md]

Generates (once, cached in bench-data/, which git ignores) a transformer-like model of about
218 MB whose weights are raw float32 initializers, as exporters write them. Then, side by
side in one run:

* onnx: `onnx.load(path)` timed in a Python process that has already imported onnx (so
  interpreter start-up and import are not counted); peak memory is the process's peak RSS
  minus that of a process that only imports onnx.
* ours: the whole `onnx info PATH --json` process (start-up, memory map, protobuf decode,
  lowering to the IR, summary, JSON output); peak memory is its peak RSS.

Times are the minimum and median of --repeat runs; the ratio uses the minima.
"""
from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import statistics
import subprocess
import sys

from common import DATA, ROOT, machine, run_timed, update_section
MODEL = DATA / "large.onnx"


def generate(path: pathlib.Path) -> int:
    """Writes the model; returns its node count."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden, blocks = 1024, 13
    nodes, inits = [], []

    def weight(name: str, shape: tuple[int, ...]) -> str:
        inits.append(numpy_helper.from_array(rng.standard_normal(shape, dtype=np.float32), name))
        return name

    x = "input"
    for b in range(blocks):
        p = f"block{b}"
        for proj in ("q", "k", "v", "o"):
            w = weight(f"{p}.{proj}.weight", (hidden, hidden))
            nodes.append(helper.make_node("MatMul", [x, w], [f"{p}.{proj}"], name=f"{p}/{proj}_proj"))
        scale = weight(f"{p}.ln.scale", (hidden,))
        bias = weight(f"{p}.ln.bias", (hidden,))
        nodes.append(helper.make_node("Add", [f"{p}.q", f"{p}.k"], [f"{p}.qk"], name=f"{p}/qk"))
        nodes.append(helper.make_node("Softmax", [f"{p}.qk"], [f"{p}.attn"], axis=-1, name=f"{p}/softmax"))
        nodes.append(helper.make_node("Mul", [f"{p}.attn", f"{p}.v"], [f"{p}.ctx"], name=f"{p}/ctx"))
        nodes.append(helper.make_node("Add", [f"{p}.ctx", f"{p}.o"], [f"{p}.res"], name=f"{p}/res"))
        nodes.append(helper.make_node(
            "LayerNormalization", [f"{p}.res", scale, bias], [f"{p}.ln"], axis=-1, epsilon=1e-5, name=f"{p}/ln"))
        y = f"{p}.ln"
        # A long tail of small element-wise nodes, as real exports have (casts, reshapes…).
        for i in range(150):
            nodes.append(helper.make_node("Relu" if i % 2 else "Identity", [y], [f"{p}.t{i}"], name=f"{p}/t{i}"))
            y = f"{p}.t{i}"
        x = y
    nodes.append(helper.make_node("Identity", [x], ["output"], name="out"))
    graph = helper.make_graph(
        nodes, "large",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", hidden])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", hidden])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="bench")
    model.ir_version = 10
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(path))
    return len(nodes)


ONNX_TIMER = r"""
import json, resource, statistics, sys, time
import onnx
path, repeat = sys.argv[1], int(sys.argv[2])
times = []
for _ in range(repeat):
    t = time.perf_counter()
    model = onnx.load(path)
    times.append(time.perf_counter() - t)
    nodes = len(model.graph.node)
    del model
print(json.dumps({"times": times, "nodes": nodes,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

IMPORT_ONLY = r"""
import json, resource
import onnx
print(json.dumps({"maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def run_python(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def run_ours(binary: pathlib.Path, path: pathlib.Path) -> tuple[float, int, dict]:
    """Wall time, peak RSS (KiB) and parsed JSON of one `onnx info --json` run."""
    elapsed, rss, stdout = run_timed([str(binary), "info", str(path), "--json"])
    return elapsed, rss, json.loads(stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--onnx-bin", type=pathlib.Path, default=ROOT / "target" / "release" / "onnx")
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--write", type=pathlib.Path, help="markdown file to update (section between bench:load markers)")
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate_only:
        generate(MODEL)
        return

    if not args.onnx_bin.exists():
        raise SystemExit(f"{args.onnx_bin} is missing: run `cargo build --release -p onnx-cli` first")
    if args.regenerate or not MODEL.exists():
        print(f"generating {MODEL} …", flush=True)
        # In a child process: a parent grown by generation would inflate the peak memory the
        # measured children report (a forked child starts as a copy of its parent).
        subprocess.run([sys.executable, __file__, "--generate-only"], check=True)
    size = MODEL.stat().st_size
    import onnx

    print(f"model: {size / 2**20:.1f} MiB; timing onnx.load ×{args.repeat} …", flush=True)
    ref = run_python(ONNX_TIMER, str(MODEL), str(args.repeat))
    base = run_python(IMPORT_ONLY)
    print(f"timing onnx info ×{args.repeat} …", flush=True)
    ours = [run_ours(args.onnx_bin, MODEL) for _ in range(args.repeat)]
    if ours[0][2]["counts"]["nodes"] != ref["nodes"]:
        raise SystemExit(f"node counts differ: ours {ours[0][2]['counts']['nodes']}, onnx {ref['nodes']}")

    onnx_min, onnx_med = min(ref["times"]), statistics.median(ref["times"])
    our_times = [t for t, _, _ in ours]
    our_min, our_med = min(our_times), statistics.median(our_times)
    onnx_mem = (ref["maxrss_kib"] - base["maxrss_kib"]) * 1024
    our_mem = max(m for _, m, _ in ours) * 1024
    mib = lambda b: f"{b / 2**20:.1f} MiB"
    table = "\n".join([
        "| reader | min | median | peak memory | peak memory / file size |",
        "|---|---|---|---|---|",
        f"| `onnx.load` (onnx {onnx.__version__}) | {onnx_min * 1000:.1f} ms | {onnx_med * 1000:.1f} ms | {mib(onnx_mem)} | {onnx_mem / size:.2f} |",
        f"| `onnx info --json` (ours, whole process) | {our_min * 1000:.1f} ms | {our_med * 1000:.1f} ms | {mib(our_mem)} | {our_mem / size:.2f} |",
        "",
        f"**Speed-up: {onnx_min / our_min:.1f}×** (minimum times). Peak memory: ours {mib(our_mem)} "
        f"for a {mib(size)} file (file size {'+' if our_mem >= size else '−'} {mib(abs(our_mem - size))}).",
    ])
    section = "\n".join([
        "## Loading a large binary model",
        "",
        f"Measured {datetime.date.today().isoformat()} on {machine()}, onnx {onnx.__version__}.",
        "",
        f"Command: `cargo build --release -p onnx-cli && python3 bench/load_vs_onnx.py --repeat {args.repeat} --write docs/benchmarks.md`",
        "",
        f"Model: generated by the script (transformer-like, {ref['nodes']:,} nodes, raw float32 "
        f"initializers), {size:,} bytes.",
        "",
        table,
        "",
        "What is measured: for onnx, `onnx.load(path)` inside a Python process that has already "
        "imported onnx (it reads the whole file into memory and parses it into protobuf objects); "
        "its peak memory is the process's peak RSS minus that of a process that only imports onnx. "
        "For us, the whole `onnx info` process: start-up, memory-mapping the file, decoding the "
        "protobuf, lowering it into the IR, computing the summary and printing JSON. Tensor bytes "
        "stay in the page cache as slices of the map, so they are neither copied nor counted "
        "until something reads them. Peak memory is peak resident set size, which for us is mostly "
        "page-cache pages of the mapped file that the kernel maps in around the tensor headers the "
        "decoder reads (shared with the page cache, not allocated); our heap peak on this model "
        "is under 2 MiB (`valgrind --tool=massif target/release/onnx info bench-data/large.onnx --json`).",
    ])
    print(section)
    if args.write:
        update_section(args.write, "load", section)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
