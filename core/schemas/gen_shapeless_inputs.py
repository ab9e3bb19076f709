"""Models whose one input has no shape to onnx's inference, and what onnx infers then.

Many of onnx's inference functions return before giving any output shape when an input
they read has no shape (`hasNInputShapes`), where ours would still derive part of one; onnx's
full check then sees no contradiction with a declared output, so neither may we call one
an error. This script measures it. Each one-node model of onnx's backend node tests
(tests/corpus/node) that onnx accepts has, in turn, each of its tensor inputs made by a
Reshape to a target onnx's inference does not read (a graph input of unknown length), so
that input has its element type and no shape; each tensor output is declared one axis
longer than it is, so any shape onnx infers for it contradicts the declaration.

It writes:
- tests/fixtures/check/shapeless_inputs/NODE_TEST--INPUT.onnx, each such model (onnx's
  verdict on them goes into verdicts.tsv through gen_verdicts.py, which
  tests/tests/check_verdicts.rs holds `onnx check` to);
- core/schemas/shapeless_inputs.tsv: per operator version, input and output, whether onnx's
  inference gives that output `none` shape when that input has none, gives it a `shape`,
  or `depends` (the node tests of that version disagree).
  core/src/infer/shapeless.rs reads it for the inference that judges declarations as onnx.

Run (from the repository root; needs onnx==1.23.2 in .venv), then gen_verdicts.py:
  .venv/bin/python core/schemas/gen_shapeless_inputs.py
"""

import collections
import copy
import pathlib
import shutil

import onnx
import onnx.defs
import onnx.shape_inference
from gen_null_inputs import verdict  # 0 valid, 1 invalid, negative: onnx crashed
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
NODE_TESTS = ROOT / "tests/corpus/node"
MODELS = ROOT / "tests/fixtures/check/shapeless_inputs"
TABLE = ROOT / "core/schemas/shapeless_inputs.tsv"


def fixed_shape(value) -> list[int] | None:
    t = value.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = t.tensor_type.shape.dim
    if not dims or any(not d.HasField("dim_value") for d in dims):
        return None
    return [d.dim_value for d in dims]


def shapeless(base, i: int):
    """`base` with graph input `i` made by a Reshape onnx cannot read the target of."""
    model = copy.deepcopy(base)
    graph = model.graph
    name = graph.input[i].name
    count = 1
    for d in fixed_shape(graph.input[i]):
        count *= d
    flat = onnx.ValueInfoProto()
    flat.CopyFrom(graph.input[i])
    flat.name = f"{name}__flat"
    del flat.type.tensor_type.shape.dim[:]
    flat.type.tensor_type.shape.dim.add().dim_value = count
    target = helper.make_tensor_value_info(f"{name}__target", TensorProto.INT64, ["k"])
    graph.input.remove(graph.input[i])
    graph.input.insert(i, flat)
    graph.input.append(target)
    graph.node.insert(0, helper.make_node("Reshape", [flat.name, target.name], [name]))
    return model


def outputs_onnx_shapes(model) -> list[bool] | None:
    """For each output of the node, whether onnx's inference gives it a shape; None when
    the inference fails the node (Resize with sizes of unknown length, for one), which
    says nothing of the shapes it gives."""
    probe = copy.deepcopy(model)
    for output in probe.graph.output:
        if output.type.HasField("tensor_type"):
            output.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(probe, strict_mode=True).graph
    except onnx.shape_inference.InferenceError:
        return None
    shaped = {v.name for v in list(inferred.output) + list(inferred.value_info) if v.type.tensor_type.HasField("shape")}
    return [name in shaped for name in inferred.node[-1].output]


def main() -> None:
    if MODELS.exists():
        shutil.rmtree(MODELS)
    MODELS.mkdir(parents=True)
    said = collections.defaultdict(set)
    written = 0
    for test in sorted(NODE_TESTS.iterdir()):
        path = test / "model.onnx"
        if not path.exists():
            continue
        base = onnx.load(path)
        if len(base.graph.node) != 1 or verdict(base) != 0:
            continue
        node = base.graph.node[0]
        opsets = {o.domain or "": o.version for o in base.opset_import}
        domain = "" if node.domain in ("", "ai.onnx") else node.domain
        try:
            since = onnx.defs.get_schema(node.op_type, opsets.get(domain, 0), domain).since_version
        except Exception:  # noqa: BLE001 - no schema: nothing to measure
            continue
        # Reshape exists from opset 5 on; its target is read as an input from then.
        if opsets.get("", 0) < 5:
            continue
        for i, value in enumerate(base.graph.input):
            if fixed_shape(value) is None or value.name not in node.input:
                continue
            model = shapeless(base, i)
            for output in model.graph.output:
                if fixed_shape(output) is not None:
                    output.type.tensor_type.shape.dim.add().dim_value = 1
            if verdict(model) < 0:
                continue
            onnx.save(model, MODELS / f"{test.name}--{i}.onnx")
            written += 1
            position = list(node.input).index(value.name)
            for output, shaped in enumerate(outputs_onnx_shapes(model) or []):
                said[(domain, node.op_type, since, position, output)].add("shape" if shaped else "none")
    rows = [
        "# domain\top\tversion\tinput\toutput\twhat onnx's inference gives that output when that input has no "
        "shape (gen_shapeless_inputs.py): none, a shape, or depends (the node tests disagree)"
    ]
    for key, seen in sorted(said.items()):
        rows.append("\t".join(map(str, key)) + f"\t{'depends' if len(seen) > 1 else next(iter(seen))}")
    TABLE.write_text("\n".join(rows) + "\n")
    print(f"{written} models -> {MODELS}; {len(said)} operator inputs and outputs -> {TABLE}")


if __name__ == "__main__":
    main()
