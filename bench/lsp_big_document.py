#!/usr/bin/env python3
"""A real model's whole text in the editor (issue 57, point 4): the requests an editor sends on
a document of about 10 MB, timed as whole round trips over stdio with the size of each answer.
Two servers side by side in one run (`--before BIN`): the same document, the same requests.

    cargo build --release -p onnx-cli -p onnx-lsp
    python3 bench/lsp_big_document.py [--model tests/corpus/real/pt_ts_spindle_eeg.onnx]
        [--before OLD_ONNX_LSP] [--write docs/benchmarks.md]

The text is what `onnx convert MODEL TEXT --inline` writes (every number inline). Requests:
`semanticTokens/full`, a one-line edit then `semanticTokens/full/delta`, `formatting` of
that edit (a formatted document with one line indented wrongly), `foldingRange`,
`documentSymbol`, each asked `--repeat` times (the delta once: it answers against the
result before it).
"""
import argparse
import datetime
import json
import pathlib
import statistics
import subprocess
import tempfile
import time

from common import machine, update_section
from lsp_latency import URI, Client

REPO = pathlib.Path(__file__).resolve().parent.parent


def measure(server: pathlib.Path, text: str, repeat: int) -> list[tuple[str, float, int]]:
    client = Client(server)
    client.open_document(text)
    doc = {"uri": URI}
    rows = []

    def timed(what: str, method: str, params: dict, times_asked: int = repeat) -> dict:
        times, answer = [], {}
        for _ in range(times_asked):
            start = time.perf_counter()
            answer = client.request(method, params)
            times.append((time.perf_counter() - start) * 1e3)
        rows.append((what, statistics.median(times), len(json.dumps(answer))))
        return answer

    full = timed("semanticTokens/full", "textDocument/semanticTokens/full", {"textDocument": doc})
    # A node line in the middle gets two more spaces of indentation: a change of one line.
    lines = text.split("\n")
    middle = next(i for i in range(len(lines) // 2, len(lines)) if " = " in lines[i] and lines[i].startswith("  ") and lines[i].rstrip().endswith(")"))
    edit = {"range": {"start": {"line": middle, "character": 0}, "end": {"line": middle, "character": 0}}, "text": "  "}
    client.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [edit]})
    client.diagnostics_for(2)
    result_id = full["result"].get("resultId")
    if result_id is not None:
        timed("semanticTokens/full/delta after the edit", "textDocument/semanticTokens/full/delta",
              {"textDocument": doc, "previousResultId": result_id}, 1)
    options = {"tabSize": 2, "insertSpaces": True}
    timed("formatting after the edit", "textDocument/formatting", {"textDocument": doc, "options": options})
    timed("foldingRange", "textDocument/foldingRange", {"textDocument": doc})
    timed("documentSymbol", "textDocument/documentSymbol", {"textDocument": doc})
    client.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=str(REPO / "tests/corpus/real/pt_ts_spindle_eeg.onnx"))
    parser.add_argument("--server", default=str(REPO / "target/release/onnx-lsp"))
    parser.add_argument("--before", help="another onnx-lsp to measure beside it")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", help="update this markdown file's section")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "model.onnxtxt"
        subprocess.run([str(REPO / "target/release/onnx"), "convert", args.model, str(path), "--inline"], check=True)
        text = path.read_text()
    servers = [("after", pathlib.Path(args.server))] + ([("before", pathlib.Path(args.before))] if args.before else [])
    results = {name: measure(server, text, args.repeat) for name, server in servers}
    model = pathlib.Path(args.model).name
    command = "python3 bench/lsp_big_document.py" + (" --before BIN" if args.before else "")
    header = "| request | " + " | ".join(f"{name}: round trip | {name}: answer" for name, _ in servers) + " |"
    lines = [
        f"Measured {datetime.date.today()} on {machine()} with `{command}`: "
        f"the `--inline` text of `{model}`, {len(text) / 1e6:.1f} MB, {text.count(chr(10)):,} lines; "
        f"median of {args.repeat} of each request.",
        "",
        header,
        "|---|" + "---|---|" * len(servers),
    ]
    for i, (what, _, _) in enumerate(results["after"]):
        cells = []
        for name, _ in servers:
            row = next((r for r in results[name] if r[0] == what), None)
            cells += [f"{row[1]:.1f} ms", f"{row[2] / 1e3:,.1f} KB"] if row else ["–", "–"]
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    print("\n".join(lines))
    if args.write:
        update_section(pathlib.Path(args.write), "lsp-big-document",
                       "## A real model's text in the editor: tokens, formatting, folding (issue 57)\n\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
