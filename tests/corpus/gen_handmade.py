"""Hand-built models that together set every field of onnx.proto (onnx 1.23.2, IR 14).

Usage: python tests/corpus/gen_handmade.py   (needs `pip install onnx==1.23.2 numpy`)

Writes tests/corpus/handmade/. Deterministic: no randomness without a fixed seed, so running
it twice gives the same bytes. The models are built with onnx.helper and by setting protobuf
fields directly, serialized with plain protobuf (no checker), so some are deliberately odd.
Which case covers what:

* all_fields.onnx     every ModelProto/GraphProto/NodeProto/AttributeProto/ValueInfoProto/
                      FunctionProto/TrainingInfoProto/DeviceConfigurationProto field, sparse
                      initializers (linear and COO indices), quantization annotations,
                      metadata everywhere, every attribute type, ref_attr_name in a function
* tensors.onnx        every data type 1..28 stored raw and typed, segments, doc strings,
                      tensor metadata, NaN payloads, -0.0, infinities, a zero-element tensor
* types.onnx          every TypeProto case with denotations (also on optional, sparse and
                      opaque types), dims with value/param/neither/denotation, scalar and
                      unknown rank
* subgraphs.onnx      If inside Loop inside If (3 levels), Scan, outer-scope references
* non_utf8.onnx       node, value and initializer names that are not valid UTF-8
* external/*.onnx     initializers in side files (weights.bin, sub/w.bin)
* small_cnn.onnx      a small realistic CNN (the README's demo model)
* functions.onnx      calls of model-local functions: attribute references with and without
                      defaults, nested calls, overloads, a function's own opset import, an If
                      inside a body, a shape computed in a body used outside, an undefined one
* values/*.pb         SequenceProto, MapProto (int64 and string keys) and OptionalProto value
                      files, as backend tests store inputs and outputs; the name says the type
"""
from __future__ import annotations

import pathlib
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = pathlib.Path(__file__).resolve().parent / "handmade"


def save(model: onnx.ModelProto, name: str) -> bytes:
    data = model.SerializeToString()
    path = OUT / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def meta(prefix: str) -> list[onnx.StringStringEntryProto]:
    return [onnx.StringStringEntryProto(key=f"{prefix}.k{i}", value=f"v{i}") for i in range(2)]


def opsets() -> list[onnx.OperatorSetIdProto]:
    return [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5), helper.make_opsetid("custom.domain", 1)]


def sparse(name: str, coo: bool) -> onnx.SparseTensorProto:
    values = numpy_helper.from_array(np.array([1.5, -2.0, 3.25], dtype=np.float32), name)
    if coo:
        indices = numpy_helper.from_array(np.array([[0, 1], [1, 0], [2, 3]], dtype=np.int64), name + "_idx")
    else:
        indices = numpy_helper.from_array(np.array([1, 4, 11], dtype=np.int64), name + "_idx")
    return helper.make_sparse_tensor(values, indices, [3, 4])


def all_fields() -> None:
    # Function with every field, including a ref_attr_name in its body.
    body = helper.make_node("LeakyRelu", ["x"], ["y"], name="inner", doc_string="inner doc")
    alpha = onnx.AttributeProto(name="alpha", type=onnx.AttributeProto.FLOAT, ref_attr_name="slope")
    body.attribute.append(alpha)
    fn = helper.make_function(
        "custom.domain", "MyRelu", ["x"], ["y"], [body], [helper.make_opsetid("", 21)],
        attributes=["unused"], attribute_protos=[helper.make_attribute("slope", 0.2)],
        doc_string="function doc", overload="v1",
        value_info=[helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
    )
    fn.metadata_props.extend(meta("fn"))

    sub = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["sub_out"])], "sub_graph", [],
        [helper.make_tensor_value_info("sub_out", TensorProto.FLOAT, None)],
    )
    sub2 = helper.make_graph([], "sub_graph2", [], [])
    tensor_attr = numpy_helper.from_array(np.array([1, 2, 3], dtype=np.int64), "t_attr")
    attrs = [
        helper.make_attribute("f", 0.5, doc_string="float attr doc"),
        helper.make_attribute("i", -7),
        helper.make_attribute("s", b"bytes \x00 value"),
        helper.make_attribute("t", tensor_attr),
        helper.make_attribute("g", sub),
        helper.make_attribute("sp", sparse("sp_attr", coo=False)),
        helper.make_attribute("tp", helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", 3])),
        helper.make_attribute("fs", [1.0, -0.0, float("inf")]),
        helper.make_attribute("is", [1, -2, 2**40]),
        helper.make_attribute("ss", [b"a", b"", b"c"]),
        helper.make_attribute("ts", [tensor_attr, numpy_helper.from_array(np.array([1.0], dtype=np.float32), "t2")]),
        helper.make_attribute("gs", [sub2, sub2]),
        helper.make_attribute("sps", [sparse("sp1", coo=True), sparse("sp2", coo=False)]),
        helper.make_attribute("tps", [helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, [])),
                                      helper.make_tensor_type_proto(TensorProto.BOOL, None)]),
    ]
    node = helper.make_node("Custom", ["X", "", "W"], ["Y", ""], name="custom_node", domain="custom.domain",
                            doc_string="node doc", overload="ov")
    node.attribute.extend(attrs)
    node.metadata_props.extend(meta("node"))
    cfg = onnx.NodeDeviceConfigurationProto(configuration_id="cfg0", pipeline_stage=2)
    spec = cfg.sharding_spec.add(tensor_name="X", device=[0, 1])
    spec.index_to_device_group_map.add(key=0, value=[0, 1])
    dim = spec.sharded_dim.add(axis=0)
    dim.simple_sharding.add(dim_value=8, num_shards=2)
    dim.simple_sharding.add(dim_param="N", num_shards=4)
    node.device_configurations.append(cfg)
    call = helper.make_node("MyRelu", ["Y"], ["Z"], domain="custom.domain", overload="v1")

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3], doc_string="input doc")
    x.metadata_props.extend(meta("x"))
    w = numpy_helper.from_array(np.ones((3,), dtype=np.float32), "W")
    graph = helper.make_graph(
        [node, call], "all_fields", [x], [helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["N", 3])],
        [w], doc_string="graph doc",
        value_info=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3])],
        sparse_initializer=[sparse("S", coo=True)],
    )
    ann = graph.quantization_annotation.add(tensor_name="Y")
    ann.quant_parameter_tensor_names.add(key="SCALE_TENSOR", value="W")
    graph.metadata_props.extend(meta("graph"))

    init_graph = helper.make_graph(
        [helper.make_node("Constant", [], ["W_init"], value=numpy_helper.from_array(np.zeros(3, np.float32)))],
        "training_init", [], [helper.make_tensor_value_info("W_init", TensorProto.FLOAT, [3])])
    algo_graph = helper.make_graph(
        [helper.make_node("Add", ["W", "W"], ["W_new"])], "training_algo", [],
        [helper.make_tensor_value_info("W_new", TensorProto.FLOAT, [3])])
    training = onnx.TrainingInfoProto(initialization=init_graph, algorithm=algo_graph)
    training.initialization_binding.add(key="W", value="W_init")
    training.update_binding.add(key="W", value="W_new")

    model = helper.make_model(graph, opset_imports=opsets(), producer_name="gen_handmade",
                              producer_version="1.0", domain="org.example", model_version=3,
                              doc_string="model doc", functions=[fn])
    model.ir_version = 14
    model.metadata_props.extend(meta("model"))
    model.training_info.append(training)
    model.configuration.add(name="cfg0", num_devices=2, device=["cpu:0", "cpu:1"])
    save(model, "all_fields.onnx")


def tensors() -> None:
    inits = []
    n = 6
    for code in range(1, 29):
        name = TensorProto.DataType.Name(code).lower()
        if code == TensorProto.STRING:
            t = helper.make_tensor(name, code, [2], [b"ab", b"\xc3\xa9"])
            inits.append(t)
            continue
        if code in (TensorProto.COMPLEX64, TensorProto.COMPLEX128):
            vals = [complex(i, -i) for i in range(n)]
        elif code == TensorProto.BOOL:
            vals = [i % 2 == 0 for i in range(n)]
        elif code in (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16):
            vals = [0.5, -0.0, float("inf"), float("-inf"), float("nan"), 1e-3]
        elif code in (TensorProto.UINT2, TensorProto.UINT4, TensorProto.UINT8, TensorProto.UINT16,
                      TensorProto.UINT32, TensorProto.UINT64):
            vals = [i % 2 for i in range(n)]
        elif code in (TensorProto.INT2, TensorProto.INT4, TensorProto.INT8, TensorProto.INT16,
                      TensorProto.INT32, TensorProto.INT64):
            vals = [(i % 2) - 1 for i in range(n)]
        else:  # float8, float4, float6, float8e8m0
            vals = [0.5, 1.0, 2.0, 0.5, 1.0, 4.0]
        for raw in (False, True):
            try:
                if raw:
                    typed = helper.make_tensor("tmp", code, [n], vals)
                    arr = numpy_helper.to_array(typed)
                    t = numpy_helper.from_array(arr, f"{name}_raw")
                    if t.data_type != code:  # numpy_helper fell back to another type
                        t = helper.make_tensor(f"{name}_raw", code, [n], vals)
                        t.raw_data = numpy_helper.to_array(t).tobytes()
                        del t.int32_data[:]
                else:
                    t = helper.make_tensor(f"{name}_typed", code, [n], vals)
            except Exception as exc:  # keep going; the rest still covers the field
                print(f"note: {name} raw={raw}: {exc}")
                continue
            inits.append(t)
    # NaN payloads and signed zeros, bit for bit.
    payloads = struct.pack("<4I", 0x7FC00001, 0xFFC00002, 0x80000000, 0x7F800000)
    inits.append(helper.make_tensor("nan_payloads", TensorProto.FLOAT, [4], payloads, raw=True))
    inits.append(helper.make_tensor("empty", TensorProto.FLOAT, [0, 3], []))
    seg = helper.make_tensor("segmented", TensorProto.INT64, [2], [1, 2])
    seg.segment.begin = 0
    seg.segment.end = 2
    seg.doc_string = "tensor doc"
    seg.metadata_props.extend(meta("tensor"))
    inits.append(seg)
    graph = helper.make_graph([], "tensors", [], [], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 14
    save(model, "tensors.onnx")


def types() -> None:
    def denoted(tp: onnx.TypeProto, d: str) -> onnx.TypeProto:
        tp.denotation = d
        return tp

    t = helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", 3, None])
    t.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    t.tensor_type.shape.dim[2].ClearField("dim_value")
    inputs = [
        helper.make_value_info("tensor", denoted(t, "TENSOR")),
        helper.make_value_info("scalar", helper.make_tensor_type_proto(TensorProto.INT64, [])),
        helper.make_value_info("unknown_rank", helper.make_tensor_type_proto(TensorProto.INT64, None)),
        helper.make_value_info("seq", denoted(helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(TensorProto.FLOAT, ["M"])), "SEQ")),
        helper.make_value_info("map", denoted(helper.make_map_type_proto(
            TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, [])), "MAP")),
        helper.make_value_info("optional", denoted(helper.make_optional_type_proto(
            helper.make_tensor_type_proto(TensorProto.FLOAT, [2])), "OPT")),
        helper.make_value_info("sparse", denoted(helper.make_sparse_tensor_type_proto(
            TensorProto.FLOAT, [4, "K"]), "SPARSE")),
    ]
    opaque = onnx.TypeProto()
    opaque.opaque_type.domain = "com.example"
    opaque.opaque_type.name = "Handle"
    opaque.denotation = "OPAQUE"
    inputs.append(helper.make_value_info("opaque", opaque))
    untyped = onnx.ValueInfoProto(name="untyped")
    graph = helper.make_graph([], "types", inputs + [untyped], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    save(model, "types.onnx")


def subgraphs() -> None:
    vi = lambda name, shape=None: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    innermost_then = helper.make_graph([helper.make_node("Add", ["x", "outer_bias"], ["r1"])], "l3_then", [], [vi("r1")])
    innermost_else = helper.make_graph([helper.make_node("Sub", ["x", "outer_bias"], ["r2"])], "l3_else", [], [vi("r2")])
    loop_body = helper.make_graph(
        [helper.make_node("If", ["cond_in"], ["x_next"], then_branch=innermost_then, else_branch=innermost_else),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "l2_loop_body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), vi("x_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), vi("x_next")],
    )
    then_g = helper.make_graph(
        [helper.make_node("Loop", ["trip", "cond", "x"], ["looped"], body=loop_body)], "l1_then", [], [vi("looped")])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["same"])], "l1_else", [], [vi("same")])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["acc", "elem"], ["acc_out"]), helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "scan_body", [vi("acc", [2]), vi("elem", [2])], [vi("acc_out", [2]), vi("scan_out", [2])])
    nodes = [
        helper.make_node("If", ["cond"], ["branch"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Scan", ["x", "seq"], ["acc_final", "scanned"], body=scan_body, num_scan_inputs=1),
    ]
    graph = helper.make_graph(
        nodes, "subgraphs",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("trip", TensorProto.INT64, []), vi("x", [2]), vi("seq", [3, 2])],
        [vi("branch"), vi("acc_final", [2]), vi("scanned", [3, 2])],
        [numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32), "outer_bias")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    save(model, "subgraphs.onnx")


def non_utf8() -> None:
    # Placeholders of the same length as the bytes that replace them keep every length prefix.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["IN_A"], ["MID_"], name="NODE"),
         helper.make_node("Add", ["MID_", "WGT_"], ["OUT_"])],
        "non_utf8",
        [helper.make_tensor_value_info("IN_A", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("OUT_", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float32), "WGT_")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    data = model.SerializeToString()
    for old, new in [(b"IN_A", b"in\xff\xfe"), (b"MID_", b"m\xc3(d"), (b"WGT_", b"w\x80gt"),
                     (b"OUT_", b"o\xffut"), (b"NODE", b"n\xfe\xfee")]:
        assert data.count(old) >= 1
        data = data.replace(old, new)
    (OUT / "non_utf8.onnx").write_bytes(data)


def external() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([1, -2, 3], dtype=np.int64)
    blob = a.tobytes() + b"\x00" * 4 + b.tobytes()
    (OUT / "external").mkdir(parents=True, exist_ok=True)
    (OUT / "external" / "weights.bin").write_bytes(blob)

    def ext(name: str, dtype: int, dims: list[int], location: str, offset: int, length: int) -> TensorProto:
        t = TensorProto(name=name, data_type=dtype, dims=dims, data_location=TensorProto.EXTERNAL)
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
            t.external_data.add(key=k, value=v)
        return t

    inits = [ext("A", TensorProto.FLOAT, [3, 4], "weights.bin", 0, a.nbytes),
             ext("B", TensorProto.INT64, [3], "weights.bin", a.nbytes + 4, b.nbytes)]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "A"], ["Y"])], "external",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    save(model, "external/model.onnx")

    (OUT / "external" / "sub").mkdir(exist_ok=True)
    c = np.array([0.5, 0.25], dtype=np.float32)
    (OUT / "external" / "sub" / "w.bin").write_bytes(c.tobytes())
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "C"], ["Y"])], "external_sub",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
        [ext("C", TensorProto.FLOAT, [2], "sub/w.bin", 0, c.nbytes)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    save(model, "external/subdir_model.onnx")


def small_cnn() -> None:
    rng = np.random.default_rng(7)
    w = lambda name, *shape: numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)
    inits = [w("conv1.weight", 8, 3, 3, 3), w("conv1.bias", 8), w("conv2.weight", 16, 8, 3, 3), w("conv2.bias", 16),
             w("fc.weight", 10, 16 * 8 * 8), w("fc.bias", 10),
             numpy_helper.from_array(np.array([0, -1], dtype=np.int64), "flat_shape")]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p2", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="gen_handmade")
    model.ir_version = 10
    save(model, "small_cnn.onnx")


def values() -> None:
    from onnx import numpy_helper as nh

    out = OUT / "values"
    out.mkdir(parents=True, exist_ok=True)
    seq = nh.from_list([np.array([1, 2], dtype=np.int64), np.array([3], dtype=np.int64)], "seq")
    (out / "sequence_tensors.pb").write_bytes(seq.SerializeToString())
    nested = onnx.SequenceProto(name="nested", elem_type=onnx.SequenceProto.SEQUENCE)
    nested.sequence_values.append(seq)
    (out / "sequence_nested.pb").write_bytes(nested.SerializeToString())
    int_map = nh.from_dict({1: np.array([1.0], dtype=np.float32), 7: np.array([2.0], dtype=np.float32)}, "int_map")
    (out / "map_int64_keys.pb").write_bytes(int_map.SerializeToString())
    str_map = onnx.MapProto(name="str_map", key_type=TensorProto.STRING, string_keys=[b"a", b"b"])
    str_map.values.CopyFrom(nh.from_list([np.array([1], dtype=np.int64), np.array([2], dtype=np.int64)], "vals"))
    (out / "map_string_keys.pb").write_bytes(str_map.SerializeToString())
    opt = nh.from_optional(np.array([1.0, 2.0], dtype=np.float32), "opt")
    (out / "optional_tensor.pb").write_bytes(opt.SerializeToString())
    empty = onnx.OptionalProto(name="empty", elem_type=onnx.OptionalProto.UNDEFINED)
    (out / "optional_empty.pb").write_bytes(empty.SerializeToString())
    with_map = onnx.OptionalProto(name="opt_map", elem_type=onnx.OptionalProto.MAP, map_value=int_map)
    (out / "optional_map.pb").write_bytes(with_map.SerializeToString())


def functions() -> None:
    f = lambda name, shape=None: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    local = [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)]

    def function(name, inputs, outputs, nodes, attributes=(), defaults=(), overload="", imports=local):
        fn = helper.make_function("local", name, inputs, outputs, nodes, imports, list(attributes))
        fn.attribute_proto.extend(defaults)
        fn.overload = overload
        return fn

    def with_ref(node, name, ref_name, kind):
        attr = helper.make_attribute_ref(name, kind)
        attr.ref_attr_name = ref_name
        node.attribute.append(attr)
        return node

    scale = function(
        "Scale", ["x"], ["y"],
        [with_ref(helper.make_node("Constant", [], ["a"]), "value_float", "alpha", onnx.AttributeProto.FLOAT),
         helper.make_node("Mul", ["x", "a"], ["y"])],
        defaults=[helper.make_attribute("alpha", 2.0)])
    flatten = function(
        "Flatten2", ["x"], ["y"],
        [with_ref(helper.make_node("Flatten", ["x"], ["y"]), "axis", "axis", onnx.AttributeProto.INT)],
        attributes=["axis"])
    shape_of = function("ShapeOf", ["x"], ["s"], [helper.make_node("Shape", ["x"], ["s"])])
    block = function(
        "Block", ["x"], ["y"],
        [with_ref(helper.make_node("Scale", ["x"], ["t"], domain="local"), "alpha", "gain", onnx.AttributeProto.FLOAT),
         helper.make_node("Relu", ["t"], ["y"])],
        attributes=["gain"], imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    pick_int = function("Pick", ["x"], ["y"], [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)],
                        overload="as_int")
    pick_shape = function("Pick", ["x"], ["y"], [helper.make_node("Shape", ["x"], ["y"])], overload="as_shape")
    pair = function("Pair", ["x", "bias"], ["sum", "first"],
                    [helper.make_node("Add", ["x", "bias"], ["sum"]), helper.make_node("Identity", ["x"], ["first"])])
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["kept"])], "then", [], [f("kept")])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["negated"])], "else", [], [f("negated")])
    choose = function("Choose", ["c", "x"], ["y"],
                      [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)])
    call = lambda name, inputs, outputs, overload="", **attrs: helper.make_node(
        name, inputs, outputs, domain="local", overload=overload, **attrs)
    nodes = [
        call("Scale", ["X"], ["scaled3"], alpha=3.0),
        call("Scale", ["X"], ["scaled2"]),
        call("Flatten2", ["X"], ["flat"], axis=2),
        call("ShapeOf", ["X"], ["shape"]),
        helper.make_node("Reshape", ["flat", "shape"], ["unflat"]),
        call("Block", ["X"], ["blocked"], gain=0.5),
        call("Pick", ["X"], ["as_int"], overload="as_int"),
        call("Pick", ["X"], ["as_shape"], overload="as_shape"),
        call("Pair", ["X", "bias"], ["sum", "first"]),
        call("Choose", ["c", "X"], ["chosen"]),
        call("Undefined", ["X"], ["unknown"]),
    ]
    graph = helper.make_graph(
        nodes, "functions",
        [f("X", ["N", 3, 4]), f("bias", [4]), helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [f("unflat", ["N", 3, 4]), f("blocked", ["N", 3, 4]), f("sum", ["N", 3, 4]), f("chosen", ["N", 3, 4])],
    )
    model = helper.make_model(graph, opset_imports=local,
                              functions=[scale, flatten, shape_of, block, pick_int, pick_shape, pair, choose])
    model.ir_version = 10
    save(model, "functions.onnx")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for build in (all_fields, tensors, types, subgraphs, non_utf8, external, small_cnn, functions, values):
        build()
    # Protobuf itself must read every file back to the same bytes (non-UTF-8 names aside,
    # which Python's protobuf refuses to decode).
    for path in sorted(OUT.rglob("*.onnx")):
        data = path.read_bytes()
        try:
            again = onnx.ModelProto.FromString(data).SerializeToString()
        except Exception as exc:
            print(f"{path.name}: python protobuf cannot decode it ({type(exc).__name__}); expected for non_utf8.onnx")
            continue
        assert again == data, f"{path.name} is not canonical protobuf"
    print("wrote", ", ".join(str(p.relative_to(OUT)) for p in sorted(OUT.rglob("*.onnx"))))


if __name__ == "__main__":
    main()
