"""Golden hashes: what onnx's own parser makes of the text its printer wrote.

Usage: python tests/corpus/gen_onnx_reparse.py   (needs `pip install onnx==1.23.2`;
run after gen_onnx_text.py)

For every golden text in tests/corpus/golden/onnx-text, parses it with
`onnx.parser.parse_model` and records the SHA-256 of the serialized result (or the error)
in tests/corpus/golden/onnx-reparse.tsv. Our parser and lowering must produce the same
bytes from the same text. Hashes keep the committed data small.
"""
from __future__ import annotations

import hashlib
import pathlib

import onnx.parser

ROOT = pathlib.Path(__file__).resolve().parent
TEXTS = ROOT / "golden" / "onnx-text"


def main() -> None:
    rows = []
    for path in sorted(TEXTS.rglob("*.onnxtxt")):
        rel = path.relative_to(TEXTS).as_posix()
        try:
            model = onnx.parser.parse_model(path.read_text(encoding="utf-8"))
            rows.append(f"{rel}\tok\t{hashlib.sha256(model.SerializeToString()).hexdigest()}")
        except Exception as exc:
            message = str(exc).replace("\n", " ").replace("\t", " ")[:200]
            rows.append(f"{rel}\terror\t{type(exc).__name__}: {message}")
    (ROOT / "golden" / "onnx-reparse.tsv").write_text("".join(r + "\n" for r in rows))
    parsed = sum(1 for r in rows if r.split("\t")[1] == "ok")
    print(f"{len(rows)} texts, {parsed} parsed by onnx")


if __name__ == "__main__":
    main()
