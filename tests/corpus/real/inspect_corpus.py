#!/usr/bin/env python3
"""Print the MANIFEST.md table rows for the models listed in fetch.py.

Needs onnx and onnxruntime (not stdlib, unlike fetch.py), e.g.
    python3 -m venv .venv && .venv/bin/pip install onnx==1.23.2 onnxruntime numpy
    .venv/bin/python tests/corpus/real/inspect_corpus.py [--big] [--extdata]
Files that are not on disk are skipped (run fetch.py first).
"""

import collections
import re
import sys
from pathlib import Path

import onnx
import onnxruntime as ort

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fetch  # noqa: E402

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def walk(graph, depth=0):
    """Yield (graph, depth) for the graph and every subgraph below it."""
    yield graph, depth
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from walk(a.g, depth + 1)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from walk(g, depth + 1)


def describe(path):
    m = onnx.load(str(path), load_external_data=False)
    r = {}
    if m.HasField("producer_name"):
        r["producer"] = f"`{m.producer_name}`" if m.producer_name else '`""` (set, empty)'
    else:
        r["producer"] = "(unset)"
    if m.HasField("producer_version"):
        r["producer"] += f" / `{m.producer_version}`" if m.producer_version else ' / `""`'
    else:
        r["producer"] += " / (unset)"
    r["ir"] = m.ir_version
    ops = []
    for o in m.opset_import:
        d = o.domain if o.HasField("domain") else None
        ops.append(f"**(domain absent)**:{o.version}" if d is None else f"`{d or chr(34)*2}`:{o.version}")
    r["opsets"] = ", ".join(ops)
    graphs = list(walk(m.graph))
    r["nodes_main"] = len(m.graph.node)
    r["nodes_total"] = sum(len(g.node) for g, _ in graphs)
    used = collections.Counter()
    for g, _ in graphs:
        for n in g.node:
            used[(n.domain or "", n.op_type)] += 1
    special = sorted({f"{d}:{op}" if d else op for (d, op) in used
                      if d not in ("", "ai.onnx") or op in (
                          "If", "Loop", "Scan", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
                          "QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger")})
    init = {t.name for t in m.graph.initializer}
    fixed = True
    for i in m.graph.input:
        if i.name in init:
            continue
        tt = i.type.tensor_type
        if not i.type.HasField("tensor_type") or not tt.HasField("shape"):
            fixed = False
            continue
        for d in tt.shape.dim:
            if not d.HasField("dim_value") or d.dim_value <= 0:
                fixed = False
    r["fixed"] = "yes" if fixed else "no"
    names = set()
    empty_node_names = 0
    for g, _ in graphs:
        names.update(t.name for t in g.initializer)
        names.update(v.name for v in list(g.input) + list(g.output))
        for n in g.node:
            if not n.name:
                empty_node_names += 1
            else:
                names.add(n.name)
            names.update(x for x in list(n.input) + list(n.output) if x)
    odd = sorted(n for n in names if not IDENT.match(n))
    notes = []
    if special:
        notes.append("ops: " + ", ".join(special))
    if any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer):
        notes.append("external data")
    if odd:
        ex = min(odd, key=len) if len(odd) > 1 else odd[0]
        notes.append(f"{len(odd)} non-identifier names (e.g. `{ex[:40]}`)")
    if empty_node_names:
        notes.append(f"{empty_node_names} unnamed nodes")
    if len(graphs) > 1:
        notes.append(f"{len(graphs) - 1} subgraph(s)")
    r["notes"] = "; ".join(notes)
    try:
        onnx.checker.check_model(str(path), full_check=True)
        r["check"] = "pass"
    except Exception as e:  # noqa: BLE001
        r["check"] = "FAIL: " + " ".join(str(e).split())[:110]
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 3
        ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        r["ort"] = "pass"
    except Exception as e:  # noqa: BLE001
        msg = " ".join(str(e).split())
        r["ort"] = "FAIL: " + msg.split("failed:", 1)[-1].strip()[:110]
    return r


def main():
    groups = [(fetch.HERE, fetch.CORPUS)]
    if "--big" in sys.argv:
        groups.append((fetch.BENCH, fetch.BIG))
    if "--extdata" in sys.argv:
        groups.append((fetch.BENCH, [e for e in fetch.EXTDATA if e[0].endswith(".onnx")]))
    print("| file | source (package==version: path in dist) | license | producer_name / producer_version "
          "| ir | opset imports | nodes main/total | size | inputs fixed | onnx full_check | ORT load | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d, entries in groups:
        for name, pkg, ver, member, _sha, size, lic, _opts in entries:
            p = d / name
            if not p.is_file():
                continue
            r = describe(p)
            print(f"| `{name}` | {pkg}=={ver}: `{member}` | {lic} | {r['producer']} | {r['ir']} | {r['opsets']} "
                  f"| {r['nodes_main']}/{r['nodes_total']} | {size / 1e6:.3g} MB | {r['fixed']} | {r['check']} "
                  f"| {r['ort']} | {r['notes']} |")


if __name__ == "__main__":
    main()
