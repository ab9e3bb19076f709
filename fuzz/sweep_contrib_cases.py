"""Hostile values through the contrib kernels: every one-node case of
tests/fixtures/contrib_ops run by `onnx run` with each integer attribute set to 0, -1, 1, 3,
7, 2^31-1, 2^40 and -2^40 in turn, and with the first element of each integer input set to
-1, 0, 1000 and 2^31-1. Every run must end with exit 0 (it ran) or 1 (a clear error): never a
panic, a signal or a hang (20 s each).

    cargo build --release -p onnx-cli
    .venv/bin/python fuzz/sweep_contrib_cases.py [CASE_PREFIX ...]

Prints each bad run and a count; exit 1 if there is one. Not part of CI (about 30 s per 100
runs); docs/reliability.md records its runs.
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile

import onnx
from onnx import numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = ROOT / "tests/fixtures/contrib_ops"
BINARY = ROOT / "target/release/onnx"
ATTRIBUTE_VALUES = [0, -1, 1, 3, 7, 2**31 - 1, 2**40, -(2**40)]
INPUT_VALUES = [-1, 0, 1000, 2**31 - 1]


def variants(case: pathlib.Path):
    """(what, model, inputs) for each hostile change of the case."""
    model = onnx.load(str(case / "model.onnx"))
    inputs = [onnx.load_tensor(str(p)) for p in sorted(case.glob("input_*.pb"))]
    for attribute in model.graph.node[0].attribute:
        if attribute.type not in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS):
            continue
        for value in ATTRIBUTE_VALUES:
            changed = onnx.ModelProto()
            changed.CopyFrom(model)
            for a in changed.graph.node[0].attribute:
                if a.name == attribute.name and a.type == onnx.AttributeProto.INT:
                    a.i = value
                elif a.name == attribute.name:
                    count = max(1, len(a.ints))
                    del a.ints[:]
                    a.ints.extend([value] * count)
            yield f"{attribute.name}={value}", changed, inputs
    for k, tensor in enumerate(inputs):
        array = numpy_helper.to_array(tensor)
        if array.dtype.kind not in "iu" or array.size == 0:
            continue
        for value in INPUT_VALUES:
            changed = array.copy()
            try:
                changed.flat[0] = value
            except (OverflowError, ValueError):
                continue
            altered = list(inputs)
            altered[k] = numpy_helper.from_array(changed, tensor.name)
            yield f"{tensor.name}[0]={value}", model, altered


def main() -> None:
    prefixes = sys.argv[1:]
    bad, runs = [], 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = pathlib.Path(scratch)
        for case in sorted(p for p in CASES.iterdir() if (p / "model.onnx").is_file()):
            if prefixes and not any(case.name.startswith(p) for p in prefixes):
                continue
            for what, model, inputs in variants(case):
                for old in folder.iterdir():
                    old.unlink()
                (folder / "model.onnx").write_bytes(model.SerializeToString())
                for k, tensor in enumerate(inputs):
                    (folder / f"input_{k}.pb").write_bytes(tensor.SerializeToString())
                try:
                    done = subprocess.run([str(BINARY), "run", str(folder / "model.onnx"), "--test-data", str(folder)],
                                          capture_output=True, text=True, timeout=20)
                    outcome, said = done.returncode, done.stderr.strip()[-300:]
                except subprocess.TimeoutExpired:
                    outcome, said = "a hang (20 s)", ""
                runs += 1
                if outcome not in (0, 1):
                    bad.append(case.name)
                    print(f"{case.name}: {what}: {outcome}: {said}", flush=True)
    print(f"{runs} runs, {len(bad)} bad")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
