"""`onnx_text.check`, `infer` and `run` against the `onnx` command, onnx and onnxruntime."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.shape_inference
import onnxruntime
import pytest

import onnx_text
from conftest import CORPUS, FIXTURES

INVALID = FIXTURES / "invalid_models"

EXPECTED_CODES = {
    "cycle": ["undefined-value"],
    "duplicate_definition": ["duplicate-definition"],
    "missing_output": ["output-not-defined"],
    "undefined_value": ["undefined-value"],
    "unknown_operator": ["unknown-op"],
    "used_before_defined": ["nodes-out-of-order", "undefined-value"],
    "wrong_attribute_type": ["attribute-type"],
    "wrong_input_count": ["input-count"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED_CODES))
def test_check_names_each_broken_rule_with_its_code_and_line(name) -> None:
    text = (INVALID / f"{name}.onnxtxt").read_text()
    found = onnx_text.check(text)
    assert sorted(d.code for d in found) == EXPECTED_CODES[name]
    assert all(d.line is not None and d.column is not None and d.path is None for d in found)


def test_check_finds_what_onnx_check_finds_on_every_rule_fixture(onnx_binary) -> None:
    texts = sorted((FIXTURES / "check" / "text").glob("*.onnxtxt")) + sorted(INVALID.glob("*.onnxtxt"))
    assert len(texts) > 140
    for path in texts:
        cli = subprocess.run([onnx_binary, "check", "--json", str(path)], capture_output=True, text=True)
        assert cli.returncode in (0, 1), cli.stderr
        report = json.loads(cli.stdout)
        want = [(d["code"], d["severity"], d["line"], d["column"], d["message"]) for d in report["diagnostics"]]
        got = [(d.code, d.severity, d.line, d.column, d.message) for d in onnx_text.check(path)]
        assert got == want, path.name


def test_check_of_a_binary_model_names_protobuf_paths() -> None:
    text = (INVALID / "wrong_input_count.onnxtxt").read_text()
    binary = onnx_text.parse(text, as_bytes=True)
    found = onnx_text.check(binary)
    assert [d.code for d in found] == ["input-count"]
    assert found[0].path is not None and found[0].path.startswith("graph.node[")
    assert found[0].line is None and found[0].place == found[0].path
    # onnx's checker refuses it too.
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(onnx.ModelProto.FromString(binary), full_check=True)


def test_every_real_model_is_valid() -> None:
    for path in sorted((CORPUS / "real").glob("*.onnx")):
        errors = [d for d in onnx_text.check(path) if d.severity == "error"]
        assert not errors, f"{path.name}: {errors[:3]}"


def test_infer_records_the_shapes_onnxs_inference_records() -> None:
    path = CORPUS / "real" / "cntk_mnist_conv.onnx"
    model = onnx.load(str(path))
    ours = onnx_text.infer(model)
    theirs = onnx.shape_inference.infer_shapes(model)
    assert isinstance(ours, onnx.ModelProto)

    def shapes(m: onnx.ModelProto) -> dict[str, tuple]:
        return {
            v.name: (v.type.tensor_type.elem_type, tuple(d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim))
            for v in m.graph.value_info
        }

    assert shapes(theirs), "onnx infers the intermediate values"
    assert shapes(ours) == shapes(theirs)
    # Bytes in, bytes out.
    assert isinstance(onnx_text.infer(path.read_bytes()), bytes)


RUN = FIXTURES / "run"
RUN_MODELS = ["cntk_mnist_conv", "pt_ts_espcn_float", "keras2onnx_mtcnn_onet", "caffe2_light_inception_v1"]


@pytest.mark.parametrize("name", RUN_MODELS)
def test_run_gives_onnxruntimes_outputs(name) -> None:
    path = CORPUS / "real" / f"{name}.onnx"
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = {}
    for i, declared in enumerate(session.get_inputs()):
        tensor = onnx.load_tensor(str(RUN / name / f"input_{i}.pb"))
        inputs[declared.name] = onnx.numpy_helper.to_array(tensor)
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs)))
    got = onnx_text.run(path, inputs)
    assert list(got) == list(want)
    for output, value in want.items():
        assert got[output].dtype == value.dtype, output
        assert got[output].shape == value.shape, output
        # polygraphy's default tolerances, as `onnx run --compare` uses.
        np.testing.assert_allclose(got[output], value, rtol=1e-5, atol=1e-5, err_msg=f"{name}: {output}")


def test_run_takes_integers_exactly_and_refuses_what_it_cannot_take() -> None:
    model = onnx_text.parse(
        '<ir_version: 8, opset_import: ["" : 17]>\n'
        "g (int64[N] a, int64[N] b) => (int64[N] s, bool[N] m) {\n  s = Add (a, b)\n  m = Greater (a, b)\n}\n"
    )
    a = np.array([2**62, -5, 7], dtype=np.int64)
    b = np.array([1, 5, -7], dtype=np.int64)
    out = onnx_text.run(model, {"a": a, "b": b[::-1].copy()[::-1]})  # a reversed view: not contiguous
    np.testing.assert_array_equal(out["s"], a + b)
    np.testing.assert_array_equal(out["m"], a > b)
    with pytest.raises(onnx_text.OnnxTextError):
        onnx_text.run(model, {"a": a.astype(np.float32), "b": b})
    with pytest.raises(TypeError, match="string tensors"):
        onnx_text.run(model, {"a": np.array(["x"]), "b": b})
