"""Benchmark: onnx-lsp latency over stdio on a generated 10,000-node text model.

Usage (from the repository root; plain Python, no packages needed):

    cargo build --release -p onnx-lsp
    python3 bench/lsp_latency.py [--edits 40] [--hovers 200] [--write docs/benchmarks.md]

Starts `target/release/onnx-lsp`, opens a document of 2,500 blocks `MatMul → Add → Relu →
Mul` (10,000 nodes, symbolic batch dimension), then measures, as an editor sees them:

* diagnostics — from sending a one-character `didChange` (a space inserted after a node's
  `=`, then removed again, alternating) to receiving `publishDiagnostics` for that version:
  the whole pipeline of parse, lowering, name resolution, checker, shape inference and the
  index, plus the protocol round trip;
* hover — request to response for a hover on a value in the middle of the document.

Aims (issue #5): diagnostics within 50 ms, hover within 5 ms.
"""
from __future__ import annotations

import argparse
import datetime
import pathlib
import json
import queue
import statistics
import subprocess
import sys
import threading
import time

from common import ROOT, lsp_messages, machine, update_section

BLOCKS = 2500
SERVER = ROOT / "target" / "release" / "onnx-lsp"
URI = "file:///bench/model.onnxtxt"


def document() -> str:
    w = ", ".join(str((i % 7) - 3) for i in range(64 * 64))
    b = ", ".join("0.5" for _ in range(64))
    lines = [
        '<ir_version: 10, opset_import: ["" : 21]>',
        f"main (float[N, 64] x) => (float[N, 64] y) <float[64, 64] W = {{{w}}}, float[64] B = {{{b}}}> {{",
    ]
    h = "x"
    for i in range(BLOCKS):
        lines.append(f"  m{i} = MatMul({h}, W)")
        lines.append(f"  a{i} = Add(m{i}, B)")
        lines.append(f"  r{i} = Relu(a{i})")
        lines.append(f"  h{i} = Mul(r{i}, r{i})")
        h = f"h{i}"
    lines.append(f"  y = Identity({h})")
    lines.append("}")
    return "\n".join(lines) + "\n"


class Client:
    def __init__(self, server: pathlib.Path = SERVER) -> None:
        self.proc = subprocess.Popen([str(server)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.messages: queue.Queue[dict] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for message in lsp_messages(self.proc.stdout):
            self.messages.put(message)

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        wanted = self.next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        while True:
            message = self.messages.get(timeout=60)
            if message.get("id") == wanted and "method" not in message:
                return message

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def open_document(self, text: str) -> None:
        """Initializes the server, opens `text` as version 1 and waits for its diagnostics."""
        self.request("initialize", {"capabilities": {}})
        self.notify("initialized", {})
        item = {"uri": URI, "languageId": "onnx", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": item})
        self.diagnostics_for(1)

    def diagnostics_for(self, version: int) -> list:
        while True:
            message = self.messages.get(timeout=60)
            params = message.get("params", {})
            if message.get("method") == "textDocument/publishDiagnostics" and params.get("version") == version:
                return params["diagnostics"]

    def close(self) -> None:
        self.request("shutdown", {})
        self.notify("exit", {})
        self.proc.wait(timeout=10)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--hovers", type=int, default=200)
    parser.add_argument("--write", help="update this Markdown file's lsp section")
    parser.add_argument("--server", help="the onnx-lsp binary to measure (default: target/release/onnx-lsp)")
    args = parser.parse_args()
    server = pathlib.Path(args.server) if args.server else SERVER
    if not server.exists():
        sys.exit(f"{server} is missing: cargo build --release -p onnx-lsp")

    text = document()
    lines = text.split("\n")
    middle = 2 + 4 * (BLOCKS // 2)  # the line of `m1250 = MatMul(h1249, W)`
    assert lines[middle].startswith(f"  m{BLOCKS // 2} = MatMul(")
    client = Client(server)
    client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    client.notify("initialized", {})
    start = time.perf_counter()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "onnx", "version": 1, "text": text}})
    initial = client.diagnostics_for(1)
    open_time = time.perf_counter() - start
    assert initial == [], initial

    edit_times = []
    column = lines[middle].index("=") + 1
    for k in range(args.edits):
        version = k + 2
        insert = k % 2 == 0
        end = column if insert else column + 1
        change = {
            "range": {"start": {"line": middle, "character": column}, "end": {"line": middle, "character": end}},
            "text": " " if insert else "",
        }
        start = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": version}, "contentChanges": [change]})
        diagnostics = client.diagnostics_for(version)
        edit_times.append(time.perf_counter() - start)
        assert diagnostics == [], diagnostics

    hover_times = []
    use = lines[middle].index("(") + 1  # `h1249` inside MatMul(…)
    for _ in range(args.hovers):
        start = time.perf_counter()
        answer = client.request("textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": middle, "character": use}})
        hover_times.append(time.perf_counter() - start)
        assert "h1249" in answer["result"]["contents"]["value"], answer
    client.close()

    nodes = 4 * BLOCKS + 1
    ms = lambda s: f"{s * 1000:.1f} ms"  # noqa: E731
    rows = [
        f"Document: {nodes:,} nodes, {len(text) / 1e6:.2f} MB, {len(lines):,} lines. {machine()}.",
        "",
        "| measurement | median | p95 | aim |",
        "|---|---|---|---|",
        f"| open → first diagnostics | {ms(open_time)} | | |",
        f"| one-character edit → diagnostics ({args.edits} edits) | {ms(statistics.median(edit_times))} | {ms(percentile(edit_times, 0.95))} | ≤ 50 ms |",
        f"| hover ({args.hovers} requests) | {ms(statistics.median(hover_times))} | {ms(percentile(hover_times, 0.95))} | ≤ 5 ms |",
    ]
    table = "\n".join(rows)
    print(table)
    if args.write:
        command = "cargo build --release -p onnx-lsp && python3 bench/lsp_latency.py"
        section = (
            f"## Language server latency (issue #5)\n\nMeasured {datetime.date.today()} with `{command}`"
            f" (over stdio, as an editor talks to it).\n\n{table}"
        )
        update_section(ROOT / args.write, "lsp", section)


if __name__ == "__main__":
    main()
