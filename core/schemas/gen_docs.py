"""Writes core/schemas/onnx_docs.json: each operator schema's documentation, from onnx's
schema table (onnx 1.23.2) and onnxruntime's contrib one (1.32.0, the domains
export_schemas.py takes), for the browser's Schema tab and hovers.

Usage (from the repository root): .venv/bin/python core/schemas/gen_docs.py

Kept apart from onnx_schemas.json so that checking, which never shows documentation, does
not read it. Layout: a list of [domain, op, since_version, doc], sorted.
"""
from __future__ import annotations

import json
import pathlib

import onnx
from onnx import defs

OUT = pathlib.Path(__file__).resolve().parent / "onnx_docs.json"

assert onnx.__version__ == "1.23.2", f"onnx {onnx.__version__}: the docs must come from 1.23.2"
from export_schemas import ort_schemas  # noqa: E402  (the same contrib schemas, the same check)

rows = sorted(
    [s.domain, s.name, s.since_version, (s.doc or "").strip()]
    for s in list(defs.get_all_schemas_with_history()) + ort_schemas()
    if (s.doc or "").strip()
)
OUT.write_text(json.dumps(rows, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"wrote {OUT}: {len(rows)} schemas, {OUT.stat().st_size} bytes")
