#!/usr/bin/env python3
"""Reads every `.onnxtxt` below DIR with onnx's own parser (`onnx.parser.parse_model`) and
prints one line per file: `RELATIVE_PATH<TAB>ok`, or `RELATIVE_PATH<TAB>error<TAB>MESSAGE`.

A text with a binary model of the same name beside it is that model's outline: its external
references are then loaded with `onnx.load_external_data_for_model`, and every tensor (the
initializers and the attribute tensors of every graph, in onnx's order) must hold the values,
element type and dims of the binary model's.

Run by tests/tests/onnx_reads_canonical_text.rs (which prints the texts with our printer
first); needs onnx==1.23.2.
"""
import os
import sys

import numpy as np
import onnx
import onnx.parser
from onnx import external_data_helper, numpy_helper


def same_tensors(parsed: onnx.ModelProto, binary_path: str) -> str:
    """What differs between the tensors of the parsed outline and of the binary model, or "".
    An attribute's tensor (a Constant's value) has no name in onnx's grammar (ours keeps it in
    a `#@ tensor_name` annotation), so only initializers are compared by name."""
    external_data_helper.load_external_data_for_model(parsed, os.path.dirname(binary_path))
    binary = onnx.load(binary_path)
    for kind, named in (("_get_initializer_tensors", True), ("_get_attribute_tensors", False)):
        ours = list(getattr(external_data_helper, kind)(parsed))
        theirs = list(getattr(external_data_helper, kind)(binary))
        if len(ours) != len(theirs):
            return f"{len(ours)} tensors from {kind}, the binary has {len(theirs)}"
        for a, b in zip(ours, theirs):
            ours_key = (a.name if named else "", a.data_type, list(a.dims))
            if ours_key != (b.name if named else "", b.data_type, list(b.dims)):
                return f"tensor {a.name!r}: {a.data_type} {list(a.dims)}, the binary's {b.name!r}: {b.data_type} {list(b.dims)}"
            x, y = numpy_helper.to_array(a), numpy_helper.to_array(b)
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                if not (x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")):
                    return f"tensor {b.name!r}: other values than the binary's"
    return ""


def main() -> None:
    root = sys.argv[1]
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".onnxtxt"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            try:
                parsed = onnx.parser.parse_model(text)
                binary = path[: -len(".onnxtxt")] + ".onnx"
                differs = same_tensors(parsed, binary) if os.path.exists(binary) else ""
                if differs:
                    print(f"{rel}\terror\tread, but {differs}")
                    continue
                print(f"{rel}\tok")
            except Exception as e:  # onnx raises its own ParseError type
                message = " ".join(str(e).split())
                print(f"{rel}\terror\t{message}")


if __name__ == "__main__":
    main()
