#!/usr/bin/env python3
"""Benchmark: onnx-lsp driven the way an editor drives it (issue 27).

    cargo build --release -p onnx-lsp -p onnx-cli
    python3 bench/lsp_editor.py [--server BIN] [--before BIN] [--edits 30] [--pace 0.1]
                                [--documents 10k,100k,real] [--write docs/benchmarks.md]

For each document, sync kind and request mix, the server is started afresh, the document
opened, and then `--edits` one-character edits are typed at `--pace` seconds apart, in the
middle of the document, put in and taken out again. Each edit is measured from sending
`didChange` to the first `publishDiagnostics` for that version. `--typing` says which:

* `layout`: a space after a node's `=`, which leaves the model as it was (the server then
  takes the previous version's verdict);
* `name`: a letter at the end of the node's first input name, which changes the model (the
  name is then not defined, and every node after it loses its types), as typing a name does.

* sync: `incremental` sends the edited range only (VS Code, Neovim's default); `full`
  sends the whole text on every change (Helix and several Neovim set-ups);
* requests: `none` sends nothing else; `mix` sends, right after each change and without
  waiting, what VS Code asks for then: `semanticTokens/full/delta` (with the last result id),
  `inlayHint` and `codeAction` for the visible screen, `documentSymbol` and `foldingRange`.

Documents: `10k` and `100k` are chains of `MatMul → Add → Relu → Mul` blocks (10,001 and
100,001 nodes); `real` is `tests/corpus/real/ortquant_smart_turn_v3_2.onnx` converted to
text with every number inline (`onnx convert --inline`), a real exporter's model; `vgg` is
the 65.5 MB tf2onnx VGG16 that `tests/corpus/real/fetch.py --big` fetches, 239 MB as text
(bigger than the issue's 71 MB document), for `--navigation vgg`.

With `--before BIN`, every configuration runs on both servers, alternately, and the table
puts them side by side. Reports median and p95 in milliseconds. No packages needed.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from common import ROOT, lsp_messages, machine, update_section
import lsp_latency

SERVER = ROOT / "target" / "release" / "onnx-lsp"
CLI = ROOT / "target" / "release" / "onnx"
REAL_MODEL = ROOT / "tests" / "corpus" / "real" / "ortquant_smart_turn_v3_2.onnx"
# Fetched, not in the repository (`tests/corpus/real/fetch.py --big`): 65.5 MB, 239 MB as text.
BIG_MODEL = ROOT / "bench-data" / "real" / "tf2onnx_vgg16_tumor.onnx"
URI = "file:///bench/model.onnxtxt"


class Editor:
    """A client that timestamps every message as it arrives, so diagnostics and responses
    can be waited for in any order while requests are in flight."""

    def __init__(self, server: pathlib.Path) -> None:
        self.proc = subprocess.Popen([str(server)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.cond = threading.Condition()
        self.responses: dict[int, tuple[float, dict]] = {}
        self.diagnostics: dict[int, list[float]] = {}  # version → arrivals of its publications
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for message in lsp_messages(self.proc.stdout):
            now = time.perf_counter()
            with self.cond:
                if "id" in message and "method" not in message:
                    self.responses[message["id"]] = (now, message)
                elif message.get("method") == "textDocument/publishDiagnostics":
                    version = message["params"].get("version")
                    if version is not None:
                        self.diagnostics.setdefault(version, []).append(now)
                self.cond.notify_all()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def start_request(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def response(self, id_: int, timeout: float = 120) -> dict:
        with self.cond:
            if not self.cond.wait_for(lambda: id_ in self.responses, timeout):
                raise TimeoutError(f"no response to request {id_}")
            return self.responses.pop(id_)[1]

    def request(self, method: str, params: dict) -> dict:
        return self.response(self.start_request(method, params))

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics_time(self, version: int, timeout: float = 120) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: version in self.diagnostics, timeout):
                raise TimeoutError(f"no diagnostics for version {version}")
            return self.diagnostics[version][0]

    def close(self) -> None:
        try:
            self.request("shutdown", {})
            self.notify("exit", {})
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def chain(blocks: int) -> str:
    lsp_latency.BLOCKS = blocks
    return lsp_latency.document()


def real_text(model: pathlib.Path = REAL_MODEL) -> str:
    if not CLI.exists():
        sys.exit(f"{CLI} is missing: cargo build --release -p onnx-cli")
    if not model.exists():
        sys.exit(f"{model} is missing: python3 tests/corpus/real/fetch.py --big")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "model.onnxtxt"
        subprocess.run([str(CLI), "convert", "--inline", str(model), str(out)], check=True, capture_output=True)
        return out.read_text()


def name_end(text: str, line: int) -> tuple[int, int]:
    """The line and column just after the first input name of the node on `line` (its
    inputs may start on a later line)."""
    lines = text.split("\n")
    start = sum(len(l) + 1 for l in lines[:line])
    opened = text.index("(", text.index(" = ", start)) + 1
    end = min(i for i in (text.find(",", opened), text.find(")", opened)) if i >= 0)
    if text[end - 1] == '"':
        end -= 1  # inside the quotes of a quoted name
    line_of_end = text.count("\n", 0, end)
    return line_of_end, end - (text.rfind("\n", 0, end) + 1)


def edit_line(text: str) -> tuple[int, int]:
    """The line and column just after `=` of the node line nearest the middle."""
    lines = text.split("\n")
    middle = len(lines) // 2
    for distance in range(len(lines)):
        for k in (middle + distance, middle - distance):
            if 0 <= k < len(lines):
                line = lines[k]
                stripped = line.lstrip()
                before, _, after = stripped.partition(" = ")
                typed = "]" in before and not before.startswith("[")  # `float[2] w = …`, not `[label] y = Op (`
                if after and "(" in after and not stripped.startswith(("<", "#", "@")) and "{" not in line and not typed:
                    return k, line.index(" = ") + 2
    raise ValueError("no node line")


def whole_range(text: str) -> dict:
    lines = text.split("\n")
    return {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}}


def session(server: pathlib.Path, text: str, sync: str, mix: bool, edits: int, pace: float, typing: str) -> tuple[list[float], list[float]]:
    """One server, one document: for every edit, change → first diagnostics, and change →
    complete diagnostics for the edits whose complete diagnostics came (a big document's
    first publication is the syntax-first one; a version superseded before its analysis
    ended gets no other), in seconds."""
    editor = Editor(server)
    gc.disable()  # collected during the pauses between edits (see below)
    editor.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    editor.notify("initialized", {})
    doc = {"uri": URI}
    editor.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "onnx", "version": 1, "text": text}})
    editor.diagnostics_time(1, timeout=600)
    line, column = edit_line(text)
    letter = " "
    if typing == "name":
        (line, column), letter = name_end(text, line), "x"
    screen = {"start": {"line": max(0, line - 30), "character": 0}, "end": {"line": line + 30, "character": 0}}
    result_id = None
    if mix:
        tokens = editor.request("textDocument/semanticTokens/full", {"textDocument": doc})
        result_id = (tokens.get("result") or {}).get("resultId")
    lines = text.split("\n")
    times = []
    sent: dict[int, float] = {}
    for k in range(edits):
        version = k + 2
        insert = k % 2 == 0
        if sync == "incremental":
            end = column if insert else column + 1
            change = {
                "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": end}},
                "text": letter if insert else "",
            }
        else:
            edited = list(lines)
            if insert:
                edited[line] = lines[line][:column] + letter + lines[line][column:]
            change = {"text": "\n".join(edited)}
        start = time.perf_counter()
        sent[version] = start
        editor.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": version}, "contentChanges": [change]})
        pending = []
        if mix:
            pending.append(editor.start_request("textDocument/semanticTokens/full/delta", {"textDocument": doc, "previousResultId": result_id}))
            pending.append(editor.start_request("textDocument/inlayHint", {"textDocument": doc, "range": screen}))
            pending.append(editor.start_request("textDocument/codeAction", {"textDocument": doc, "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column}}, "context": {"diagnostics": []}}))
            pending.append(editor.start_request("textDocument/documentSymbol", {"textDocument": doc}))
            pending.append(editor.start_request("textDocument/foldingRange", {"textDocument": doc}))
        arrived = editor.diagnostics_time(version)
        times.append(arrived - start)
        for id_ in pending:
            answer = editor.response(id_)
            if "error" in answer:
                raise RuntimeError(f"request failed: {answer['error']}")
            result = answer.get("result")
            if isinstance(result, dict) and result.get("resultId"):
                result_id = result["resultId"]
            del answer, result
        # The answers (megabytes of symbols on big documents) are freed while the person
        # pauses, not in the middle of the next measurement: this client is Python, and
        # its collector would take a core from the server then.
        pause_start = time.perf_counter()
        gc.collect()
        time.sleep(max(0.0, pace - (time.perf_counter() - pause_start)))
    time.sleep(1.0)
    editor.close()
    gc.enable()
    # A server that publishes syntax first sends two lists for a version it finishes (the
    # opened version among them), one for a version superseded before its analysis ended.
    twice = any(len(arrivals) >= 2 for arrivals in editor.diagnostics.values())
    complete = []
    for version, start in sent.items():
        arrivals = editor.diagnostics.get(version, [])
        if arrivals and (not twice or len(arrivals) >= 2):
            complete.append(arrivals[-1] - start)
    return times, complete


def navigation(server: pathlib.Path, text: str, repeat: int) -> dict[str, list[float]]:
    """Hover, definition and references on a value used in the middle of the document, each
    `repeat` times on one version, in seconds; `first` is the very first request, which
    builds the name index."""
    editor = Editor(server)
    editor.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    editor.notify("initialized", {})
    editor.notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "onnx", "version": 1, "text": text}})
    editor.diagnostics_time(1, timeout=600)
    line, column = edit_line(text)
    # The node's first output: after its label when it has one, inside the quotes of a
    # quoted name.
    body = text.split("\n")[line]
    output = len(body) - len(body.lstrip())
    if body[output] == "[":
        output = body.index("]", output) + 2
    if body[output] == '"':
        output += 1
    at = {"textDocument": {"uri": URI}, "position": {"line": line, "character": output}}
    times: dict[str, list[float]] = {"first": [], "hover": [], "definition": [], "references": []}
    methods = {"hover": "textDocument/hover", "definition": "textDocument/definition", "references": "textDocument/references"}
    for k in range(repeat):
        for name, method in methods.items():
            params = dict(at, context={"includeDeclaration": True}) if name == "references" else at
            start = time.perf_counter()
            answer = editor.request(method, params)
            elapsed = time.perf_counter() - start
            if "error" in answer or answer.get("result") is None:
                raise RuntimeError(f"{name}: {answer}")
            times["first" if k == 0 and name == "hover" else name].append(elapsed)
    editor.close()
    return times


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", help="the onnx-lsp to measure (default: target/release/onnx-lsp)")
    parser.add_argument("--before", help="an onnx-lsp of the build before the change, run side by side")
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--pace", type=float, default=0.1, help="seconds between edits (typing pace)")
    parser.add_argument("--documents", default="10k,100k,real")
    parser.add_argument("--syncs", default="full,incremental")
    parser.add_argument("--mixes", default="mix,none")
    parser.add_argument("--typing", default="layout,name", help="which edits: layout (a space), name (a letter in a name)")
    parser.add_argument("--navigation", default="real", help="documents to time hover, definition and references on")
    parser.add_argument("--write", help="update this Markdown file's lsp-editor section")
    args = parser.parse_args()
    server = pathlib.Path(args.server) if args.server else SERVER
    servers = [("after", server)] + ([("before", pathlib.Path(args.before))] if args.before else [])
    for _, path in servers:
        if not path.exists():
            sys.exit(f"{path} is missing: cargo build --release -p onnx-lsp")

    makers = {"10k": lambda: chain(2500), "100k": lambda: chain(25000), "real": real_text,
              "vgg": lambda: real_text(BIG_MODEL)}
    header = "| document | edit | sync | requests after each change | " + " | ".join(
        f"{name}: median / p95" for name, _ in reversed(servers)) + " |"
    rows = [header, "|---|---|---|---|" + "---|" * len(servers)]
    sizes = []
    for name in [n for n in args.documents.split(",") if n]:
        text = makers[name]()
        sizes.append(f"`{name}` {len(text) / 1e6:.1f} MB, {text.count(chr(10)):,} lines")
        for typing in args.typing.split(","):
            for sync in args.syncs.split(","):
                for mix in args.mixes.split(","):
                    cells = []
                    for label, path in reversed(servers):
                        times, complete = session(path, text, sync, mix == "mix", args.edits, args.pace, typing)
                        ms = [t * 1e3 for t in times]
                        cell = f"{statistics.median(ms):.1f} / {percentile(ms, 0.95):.1f} ms"
                        if len(complete) != len(times) or complete != times:
                            done = [t * 1e3 for t in complete]
                            cell += (f"; complete {statistics.median(done):.0f} / {percentile(done, 0.95):.0f} ms"
                                     f" ({len(done)} of {len(times)})" if done else f"; complete: none of {len(times)}")
                        cells.append(cell)
                        print(f"{name} {typing} {sync} {mix} {label}: {cells[-1]}", file=sys.stderr, flush=True)
                    rows.append(f"| {name} | {typing} | {sync} | {mix} | " + " | ".join(cells) + " |")
    nav_rows = ["| document | request | " + " | ".join(f"{name}: median / p95" for name, _ in reversed(servers)) + " |",
                "|---|---|" + "---|" * len(servers)]
    for name in [n for n in args.navigation.split(",") if n]:
        text = makers[name]()
        if name not in args.documents.split(","):
            sizes.append(f"`{name}` (navigation only) {len(text) / 1e6:.1f} MB, {text.count(chr(10)):,} lines")
        results = [navigation(path, text, 20) for _, path in reversed(servers)]
        for request in ("first", "hover", "definition", "references"):
            cells = []
            for times in results:
                ms = [t * 1e3 for t in times[request]]
                cells.append(f"{statistics.median(ms):.1f} / {percentile(ms, 0.95):.1f} ms")
            label = "first hover (builds the name index)" if request == "first" else request
            nav_rows.append(f"| {name} | {label} | " + " | ".join(cells) + " |")
    command = ("python3 bench/lsp_editor.py" + (" --before BIN" if args.before else "")
               + f" --edits {args.edits} --pace {args.pace} --typing {args.typing} --syncs {args.syncs} --mixes {args.mixes}"
               + f" --navigation {args.navigation}")
    table = "\n".join(rows) + "\n\nHover, definition and references on one version (20 each):\n\n" + "\n".join(nav_rows)
    text = (f"Measured {datetime.date.today()} with `{command}`; change → first diagnostics for that "
            f"version, {args.edits} one-character edits {args.pace} s apart. Documents: {'; '.join(sizes)}. "
            f"{machine()}.\n\n{table}")
    print(text)
    if args.write:
        update_section(ROOT / args.write, "lsp-editor", "## Language server as an editor drives it (issue 27)\n\n" + text)


if __name__ == "__main__":
    main()
