"""Golden files for the `onnx` printer style: `onnx.printer.to_text` of every corpus model.

Usage: python tests/corpus/gen_onnx_text.py   (needs `pip install onnx==1.23.2`)

Writes tests/corpus/golden/onnx-text/<relative model path>.onnxtxt for every model onnx can
print, and tests/corpus/golden/onnx-text/failures.txt listing the ones it cannot, with the
exception onnx raised. The tests compare our printer to these byte for byte. The real
exporters' models (tests/corpus/real) are left out: their texts would add 92 MB.
"""
from __future__ import annotations

import pathlib
import shutil

import onnx
import onnx.printer

ROOT = pathlib.Path(__file__).resolve().parent
OUT = ROOT / "golden" / "onnx-text"


def main() -> None:
    failures = []
    count = 0
    shutil.rmtree(OUT, ignore_errors=True)
    for path in sorted(ROOT.rglob("*.onnx")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("golden", "real"):
            continue
        try:
            model = onnx.load(str(path), load_external_data=False)
            text = onnx.printer.to_text(model)
        except Exception as exc:  # onnx cannot print it: record why
            failures.append(f"{rel}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            continue
        target = OUT / rel.with_suffix(".onnxtxt")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
        count += 1
    (OUT / "failures.txt").write_text("".join(f + "\n" for f in failures))
    print(f"wrote {count} golden texts, {len(failures)} models onnx cannot print")


if __name__ == "__main__":
    main()
