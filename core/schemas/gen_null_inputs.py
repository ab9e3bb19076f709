"""Writes core/schemas/null_inputs.tsv: for each operator version and input, whether onnx
fails a node reading that input when its inference infers no type for it.

onnx's inference infers no type for a value an If gives when both branches make it with an
operator onnx has no schema for and declare no type for it (subgraph outputs need none).
The value then has the type the If's graph declares for it in `value_info`, or none. With
none, most inference functions fail ("Input 0 expected to have type but instead is null"),
some never read that input's type. Declared without its parts (a tensor of no element
type, a sequence of no element), it fails every reader, in its inference or in the type
check after it. Declared as a type of no kind (an empty TypeProto), it fails the readers
that copy its shape.

Measured on onnx's backend node tests (tests/corpus/node, one node each) and one-node models
of every other operator version with inputs (`handmade`): each graph input of each model,
at every version of the operator the model is valid at, is replaced by such an If output,
undeclared and declared in each of those ways, and onnx 1.23.2's
`check_model(full_check=True)` judges the model (in a forked child: onnx crashes on a few,
which are left out, `-`). A column says `fails`, `tolerates`, or `depends` (the models
disagree: the attributes or other inputs decide).

Run (from the repository root; needs onnx==1.23.2 in .venv):
  .venv/bin/python core/schemas/gen_null_inputs.py [--write DIR]
"""

import collections
import os
import pathlib
import sys

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
    """One-node models of the operators (and versions) whose node tests do not make one: the
    sequence and optional operators (their tests have more than one node), versions whose
    attributes differ from the test's, operators without a test, the ML domain."""
    f = TensorProto.FLOAT
    t = helper.make_tensor_type_proto(f, [2])
    seq = helper.make_sequence_type_proto(t)
    opt = helper.make_optional_type_proto(t)
    scalar = helper.make_tensor_type_proto(TensorProto.INT64, [])
    boolean = helper.make_tensor_type_proto(TensorProto.BOOL, [])

    def tensor(elem, *dims):
        return helper.make_tensor_type_proto(elem, list(dims))

    image = tensor(f, 1, 2, 4, 4)
    row = tensor(f, 1, 2)
    body = helper.make_graph(
        [helper.make_node("Identity", ["e"], ["o"])], "body",
        [helper.make_value_info("e", t)], [helper.make_value_info("o", t)],
    )
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Identity", ["v_in"], ["v_out"])],
        "loop_body",
        [helper.make_value_info("i", scalar), helper.make_value_info("c_in", boolean), helper.make_value_info("v_in", t)],
        [helper.make_value_info("c_out", boolean), helper.make_value_info("v_out", t)],
    )
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_in"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y_out"])],
        "scan_body",
        [helper.make_value_info("s_in", t), helper.make_value_info("x_in", t)],
        [helper.make_value_info("s_out", t), helper.make_value_info("y_out", t)],
    )
    branch = {
        b: helper.make_graph([helper.make_node("Identity", ["a"], [b])], b, [], [helper.make_value_info(b, t)])
        for b in ("then_out", "else_out")
    }
    one_leaf = dict(
        nodes_treeids=[0], nodes_nodeids=[0], nodes_featureids=[0], nodes_modes=["LEAF"], nodes_values=[0.0],
        nodes_truenodeids=[0], nodes_falsenodeids=[0],
    )
    string_map = helper.make_map_type_proto(TensorProto.STRING, tensor(TensorProto.INT64))
    int_map = helper.make_map_type_proto(TensorProto.INT64, tensor(f))
    ml = "ai.onnx.ml"
    cases = [
        ("", 21, "SequenceConstruct", [("a", t), ("b", t)], [("y", seq)], {}),
        ("", 21, "SequenceInsert", [("s", seq), ("a", t)], [("y", seq)], {}),
        ("", 21, "SequenceInsert", [("s", seq), ("a", t), ("p", scalar)], [("y", seq)], {}),
        ("", 21, "SequenceAt", [("s", seq), ("p", scalar)], [("y", t)], {}),
        ("", 21, "SequenceErase", [("s", seq), ("p", scalar)], [("y", seq)], {}),
        ("", 21, "SequenceLength", [("s", seq)], [("y", scalar)], {}),
        ("", 21, "ConcatFromSequence", [("s", seq)], [("y", tensor(f, "n"))], {"axis": 0}),
        ("", 21, "SplitToSequence", [("a", t)], [("y", seq)], {}),
        ("", 21, "SequenceMap", [("s", seq)], [("y", seq)], {"body": body}),
        ("", 21, "Optional", [("a", t)], [("y", opt)], {}),
        ("", 21, "OptionalHasElement", [("o", opt)], [("y", boolean)], {}),
        ("", 21, "OptionalGetElement", [("o", opt)], [("y", t)], {}),
        ("", 1, "BatchNormalization", [(n, t if n != "x" else tensor(f, 1, 2, 3)) for n in ("x", "sc", "b", "m", "v")],
         [("y", tensor(f, 1, 2, 3))], {"consumed_inputs": [0, 0, 0, 0, 0]}),
        ("", 1, "Cast", [("a", t)], [("y", tensor(TensorProto.INT32, 2))], {"to": "INT32"}),
        ("", 1, "Clip", [("a", t)], [("y", t)], {"min": 0.0, "max": 1.0}),
        ("", 1, "DepthToSpace", [("a", tensor(f, 1, 4, 2, 2))], [("y", tensor(f, 1, 1, 4, 4))], {"blocksize": 2}),
        ("", 1, "GlobalLpPool", [("a", image)], [("y", tensor(f, 1, 2, 1, 1))], {}),
        ("", 1, "LpPool", [("a", image)], [("y", tensor(f, 1, 2, 3, 3))], {"kernel_shape": [2, 2]}),
        ("", 1, "MaxRoiPool", [("a", image), ("r", tensor(f, 1, 5))], [("y", tensor(f, 1, 2, 2, 2))],
         {"pooled_shape": [2, 2]}),
        # `axes` given: onnx expands version 13's body without the schema's default for it
        ("", 13, "MeanVarianceNormalization", [("a", image)], [("y", image)], {"axes": [0, 2, 3]}),
        ("", 7, "Multinomial", [("a", row)], [("y", tensor(TensorProto.INT32, 1, 1))], {}),
        ("", 1, "Pad", [("a", t)], [("y", tensor(f, 4))], {"paddings": [1, 1]}),
        ("", 2, "Pad", [("a", t)], [("y", tensor(f, 4))], {"pads": [1, 1]}),
        ("", 1, "RandomNormalLike", [("a", t)], [("y", t)], {}),
        ("", 1, "RandomUniformLike", [("a", t)], [("y", t)], {}),
        ("", 1, "Reshape", [("a", t)], [("y", tensor(f, 1, 2))], {"shape": [1, 2]}),
        ("", 10, "Resize", [("a", row), ("s", t)], [("y", tensor(f, "h", "w"))], {}),
        ("", 11, "Resize", [("a", row), ("roi", tensor(f, 4)), ("s", t)], [("y", tensor(f, "h", "w"))], {}),
        ("", 10, "RoiAlign", [("a", image), ("r", tensor(f, 1, 4)), ("i", tensor(TensorProto.INT64, 1))],
         [("y", tensor(f, 1, 2, 1, 1))], {}),
        ("", 1, "Slice", [("a", t)], [("y", tensor(f, 1))], {"starts": [0], "ends": [1]}),
        ("", 1, "Squeeze", [("a", row)], [("y", t)], {"axes": [0]}),
        ("", 1, "Tile", [("a", t), ("n", t), ("ax", t)], [("y", tensor(f, "n"))], {}),
        ("", 1, "TopK", [("a", t)], [("y", tensor(f, 1)), ("i", tensor(TensorProto.INT64, 1))], {"k": 1}),
        ("", 1, "Unsqueeze", [("a", t)], [("y", row)], {"axes": [0]}),
        ("", 1, "Upsample", [("a", tensor(TensorProto.INT32, 1, 1, 2, 2))], [("y", tensor(TensorProto.INT32, 1, 1, 4, 4))],
         {"height_scale": 2.0, "width_scale": 2.0}),
        ("", 7, "Upsample", [("a", row)], [("y", tensor(f, 2, 4))], {"scales": [2.0, 2.0]}),
        ("", 20, "RegexFullMatch", [("a", tensor(TensorProto.STRING, 2))], [("y", tensor(TensorProto.BOOL, 2))],
         {"pattern": "a"}),
        ("", 19, "If", [("c", boolean)], [("y", t)],
         {"then_branch": branch["then_out"], "else_branch": branch["else_out"]}),
        ("", 19, "Loop", [("m", scalar), ("c", boolean), ("v", t)], [("y", t)], {"body": loop_body}),
        ("", 11, "Scan", [("s", t), ("x", tensor(f, 3, 2))], [("y", t), ("z", tensor(f, 3, 2))],
         {"body": scan_body, "num_scan_inputs": 1}),
        (ml, 1, "ZipMap", [("a", row)], [("y", helper.make_sequence_type_proto(
            helper.make_map_type_proto(TensorProto.INT64, tensor(f))))], {"classlabels_int64s": [1, 2]}),
        (ml, 1, "TreeEnsembleClassifier", [("a", row)],
         [("y", tensor(TensorProto.INT64, 1)), ("z", tensor(f, 1, 1))],
         dict(one_leaf, class_treeids=[0], class_nodeids=[0], class_ids=[0], class_weights=[1.0],
              classlabels_int64s=[0])),
        (ml, 1, "TreeEnsembleRegressor", [("a", row)], [("y", tensor(f, 1, 1))],
         dict(one_leaf, target_treeids=[0], target_nodeids=[0], target_ids=[0], target_weights=[1.0], n_targets=1)),
        (ml, 1, "SVMRegressor", [("a", row)], [("y", tensor(f, 1, 1))],
         {"coefficients": [1.0], "support_vectors": [0.0, 0.0], "n_supports": 1, "rho": [0.0]}),
        (ml, 1, "SVMClassifier", [("a", row)], [("y", tensor(TensorProto.INT64, 1)), ("z", tensor(f, 1, 2))],
         {"classlabels_ints": [0, 1], "coefficients": [1.0, 1.0], "kernel_type": "LINEAR", "rho": [0.0]}),
        (ml, 1, "LinearClassifier", [("a", row)], [("y", tensor(TensorProto.INT64, 1)), ("z", tensor(f, 1, 2))],
         {"coefficients": [1.0, 1.0, 1.0, 1.0], "intercepts": [0.0, 0.0], "classlabels_ints": [0, 1]}),
        (ml, 1, "LinearRegressor", [("a", row)], [("y", tensor(f, 1, 1))], {"coefficients": [1.0, 1.0]}),
        (ml, 1, "DictVectorizer", [("a", string_map)], [("y", tensor(TensorProto.INT64, 1, 1))],
         {"string_vocabulary": ["k"]}),
        (ml, 1, "CastMap", [("a", int_map)], [("y", tensor(f, 1, "n"))], {}),
        (ml, 1, "CategoryMapper", [("a", tensor(TensorProto.STRING, 2))], [("y", tensor(TensorProto.INT64, 2))],
         {"cats_strings": ["a"], "cats_int64s": [1]}),
        (ml, 1, "Scaler", [("a", row)], [("y", row)], {"scale": [1.0], "offset": [0.0]}),
        (ml, 1, "Imputer", [("a", row)], [("y", row)], {"imputed_value_floats": [0.0], "replaced_value_float": 1.0}),
        (ml, 1, "Normalizer", [("a", row)], [("y", row)], {"norm": "MAX"}),
        (ml, 1, "FeatureVectorizer", [("a", row), ("b", row)], [("y", tensor(f, 1, 4))], {"inputdimensions": [2, 2]}),
        (ml, 1, "LabelEncoder", [("a", tensor(TensorProto.STRING, 2))], [("y", tensor(TensorProto.INT64, 2))],
         {"classes_strings": ["a"], "default_int64": -1}),
        ("ai.onnx.preview.training", 1, "Gradient", [("a", t)], [("y", t)], {"xs": ["a"], "y": "a"}),
        (ml, 1, "OneHotEncoder", [("a", tensor(TensorProto.INT64, 2))], [("y", tensor(f, 2, 2))],
         {"cats_int64s": [1, 2]}),
    ]
    # The reductions before their axes became an input (their tests give axes as one).
    for op in ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMean", "ReduceSum", "ReduceSumSquare"):
        cases.append(("", 1, op, [("a", row)], [("y", tensor(f, 1, 1))], {}))
    for domain, version, op, inputs, outputs, attrs in cases:
        node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], domain=domain, **attrs)
        graph = helper.make_graph(
            [node], op, [helper.make_value_info(n, ty) for n, ty in inputs],
            [helper.make_value_info(n, ty) for n, ty in outputs],
        )
        opsets = [helper.make_opsetid(domain, version)] + ([helper.make_opsetid("", 21)] if domain else [])
        model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
        if op == "If":  # the branches read `a` from the outer graph
            model.graph.input.append(helper.make_value_info("a", t))
        yield model


def one_node_models():
    for test in sorted(NODE_TESTS.iterdir()):
        path = test / "model.onnx"
        if path.exists():
            model = onnx.load(path)
            if len(model.graph.node) == 1:
                yield model
    yield from handmade()


def partial(declared):
    """`declared`'s kind without its parts: a tensor of no element type, a sequence or
    optional of no element, a map of no key or value type."""
    kind = declared.WhichOneof("value")
    out = onnx.TypeProto()
    getattr(out, kind).SetInParent()
    return out


def with_untyped(base, name, since, domain, declaration):
    """`base` at version `since` of `domain`, its input `name` made untyped by an If, and
    declared in `value_info` as `declaration` when one is given."""
    model = onnx.ModelProto()
    model.CopyFrom(base)
    for o in model.opset_import:
        if domain_of(o.domain) == domain:
            o.version = since
    kept = [i for i in model.graph.input if i.name != name]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    model.graph.input.append(helper.make_tensor_value_info("c_null", TensorProto.BOOL, []))
    model.graph.node.insert(0, untyped_if(name))
    if declaration is not None:
        model.graph.value_info.append(helper.make_value_info(name, declaration))
    model.opset_import.append(helper.make_opsetid("com.null", 1))
    model.ir_version = max(model.ir_version, 4)
    return model


def said(fails):
    return "depends" if len(fails) == 2 else ("fails" if True in fails else "tolerates")


def declarations(declared):
    """How the input is declared in each measured case, by the table's column: not at all,
    as its kind without its parts, as a type of no kind, as a sequence of a type of no kind."""
    of_no_kind = onnx.TypeProto()
    of_no_kind.sequence_type.elem_type.SetInParent()
    return [None, partial(declared), onnx.TypeProto(), of_no_kind]


def main():
    # `--write DIR` also keeps every judged model, named by its verdict, to hold `onnx check`
    # to them: for f in DIR/*.onnx; do onnx check "$f"; done (not a test: 33,000 models).
    keep = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--write" else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    written = collections.Counter()
    seen = collections.defaultdict(lambda: [set() for _ in range(4)])
    for base in one_node_models():
        node = base.graph.node[0]
        domain = domain_of(node.domain)
        versions = sorted({s.since_version for s in SCHEMAS if s.name == node.op_type and s.domain == domain})
        graph_inputs = {i.name: i.type for i in base.graph.input}
        # Every version, not only those up to the test's opset: a test of one version is
        # often a valid model at a later one, and one node has no neighbours to disagree.
        for since in versions:
            model = onnx.ModelProto()
            model.CopyFrom(base)
            for o in model.opset_import:
                if domain_of(o.domain) == domain:
                    o.version = since
            if verdict(model) != 0:
                continue
            for index, name in enumerate(node.input):
                if name not in graph_inputs:
                    continue
                for column, declaration in enumerate(declarations(graph_inputs[name])):
                    model = with_untyped(base, name, since, domain, declaration)
                    judged = verdict(model)
                    if judged >= 0:
                        seen[(domain, node.op_type, since, index)][column].add(judged == 1)
                        if keep:
                            stem = f"{domain or 'ai.onnx'}-{node.op_type}-{since}-{index}-{'upes'[column]}"
                            kept = written[stem]
                            written[stem] += 1
                            verdict_name = "invalid" if judged else "valid"
                            onnx.save(model, keep / f"{stem}-{kept}-{verdict_name}.onnx")
    lines = [
        "# domain\toperator\tsince version\tinput\tonnx's verdict with no type for it\twith its type declared"
        " without its parts\tdeclared as a type of no kind\tas a sequence of a type of no kind (gen_null_inputs.py)"
    ]
    for key in sorted(seen):
        domain, op, since, index = key
        verdicts = "\t".join(said(fails) if fails else "-" for fails in seen[key])
        lines.append(f"{domain}\t{op}\t{since}\t{index}\t{verdicts}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(lines) - 1} rows -> {OUT}")


if __name__ == "__main__":
    main()
