"""Writes core/schemas/null_inputs.tsv: for each operator version and input, whether onnx's
inference fails the node when it has no type for that input.

onnx's inference has no type for a value an If gives when both branches make it with an
operator onnx has no schema for and declare no type for it (subgraph outputs need none).
Most inference functions then fail ("Input 0 expected to have type but instead is null"),
some never read that input's type. This script measures it on onnx's backend node tests
(tests/corpus/node, one node each, and one-node models of the sequence and optional
operators): each input of each model, at each version of the
operator the test's opset allows, is replaced by such an If output, and onnx 1.23.2's
`check_model(full_check=True)` judges the model (in a forked child: onnx crashes on a few,
which are left out). A row says `fails`, `tolerates`, or `depends` (the tests disagree: the
attributes or other inputs decide).

Run (from the repository root; needs onnx==1.23.2 in .venv):
  .venv/bin/python core/schemas/gen_null_inputs.py
"""

import collections
import os
import pathlib

import onnx
import onnx.checker
import onnx.defs
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
NODE_TESTS = ROOT / "tests/corpus/node"
OUT = pathlib.Path(__file__).resolve().parent / "null_inputs.tsv"
SCHEMAS = onnx.defs.get_all_schemas_with_history()


def verdict(model):
    """0 valid, 1 invalid, negative: onnx crashed with that signal."""
    pid = os.fork()
    if pid == 0:
        try:
            onnx.checker.check_model(model, full_check=True)
            os._exit(0)
        except Exception:  # noqa: BLE001 - any refusal is the verdict
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def untyped_if(name):
    """`name` = If(c_null) whose branches make it with an unknown operator, untyped."""
    branches = {}
    for branch in ("then_branch", "else_branch"):
        made = helper.make_node("Make", [], ["made"], domain="com.null")
        branches[branch] = helper.make_graph([made], branch, [], [onnx.ValueInfoProto(name="made")])
    return helper.make_node("If", ["c_null"], [name], **branches)


def domain_of(d):
    return "" if d in ("", "ai.onnx") else d


def handmade():
    """One-node models of the sequence and optional operators, whose node tests have more
    than one node."""
    t = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    seq = helper.make_sequence_type_proto(t)
    opt = helper.make_optional_type_proto(t)
    scalar = helper.make_tensor_type_proto(TensorProto.INT64, [])
    body = helper.make_graph(
        [helper.make_node("Identity", ["e"], ["o"])], "body",
        [helper.make_value_info("e", t)], [helper.make_value_info("o", t)],
    )
    cases = [
        ("SequenceConstruct", [("a", t), ("b", t)], [("y", seq)], {}),
        ("SequenceInsert", [("s", seq), ("a", t)], [("y", seq)], {}),
        ("SequenceInsert", [("s", seq), ("a", t), ("p", scalar)], [("y", seq)], {}),
        ("SequenceAt", [("s", seq), ("p", scalar)], [("y", t)], {}),
        ("SequenceErase", [("s", seq), ("p", scalar)], [("y", seq)], {}),
        ("SequenceLength", [("s", seq)], [("y", scalar)], {}),
        ("ConcatFromSequence", [("s", seq)], [("y", helper.make_tensor_type_proto(TensorProto.FLOAT, ["n"]))], {"axis": 0}),
        ("SplitToSequence", [("a", t)], [("y", seq)], {}),
        ("SequenceMap", [("s", seq)], [("y", seq)], {"body": body}),
        ("Optional", [("a", t)], [("y", opt)], {}),
        ("OptionalHasElement", [("o", opt)], [("y", helper.make_tensor_type_proto(TensorProto.BOOL, []))], {}),
        ("OptionalGetElement", [("o", opt)], [("y", t)], {}),
    ]
    for op, inputs, outputs, attrs in cases:
        node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], **attrs)
        graph = helper.make_graph(
            [node], op, [helper.make_value_info(n, ty) for n, ty in inputs],
            [helper.make_value_info(n, ty) for n, ty in outputs],
        )
        yield helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def one_node_models():
    for test in sorted(NODE_TESTS.iterdir()):
        path = test / "model.onnx"
        if path.exists():
            model = onnx.load(path)
            if len(model.graph.node) == 1:
                yield model
    yield from handmade()


def main():
    seen = collections.defaultdict(set)
    for base in one_node_models():
        node = base.graph.node[0]
        domain = domain_of(node.domain)
        imported = {domain_of(o.domain): o.version for o in base.opset_import}
        versions = sorted({s.since_version for s in SCHEMAS if s.name == node.op_type and s.domain == domain})
        graph_inputs = {i.name for i in base.graph.input}
        for index, name in enumerate(node.input):
            if name not in graph_inputs:
                continue
            for since in (v for v in versions if v <= imported.get(domain, 1)):
                model = onnx.ModelProto()
                model.CopyFrom(base)
                for o in model.opset_import:
                    if domain_of(o.domain) == domain:
                        o.version = since
                if verdict(model) != 0:
                    continue
                kept = [i for i in model.graph.input if i.name != name]
                del model.graph.input[:]
                model.graph.input.extend(kept)
                model.graph.input.append(helper.make_tensor_value_info("c_null", TensorProto.BOOL, []))
                model.graph.node.insert(0, untyped_if(name))
                model.opset_import.append(helper.make_opsetid("com.null", 1))
                model.ir_version = max(model.ir_version, 4)
                judged = verdict(model)
                if judged >= 0:
                    seen[(domain, node.op_type, since, index)].add(judged == 1)
    lines = ["# domain\toperator\tsince version\tinput\tonnx's inference with no type for it (gen_null_inputs.py)"]
    for (domain, op, since, index), fails in sorted(seen.items()):
        said = "depends" if len(fails) == 2 else ("fails" if True in fails else "tolerates")
        lines.append(f"{domain}\t{op}\t{since}\t{index}\t{said}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(lines) - 1} rows -> {OUT}")


if __name__ == "__main__":
    main()
