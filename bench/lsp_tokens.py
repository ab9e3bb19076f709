#!/usr/bin/env python3
"""Semantic tokens on a big document, as an editor asks for them: `full` once, then after a
one-line edit `full/delta` (what VS Code sends once it has a result id) and `range` for one
screen (60 lines). Whole round trips over stdio, including the JSON the server writes.

    cargo build --release -p onnx-lsp && python3 bench/lsp_tokens.py [--blocks N] [--write docs/benchmarks.md]
"""
import argparse
import json
import pathlib
import time

from common import update_section
from lsp_latency import URI, Client
import lsp_latency


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=25000, help="4 nodes per block")
    parser.add_argument("--write", help="update this markdown file's section")
    args = parser.parse_args()
    lsp_latency.BLOCKS = args.blocks
    text = lsp_latency.document()
    client = Client()
    client.open_document(text)
    doc = {"uri": URI}
    rows = []

    def timed(what: str, method: str, params: dict) -> dict:
        start = time.perf_counter()
        answer = client.request(method, params)
        elapsed = (time.perf_counter() - start) * 1e3
        size = len(json.dumps(answer))
        rows.append((what, elapsed, size))
        return answer

    timed("full (first request: builds the name index)", "textDocument/semanticTokens/full", {"textDocument": doc})
    full = timed("full again (same version)", "textDocument/semanticTokens/full", {"textDocument": doc})
    result_id = full["result"]["resultId"]
    line = len(text.splitlines()) // 2
    edit = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": "  # note\n"}
    client.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [edit]})
    timed("full/delta after a one-line edit", "textDocument/semanticTokens/full/delta",
          {"textDocument": doc, "previousResultId": result_id})
    screen = {"start": {"line": line, "character": 0}, "end": {"line": line + 60, "character": 0}}
    timed("range of 60 lines (same version)", "textDocument/semanticTokens/range", {"textDocument": doc, "range": screen})
    client.close()
    nodes = args.blocks * 4
    lines = [
        f"Document: {nodes:,} nodes, {len(text) / 1e6:.1f} MB "
        f"(`cargo build --release -p onnx-lsp && python3 bench/lsp_tokens.py --blocks {args.blocks}`).",
        "",
        "| request | round trip | answer |",
        "|---|---|---|",
    ]
    lines += [f"| {what} | {ms:.1f} ms | {size / 1e6:.2f} MB |" for what, ms, size in rows]
    print("\n".join(lines))
    if args.write:
        update_section(pathlib.Path(args.write), "lsp-tokens", "## Semantic tokens on a big document (issue 27)\n\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
