#!/usr/bin/env python3
"""Writes the seeds of the language server's fuzz targets into fuzz/seeds/ (committed):

- lsp_messages: for each language-server fixture, message bodies separated by zero bytes
  (open the document, ask every request kind at a few places, edit it, ask again, close);
- lsp_edits: each fixture's text, a zero byte, then a fixed pseudo-random edit script in
  the target's encoding (2-byte place, delete count, insert length, inserted bytes).

Run from anywhere: python3 fuzz/lsp_seeds.py
"""
import json
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parent
FIXTURES = sorted((ROOT.parent / "lsp" / "tests" / "fixtures").glob("*.onnxtxt"))
URI = "untitled:seed.onnxtxt"


def places(text):
    """A few (line, character) places on names in the text."""
    out = []
    for line_no, line in enumerate(text.split("\n")):
        for col, ch in enumerate(line):
            if ch.isalpha() and (col == 0 or not line[col - 1].isalnum()):
                out.append((line_no, col))
                break
    return out[1::max(1, len(out) // 4)][:4] or [(0, 0)]


def messages(text):
    doc = {"uri": URI}
    bodies = [{"method": "textDocument/didOpen",
               "params": {"textDocument": {"uri": URI, "languageId": "onnx", "version": 1, "text": text}}}]
    ident = 10
    for line, character in places(text):
        at = {"textDocument": doc, "position": {"line": line, "character": character}}
        for method, extra in [("textDocument/hover", {}), ("textDocument/definition", {}),
                              ("textDocument/references", {"context": {"includeDeclaration": True}}),
                              ("textDocument/documentHighlight", {}), ("textDocument/completion", {}),
                              ("textDocument/signatureHelp", {}), ("textDocument/prepareRename", {}),
                              ("textDocument/rename", {"newName": "fresh"})]:
            ident += 1
            bodies.append({"id": ident, "method": method, "params": {**at, **extra}})
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": text.count("\n") + 1, "character": 0}}
    for method, params in [("textDocument/documentSymbol", {}), ("textDocument/foldingRange", {}),
                           ("textDocument/semanticTokens/full", {}), ("textDocument/inlayHint", {"range": whole}),
                           ("textDocument/formatting", {"options": {"tabSize": 2, "insertSpaces": True}}),
                           ("textDocument/codeAction", {"range": whole, "context": {"diagnostics": []}})]:
        ident += 1
        bodies.append({"id": ident, "method": method, "params": {"textDocument": doc, **params}})
    line, character = places(text)[0]
    edit = {"range": {"start": {"line": line, "character": character}, "end": {"line": line, "character": character}},
            "text": "x"}
    bodies.append({"method": "textDocument/didChange",
                   "params": {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [edit]}})
    ident += 1
    bodies.append({"id": ident, "method": "textDocument/hover",
                   "params": {"textDocument": doc, "position": {"line": line, "character": character}}})
    bodies.append({"method": "textDocument/didClose", "params": {"textDocument": doc}})
    return b"\0".join(json.dumps({"jsonrpc": "2.0", **b}).encode() for b in bodies)


def edits(text, rng):
    script = bytearray()
    pieces = [b"(", b")", b"{", b"}", b"<", b">", b",", b"=", b"\n", b"\r\n", b" ", b"x", b"Relu", b"float[N]",
              b"\"", b"#", "é😀".encode()]
    for _ in range(12):
        piece = rng.choice(pieces)
        script += rng.randrange(len(text) + 1).to_bytes(2, "little")
        script += bytes([rng.randrange(8), len(piece)]) + piece
    return text.encode() + b"\0" + bytes(script)


def main():
    rng = random.Random(20261125)
    for target in ("lsp_messages", "lsp_edits"):
        (ROOT / "seeds" / target).mkdir(parents=True, exist_ok=True)
    for fixture in FIXTURES:
        text = fixture.read_text()
        (ROOT / "seeds" / "lsp_messages" / fixture.stem).write_bytes(messages(text))
        (ROOT / "seeds" / "lsp_edits" / fixture.stem).write_bytes(edits(text, rng))


if __name__ == "__main__":
    main()
