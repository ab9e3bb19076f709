#!/usr/bin/env python3
"""Every value onnxruntime computes for a model, written as `onnx run --all-values` writes
ours, so that the two runtimes can be compared node by node:

    python3 scripts/onnxruntime_values.py MODEL DATA_DIR OUT_DIR
    onnx run MODEL --test-data DATA_DIR --compare-values OUT_DIR     # the first node that parts
    onnx reduce MODEL small.onnx --against OUT_DIR --test-data DATA_DIR  # the fewest nodes that do

DATA_DIR holds the inputs as `input_K.pb` (onnx's backend-test layout). Every output of the
main graph's nodes is made a graph output (as polygraphy's `mark all` does) and the session
runs with graph optimizations off, so that no value is fused away. OUT_DIR gets
`value_K.pb` for each tensor value and `values.tsv` mapping each file to its value's name;
the folder must not exist or be empty. Needs onnx and onnxruntime.
"""
from __future__ import annotations

import pathlib
import sys

import onnx
import onnxruntime as ort
from onnx import numpy_helper


def inputs(model: onnx.ModelProto, data: pathlib.Path) -> dict:
    initializers = {t.name for t in model.graph.initializer}
    names = [v.name for v in model.graph.input if v.name not in initializers]
    feed = {}
    for k, name in enumerate(names):
        path = data / f"input_{k}.pb"
        if not path.exists():
            break
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        feed[tensor.name if tensor.name in names else name] = numpy_helper.to_array(tensor)
    return feed


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    model_path, data, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    if out.exists() and any(out.iterdir()):
        print(f"{out}: not empty; nothing written", file=sys.stderr)
        return 2
    model = onnx.load(model_path)
    feed = inputs(model, data)
    declared = {v.name for v in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            if name and name not in declared:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
                declared.add(name)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    out.mkdir(parents=True, exist_ok=True)
    index = []
    for name, value in list(feed.items()) + list(zip(names, session.run(names, feed))):
        if not hasattr(value, "dtype"):
            continue  # sequences and maps: --all-values writes tensors only
        file = f"value_{len(index)}.pb"
        (out / file).write_bytes(numpy_helper.from_array(value, name).SerializeToString())
        index.append(f"{file}\t{name}\n")
    (out / "values.tsv").write_text("".join(index))
    print(f"{out}: {len(index)} values")
    return 0


if __name__ == "__main__":
    sys.exit(main())
