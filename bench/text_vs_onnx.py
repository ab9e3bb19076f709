"""Benchmark: parse and print a large text model, ours against onnx 1.23.2's C++ parser and
printer (through Python), side by side in one run.

Usage (from the repository root; needs `pip install onnx==1.23.2 numpy`):

    cargo build --release -p onnx-cli && cargo build --release -p onnx-core --examples
    python3 bench/text_vs_onnx.py [--repeat 3] [--write docs/benchmarks.md]

Generates (once, in bench-data/) a model whose onnx-printed text is over 100 MB (about 9 M
float values in initializers plus a few thousand nodes) and that text. Then:

* parse — onnx: `onnx.parser.parse_model(text)`, timed in-process (the text already in
  memory). Ours, the same work in-process (`core/examples/text_times.rs`: lex, parse, lower
  to the IR, resolve names), and the whole `onnx convert large.onnxtxt out.onnx` process
  (also reading the file, encoding and writing the binary, fsync).
* print — onnx: `onnx.printer.to_text(model)` in-process on the model `onnx.load` read.
  Ours in-process on the model read from the same binary, and the whole `onnx convert
  large.onnx out.onnxtxt --style onnx` process (read and decode the binary, print, write;
  the model keeps its tensors in raw_data, which onnx's text cannot say, so the read-back
  check is skipped and the warning given); the same with the default canonical style.

Throughput is text megabytes per second; ratios use the minimum times.
"""
from __future__ import annotations

import argparse
import os
import datetime
import json
import statistics
import subprocess
import sys

from common import DATA, ROOT, machine, run_timed, update_section

MODEL = DATA / "text.onnx"
TEXT = DATA / "text.onnxtxt"


def generate() -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    hidden = 768
    nodes, inits = [], []
    x = "input"
    for b in range(12):
        w = f"layer{b}.weight"
        inits.append(numpy_helper.from_array(rng.standard_normal((hidden, 1024), dtype=np.float32), w))
        nodes.append(helper.make_node("MatMul", [x, w], [f"l{b}.mm"], name=f"layer{b}/matmul"))
        y = f"l{b}.mm"
        for i in range(200):
            nodes.append(helper.make_node("Relu" if i % 2 else "Identity", [y], [f"l{b}.t{i}"], name=f"l{b}/t{i}"))
            y = f"l{b}.t{i}"
        nodes.append(helper.make_node("Slice", [y, "starts", "ends"], [f"l{b}.out"], name=f"l{b}/slice"))
        x = f"l{b}.out"
    inits.append(numpy_helper.from_array(np.array([0], dtype=np.int64), "starts"))
    inits.append(numpy_helper.from_array(np.array([hidden], dtype=np.int64), "ends"))
    nodes.append(helper.make_node("Identity", [x], ["output"]))
    graph = helper.make_graph(
        nodes, "text_bench",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", hidden])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    DATA.mkdir(exist_ok=True)
    onnx.save_model(model, str(MODEL))
    TEXT.write_text(onnx.printer.to_text(model))


ONNX_SIDE = r"""
import json, sys, time
import onnx, onnx.parser, onnx.printer
model = onnx.load(sys.argv[1]); text = open(sys.argv[2]).read(); repeat = int(sys.argv[3])
parse, prnt = [], []
for _ in range(repeat):
    t = time.perf_counter(); onnx.parser.parse_model(text); parse.append(time.perf_counter() - t)
    t = time.perf_counter(); onnx.printer.to_text(model); prnt.append(time.perf_counter() - t)
print(json.dumps({"parse": parse, "print": prnt, "version": onnx.__version__}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--onnx-bin", default=str(ROOT / "target" / "release" / "onnx"))
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--write", help="markdown file to update (section bench:text)")
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate_only:
        generate()
        return
    if not (ROOT / args.onnx_bin).exists():
        raise SystemExit(f"{args.onnx_bin} is missing: run `cargo build --release -p onnx-cli` first")
    if args.regenerate or not TEXT.exists():
        print("generating the model and its text …", flush=True)
        subprocess.run([sys.executable, __file__, "--generate-only"], check=True)
    mb = TEXT.stat().st_size / 1e6
    print(f"text: {mb:.1f} MB; timing onnx ×{args.repeat} …", flush=True)
    out = subprocess.run([sys.executable, "-c", ONNX_SIDE, str(MODEL), str(TEXT), str(args.repeat)],
                         check=True, capture_output=True, text=True)
    ref = json.loads(out.stdout)
    print("timing ours …", flush=True)
    example = ROOT / "target" / "release" / "examples" / "text_times"
    if not example.exists():
        raise SystemExit(f"{example} is missing: run `cargo build --release -p onnx-core --examples` first")
    inproc = json.loads(subprocess.run([str(example), str(TEXT), str(MODEL), str(args.repeat)], check=True,
                                       capture_output=True, text=True).stdout.strip().splitlines()[-1])
    ours = {
        "parse": [run_timed([args.onnx_bin, "convert", str(TEXT), str(DATA / "text-back.onnx")])[0] for _ in range(args.repeat)],
        "print": [run_timed([args.onnx_bin, "convert", str(MODEL), str(DATA / "printed.onnxtxt"), "--style", "onnx"])[0]
                  for _ in range(args.repeat)],
        "canonical": [run_timed([args.onnx_bin, "convert", str(MODEL), str(DATA / "canonical.onnxtxt")])[0]
                      for _ in range(args.repeat)],
    }
    printed = (DATA / "printed.onnxtxt").read_bytes()
    if printed != TEXT.read_bytes():
        raise SystemExit("our onnx-style text differs from onnx's printer output")

    def row(what: str, onnx_times: list[float], ours_inproc: float | None, our_times: list[float]) -> str:
        o, u = min(onnx_times), min(our_times)
        inproc = (f"{ours_inproc:.3f} s ({mb / ours_inproc:.0f} MB/s) | **{o / ours_inproc:.1f}×**"
                  if ours_inproc else "— | —")
        return (f"| {what} | {o:.3f} s ({mb / o:.0f} MB/s) | {inproc} | {u:.3f} s ({mb / u:.0f} MB/s) | "
                f"{o / u:.1f}× |")

    table = "\n".join([
        "| task | onnx, in-process | ours, in-process | speed-up | ours, whole `onnx convert` process | speed-up |",
        "|---|---|---|---|---|---|",
        row("parse text → model", ref["parse"], inproc.get("parse"), ours["parse"]),
        row("print model → text, onnx style", ref["print"], inproc.get("print_onnx"), ours["print"]),
        row("print model → text, canonical style", ref["print"], inproc.get("print_canonical"), ours["canonical"]),
    ])
    section = "\n".join([
        "## Parsing and printing a large text model",
        "",
        f"Measured {datetime.date.today().isoformat()} on {machine()}, onnx {ref['version']}.",
        "",
        f"Command: `cargo build --release -p onnx-cli && cargo build --release -p onnx-core --examples && python3 bench/text_vs_onnx.py --repeat {args.repeat} --write docs/benchmarks.md`",
        "",
        f"Text: {TEXT.stat().st_size:,} bytes printed by onnx from a generated model (12 float "
        "initializers of 768×1024, 2,437 nodes). Our onnx-style output is checked to be the same bytes.",
        "",
        table,
        "",
        "What is measured: onnx's C++ parser and printer called from Python on data already in "
        "memory, and ours doing the same work in-process (`core/examples/text_times.rs`, text or "
        "model already in memory; lowering to the IR and name resolution included) — the like-for-like "
        "comparison. The whole-process column adds what a command does: reading the input file, "
        f"encoding or writing the output and syncing it to disk. Ours uses all {os.cpu_count()} cores "
        "for number lists (`ONNX_THREADS` caps it); onnx uses one.",
    ])
    print(section)
    if args.write:
        update_section(ROOT / args.write, "text", section)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
