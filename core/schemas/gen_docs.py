"""Writes core/schemas/onnx_docs.json: each operator schema's documentation, from onnx's
schema table (onnx 1.23.2), for the browser's Schema tab and hovers.

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
rows = sorted(
    [s.domain, s.name, s.since_version, (s.doc or "").strip()]
    for s in defs.get_all_schemas_with_history()
    if (s.doc or "").strip()
)
OUT.write_text(json.dumps(rows, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"wrote {OUT}: {len(rows)} schemas, {OUT.stat().st_size} bytes")
