#!/usr/bin/env python3
"""Reads every `.onnxtxt` below DIR with onnx's own parser (`onnx.parser.parse_model`) and
prints one line per file: `RELATIVE_PATH<TAB>ok`, or `RELATIVE_PATH<TAB>error<TAB>MESSAGE`.

Run by tests/tests/onnx_reads_canonical_text.rs (which prints the texts with our printer
first); needs onnx==1.23.2.
"""
import os
import sys

import onnx
import onnx.parser


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
                onnx.parser.parse_model(text)
                print(f"{rel}\tok")
            except Exception as e:  # onnx raises its own ParseError type
                message = " ".join(str(e).split())
                print(f"{rel}\terror\t{message}")


if __name__ == "__main__":
    main()
