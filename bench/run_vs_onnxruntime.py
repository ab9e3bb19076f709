"""Benchmark: `onnx run` against onnxruntime and onnx's ReferenceEvaluator on the real models.

Usage (from the repository root; needs `pip install onnx==1.23.2 onnxruntime numpy`):

    cargo build --release -p onnx-cli
    python3 bench/run_vs_onnxruntime.py [--runs 10] [--write docs/benchmarks.md]
    python3 bench/run_vs_onnxruntime.py --corpus contrib [--runs 10] [--write docs/benchmarks.md]

For every model with golden data in tests/fixtures/run (the real-exporter models of
tests/corpus/real, inputs fixed by gen_run_data.py), or with `--corpus contrib` in
tests/fixtures/run_contrib (the models onnxruntime's optimizers and quantizers wrote, with
com.microsoft operators: tests/corpus/contrib), side by side in one run:

* ours: `onnx run MODEL --test-data DIR --repeat N --threads 1`, the median time per run it
  reports (in-process, after one warm-up run; reading the model and the inputs is not timed);
* onnxruntime: `InferenceSession.run` with one intra-op and one inter-op thread, sequential,
  default graph optimizations (ORT_ENABLE_ALL), median of N runs after one warm-up;
* both again with every core (ours without `--threads`, onnxruntime with its default thread
  counts), in a second table;
* onnx's ReferenceEvaluator: `run`, median of a few runs (it is slow).

Prints a table (and with --write, replaces its section in docs/benchmarks.md): milliseconds
per run and the ratios, with the geometric means the aims of issue 24 are stated in.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import signal
import pathlib
import statistics
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from common import ROOT, machine, onnx_run_median, update_section

BINARY = ROOT / "target/release/onnx"

# Seconds the reference evaluator may take on one model (warm-up and runs): some models take
# it many minutes.
REFERENCE_BUDGET = 180


# Bytes of address space the whole benchmark process may use: the reference evaluator takes
# over 20 GB on some models, and the kernel's out-of-memory killer then ends the benchmark
# with no table; under the limit it raises MemoryError, which counts as "fails".
MEMORY_LIMIT = 12 << 30


# The model sets: golden data, models, the section of docs/benchmarks.md, its title.
CORPORA = {
    "real": ("tests/fixtures/run", "tests/corpus/real", "run-vs-onnxruntime",
             "## Running models: `onnx run` against onnxruntime and onnx's reference evaluator (issue 24)"),
    "contrib": ("tests/fixtures/run_contrib", "tests/corpus/contrib", "run-contrib-vs-onnxruntime",
                "## Running the models onnxruntime's tools write (com.microsoft operators, issue 54)"),
}


def give_up(*_):
    raise TimeoutError(f"more than {REFERENCE_BUDGET} s")


def inputs_of(data: pathlib.Path) -> dict[str, np.ndarray]:
    feeds = {}
    for path in sorted(data.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1])):
        tensor = onnx.load_tensor(str(path))
        feeds[tensor.name] = numpy_helper.to_array(tensor)
    return feeds


def ours(model: pathlib.Path, data: pathlib.Path, runs: int, threads: list[str]) -> float | None:
    """The median milliseconds per run `onnx run` reports; `None` when it cannot run the
    model (said on stderr, and "fails" in the table)."""
    return onnx_run_median(BINARY, model, data, runs, threads)


def timed(call, runs: int) -> float:
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reference-runs", type=int, default=3)
    parser.add_argument("--write", type=pathlib.Path)
    parser.add_argument("--corpus", choices=CORPORA, default="real")
    args = parser.parse_args()
    fixtures, corpus, section, title = CORPORA[args.corpus]
    ort.set_default_logger_severity(3)
    rows = []
    all_cores = []
    for data in sorted((ROOT / fixtures).iterdir()):
        if not data.is_dir():
            continue
        model = ROOT / corpus / f"{data.name}.onnx"
        feeds = inputs_of(data)
        # A model whose operators onnxruntime runs only in CUDA (NhwcConv, PackedAttention, …)
        # has golden outputs from the model it was made from (expected.json's
        # "outputs_from"): onnxruntime is timed on that one, and the row says so.
        expected = data / "expected.json"
        source = json.loads(expected.read_text()).get("outputs_from") if expected.is_file() else None
        ort_model = ROOT / corpus / f"{source}.onnx" if source else model
        name = f"{data.name} (onnxruntime: {source})" if source else data.name
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        session = ort.InferenceSession(str(ort_model), options, providers=["CPUExecutionProvider"])
        t_ort = timed(lambda: session.run(None, feeds), args.runs)
        every_core = ort.InferenceSession(str(ort_model), providers=["CPUExecutionProvider"])
        t_ort_all = timed(lambda: every_core.run(None, feeds), args.runs)
        try:
            if args.corpus == "contrib":
                raise RuntimeError("onnx's reference evaluator knows no com.microsoft operator")
            signal.signal(signal.SIGALRM, give_up)
            signal.alarm(REFERENCE_BUDGET)
            reference = ReferenceEvaluator(str(model))
            t_ref = timed(lambda: reference.run(None, feeds), args.reference_runs)
            signal.alarm(0)
        except Exception as error:  # noqa: BLE001 - the reference evaluator cannot run every model
            signal.alarm(0)
            print(f"{data.name}: the reference evaluator fails: {str(error).splitlines()[0][:100]}", file=sys.stderr)
            t_ref = None
        t_ours = ours(model, data, args.runs, ["--threads", "1"])
        t_ours_all = ours(model, data, args.runs, [])
        rows.append((name, t_ours, t_ort, t_ref))
        all_cores.append((name, t_ours_all, t_ort_all))
        print(f"{data.name:28} ours {t_ours} ms  onnxruntime {t_ort:9.3f} ms  reference {t_ref} ms", file=sys.stderr)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    lines = [
        title,
        "",
        f"Measured {datetime.date.today()} on {machine()}; `python3 bench/run_vs_onnxruntime.py --runs {args.runs}"
        f"{' --corpus contrib' if args.corpus == 'contrib' else ''}`;"
        f" onnxruntime {ort.__version__} (one thread; ours `--threads 1`), onnx {onnx.__version__} ReferenceEvaluator.",
        "",
        "| model | ours (ms) | onnxruntime (ms) | reference (ms) | ours ÷ onnxruntime | reference ÷ ours |",
        "|---|---|---|---|---|---|",
    ]
    ran = [(name, a, b, c) for name, a, b, c in rows if a is not None]
    for name, a, b, c in rows:
        if a is None:
            lines.append(f"| {name} | fails | {b:.3f} | – | – | – |")
            continue
        reference = f"{c:.3f} | {c / a:.1f}×" if c is not None else "fails | –"
        lines.append(f"| {name} | {a:.3f} | {b:.3f} | {reference.split(' | ')[0]} | {a / b:.1f}× | {reference.split(' | ')[1]} |")
    with_reference = [c / a for _, a, _, c in ran if c is not None]
    lines.append(
        f"| **geometric mean** | | | | **{geo([a / b for _, a, b, _ in ran]):.1f}×** | "
        + (f"**{geo(with_reference):.1f}×** ({len(with_reference)} models) |" if with_reference else "– |")
    )
    lines += [
        "",
        f"The same with every core ({os.cpu_count()}): ours without `--threads`, onnxruntime with its default thread counts.",
        "",
        "| model | ours (ms) | onnxruntime (ms) | ours ÷ onnxruntime |",
        "|---|---|---|---|",
    ]
    for name, a, b in all_cores:
        lines.append(f"| {name} | {a:.3f} | {b:.3f} | {a / b:.1f}× |" if a is not None else f"| {name} | fails | {b:.3f} | – |")
    ran_all = [(a, b) for _, a, b in all_cores if a is not None]
    lines.append(f"| **geometric mean** | | | **{geo([a / b for a, b in ran_all]):.1f}×** |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        update_section(args.write, section, text)


if __name__ == "__main__":
    main()
