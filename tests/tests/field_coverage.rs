//! The hand-built corpus sets every field of onnx.proto somewhere, so the byte-for-byte
//! round trip over the corpus covers every field. This walks the decoded models and lists
//! each `Message.field` it finds set; a field no model sets fails the test.

use std::collections::BTreeSet;

use bytes::Bytes;
use onnx_core::binary;
use onnx_core::ir::*;
use onnx_tests::{corpus_dir, files_with_suffix};

#[derive(Default)]
struct Seen(BTreeSet<&'static str>);

impl Seen {
    fn mark(&mut self, field: &'static str, set: bool) {
        if set {
            self.0.insert(field);
        }
    }
}

fn pairs(seen: &mut Seen, field: &'static str, list: &[StringPair]) {
    seen.mark(field, !list.is_empty());
    for p in list {
        seen.mark("StringStringEntryProto.key", p.key.is_some());
        seen.mark("StringStringEntryProto.value", p.value.is_some());
    }
}

fn ty(seen: &mut Seen, t: &Type) {
    seen.mark("TypeProto.denotation", t.denotation.is_some());
    let tensor = |seen: &mut Seen, t: &TensorType, kind: &'static str| {
        seen.mark(kind, true);
        seen.mark("TypeProto.Tensor.elem_type", t.elem_type.is_some());
        if let Some(shape) = &t.shape {
            seen.mark("TypeProto.Tensor.shape", true);
            for d in &shape.dims {
                seen.mark("Dimension.dim_value", matches!(d.value, Some(DimValue::Value(_))));
                seen.mark("Dimension.dim_param", matches!(d.value, Some(DimValue::Param(_))));
                seen.mark("Dimension.unknown", d.value.is_none());
                seen.mark("Dimension.denotation", d.denotation.is_some());
            }
        }
    };
    match &t.value {
        Some(TypeValue::Tensor(t)) => tensor(seen, t, "TypeProto.tensor_type"),
        Some(TypeValue::SparseTensor(t)) => tensor(seen, t, "TypeProto.sparse_tensor_type"),
        Some(TypeValue::Sequence(e)) => {
            seen.mark("TypeProto.sequence_type", true);
            e.iter().for_each(|e| ty(seen, e));
        }
        Some(TypeValue::Optional(e)) => {
            seen.mark("TypeProto.optional_type", true);
            seen.mark("TypeProto.optional_type+denotation", t.denotation.is_some());
            e.iter().for_each(|e| ty(seen, e));
        }
        Some(TypeValue::Map { key_type, value_type }) => {
            seen.mark("TypeProto.map_type", key_type.is_some());
            value_type.iter().for_each(|e| ty(seen, e));
        }
        Some(TypeValue::Opaque { domain, name }) => {
            seen.mark("TypeProto.opaque_type", domain.is_some() && name.is_some());
            seen.mark("TypeProto.opaque_type+denotation", t.denotation.is_some());
        }
        None => {}
    }
    if let Some(TypeValue::SparseTensor(_)) = &t.value {
        seen.mark("TypeProto.sparse_tensor_type+denotation", t.denotation.is_some());
    }
}

fn value_info(seen: &mut Seen, v: &ValueInfo) {
    seen.mark("ValueInfoProto.name", v.name.is_some());
    seen.mark("ValueInfoProto.type", v.ty.is_some());
    seen.mark("ValueInfoProto.doc_string", v.doc_string.is_some());
    pairs(seen, "ValueInfoProto.metadata_props", &v.metadata_props);
    v.ty.iter().for_each(|t| ty(seen, t));
}

fn tensor(seen: &mut Seen, t: &Tensor) {
    seen.mark("TensorProto.dims", !t.dims.is_empty());
    seen.mark("TensorProto.segment", t.segment.is_some());
    seen.mark("TensorProto.float_data", !t.float_data.is_empty());
    seen.mark("TensorProto.int32_data", !t.int32_data.is_empty());
    seen.mark("TensorProto.string_data", !t.string_data.is_empty());
    seen.mark("TensorProto.int64_data", !t.int64_data.is_empty());
    seen.mark("TensorProto.name", t.name.is_some());
    seen.mark("TensorProto.doc_string", t.doc_string.is_some());
    seen.mark("TensorProto.raw_data", t.raw_data.is_some());
    seen.mark("TensorProto.data_location", t.data_location.is_some());
    seen.mark("TensorProto.double_data", !t.double_data.is_empty());
    seen.mark("TensorProto.uint64_data", !t.uint64_data.is_empty());
    pairs(seen, "TensorProto.external_data", &t.external_data);
    pairs(seen, "TensorProto.metadata_props", &t.metadata_props);
    if let Some(dt) = t.elem_type() {
        // One mark per data type and storage, so every type is seen raw and typed.
        let storage = if t.raw_data.is_some() { "raw" } else { "typed" };
        seen.0.insert(Box::leak(format!("TensorProto.data_type={}/{storage}", dt.name()).into_boxed_str()));
    }
}

fn node(seen: &mut Seen, m: &Model, n: &Node) {
    seen.mark("NodeProto.input", !n.inputs.is_empty());
    seen.mark("NodeProto.input(empty)", n.inputs.iter().any(Str::is_empty));
    seen.mark("NodeProto.output", !n.outputs.is_empty());
    seen.mark("NodeProto.name", n.name.is_some());
    seen.mark("NodeProto.op_type", n.op_type.is_some());
    seen.mark("NodeProto.domain", n.domain.is_some());
    seen.mark("NodeProto.overload", n.overload().is_some());
    seen.mark("NodeProto.doc_string", n.doc_string().is_some());
    pairs(seen, "NodeProto.metadata_props", n.metadata_props());
    seen.mark("NodeProto.device_configurations", !n.device_configurations().is_empty());
    for c in n.device_configurations() {
        seen.mark("NodeDeviceConfigurationProto.configuration_id", c.configuration_id.is_some());
        seen.mark("NodeDeviceConfigurationProto.pipeline_stage", c.pipeline_stage.is_some());
        for s in &c.sharding_spec {
            seen.mark("ShardingSpecProto.tensor_name", s.tensor_name.is_some());
            seen.mark("ShardingSpecProto.device", !s.device.is_empty());
            seen.mark(
                "IntIntListEntryProto",
                s.index_to_device_group_map.iter().any(|e| e.key.is_some() && !e.value.is_empty()),
            );
            for d in &s.sharded_dim {
                seen.mark("ShardedDimProto.axis", d.axis.is_some());
                for sd in &d.simple_sharding {
                    seen.mark("SimpleShardedDimProto.dim_value", matches!(sd.dim, Some(DimValue::Value(_))));
                    seen.mark("SimpleShardedDimProto.dim_param", matches!(sd.dim, Some(DimValue::Param(_))));
                    seen.mark("SimpleShardedDimProto.num_shards", sd.num_shards.is_some());
                }
            }
        }
    }
    for a in &n.attributes {
        attribute(seen, m, a);
    }
}

fn attribute(seen: &mut Seen, m: &Model, a: &Attribute) {
    seen.mark("AttributeProto.name", a.name.is_some());
    seen.mark("AttributeProto.ref_attr_name", a.ref_attr_name.is_some());
    seen.mark("AttributeProto.doc_string", a.doc_string.is_some());
    if let Some(t) = a.attribute_type() {
        seen.0.insert(Box::leak(format!("AttributeProto.type={}", t.name()).into_boxed_str()));
    }
    seen.mark("AttributeProto.f", a.f.is_some());
    seen.mark("AttributeProto.i", a.i.is_some());
    seen.mark("AttributeProto.s", a.s.is_some());
    seen.mark("AttributeProto.t", a.t.is_some());
    seen.mark("AttributeProto.g", a.g.is_some());
    seen.mark("AttributeProto.sparse_tensor", a.sparse_tensor.is_some());
    seen.mark("AttributeProto.tp", a.tp.is_some());
    seen.mark("AttributeProto.floats", !a.floats.is_empty());
    seen.mark("AttributeProto.ints", !a.ints.is_empty());
    seen.mark("AttributeProto.strings", !a.strings.is_empty());
    seen.mark("AttributeProto.tensors", !a.tensors.is_empty());
    seen.mark("AttributeProto.graphs", !a.graphs.is_empty());
    seen.mark("AttributeProto.sparse_tensors", !a.sparse_tensors.is_empty());
    seen.mark("AttributeProto.type_protos", !a.type_protos.is_empty());
    a.tp.iter().chain(&a.type_protos).for_each(|t| ty(seen, t));
    a.sparse_tensor.iter().chain(&a.sparse_tensors).for_each(|s| sparse(seen, m, s));
}

fn sparse(seen: &mut Seen, m: &Model, s: &SparseTensor) {
    seen.mark("SparseTensorProto.values", s.values.is_some());
    seen.mark("SparseTensorProto.dims", !s.dims.is_empty());
    if let Some(i) = s.indices {
        let rank = m.tensors[i].dims.len();
        seen.mark("SparseTensorProto.indices(linear)", rank == 1);
        seen.mark("SparseTensorProto.indices(coo)", rank == 2);
    }
}

fn graph(seen: &mut Seen, m: &Model, g: &Graph) {
    seen.mark("GraphProto.node", !g.nodes.is_empty());
    seen.mark("GraphProto.name", g.name.is_some());
    seen.mark("GraphProto.initializer", !g.initializers.is_empty());
    seen.mark("GraphProto.sparse_initializer", !g.sparse_initializers.is_empty());
    seen.mark("GraphProto.doc_string", g.doc_string.is_some());
    seen.mark("GraphProto.input", !g.inputs.is_empty());
    seen.mark("GraphProto.output", !g.outputs.is_empty());
    seen.mark("GraphProto.value_info", !g.value_info.is_empty());
    seen.mark("GraphProto.quantization_annotation", !g.quantization_annotation.is_empty());
    for a in &g.quantization_annotation {
        seen.mark("TensorAnnotation.tensor_name", a.tensor_name.is_some());
        pairs(seen, "TensorAnnotation.quant_parameter_tensor_names", &a.quant_parameter_tensor_names);
    }
    pairs(seen, "GraphProto.metadata_props", &g.metadata_props);
    g.inputs.iter().chain(&g.outputs).chain(&g.value_info).for_each(|v| value_info(seen, v));
    g.sparse_initializers.iter().for_each(|s| sparse(seen, m, s));
    for &n in &g.nodes {
        node(seen, m, &m.nodes[n]);
    }
}

fn model(seen: &mut Seen, m: &Model) {
    seen.mark("ModelProto.ir_version", m.ir_version.is_some());
    seen.mark("ModelProto.opset_import", !m.opset_import.is_empty());
    seen.mark("ModelProto.producer_name", m.producer_name.is_some());
    seen.mark("ModelProto.producer_version", m.producer_version.is_some());
    seen.mark("ModelProto.domain", m.domain.is_some());
    seen.mark("ModelProto.model_version", m.model_version.is_some());
    seen.mark("ModelProto.doc_string", m.doc_string.is_some());
    seen.mark("ModelProto.graph", m.graph.is_some());
    pairs(seen, "ModelProto.metadata_props", &m.metadata_props);
    seen.mark("ModelProto.functions", !m.functions.is_empty());
    seen.mark("ModelProto.training_info", !m.training_info.is_empty());
    for t in &m.training_info {
        seen.mark("TrainingInfoProto.initialization", t.initialization.is_some());
        seen.mark("TrainingInfoProto.algorithm", t.algorithm.is_some());
        pairs(seen, "TrainingInfoProto.initialization_binding", &t.initialization_binding);
        pairs(seen, "TrainingInfoProto.update_binding", &t.update_binding);
    }
    seen.mark("ModelProto.configuration", !m.configuration.is_empty());
    for c in &m.configuration {
        seen.mark("DeviceConfigurationProto.name", c.name.is_some());
        seen.mark("DeviceConfigurationProto.num_devices", c.num_devices.is_some());
        seen.mark("DeviceConfigurationProto.device", !c.device.is_empty());
    }
    for o in &m.opset_import {
        seen.mark("OperatorSetIdProto.domain", o.domain.is_some());
        seen.mark("OperatorSetIdProto.version", o.version.is_some());
    }
    for (_, f) in m.function_store.iter() {
        seen.mark("FunctionProto.name", f.name.is_some());
        seen.mark("FunctionProto.input", !f.inputs.is_empty());
        seen.mark("FunctionProto.output", !f.outputs.is_empty());
        seen.mark("FunctionProto.attribute", !f.attributes.is_empty());
        seen.mark("FunctionProto.attribute_proto", !f.attribute_protos.is_empty());
        seen.mark("FunctionProto.node", !f.nodes.is_empty());
        seen.mark("FunctionProto.doc_string", f.doc_string.is_some());
        seen.mark("FunctionProto.opset_import", !f.opset_import.is_empty());
        seen.mark("FunctionProto.domain", f.domain.is_some());
        seen.mark("FunctionProto.overload", f.overload.is_some());
        seen.mark("FunctionProto.value_info", !f.value_info.is_empty());
        pairs(seen, "FunctionProto.metadata_props", &f.metadata_props);
        for a in &f.attribute_protos {
            attribute(seen, m, a);
        }
        for &n in &f.nodes {
            node(seen, m, &m.nodes[n]);
        }
    }
    for (_, g) in m.graphs.iter() {
        graph(seen, m, g);
    }
    for (_, t) in m.tensors.iter() {
        tensor(seen, t);
    }
}

#[test]
fn the_hand_built_corpus_sets_every_field() {
    let mut seen = Seen::default();
    let mut non_utf8_names = 0;
    for path in files_with_suffix(&corpus_dir().join("handmade"), ".onnx") {
        let data = Bytes::from(std::fs::read(&path).unwrap());
        let m = binary::decode_model(data, &path.display().to_string()).unwrap();
        model(&mut seen, &m);
        non_utf8_names += m
            .nodes
            .iter()
            .flat_map(|(_, n)| n.inputs.iter().chain(&n.outputs).chain(&n.name))
            .filter(|s| s.as_str().is_none())
            .count();
    }
    assert!(non_utf8_names >= 4, "non-UTF-8 names missing ({non_utf8_names})");
    let mut expected: Vec<String> = EXPECTED.iter().map(|s| s.to_string()).collect();
    for &dt in DataType::ALL.iter().filter(|&&t| t != DataType::Undefined) {
        expected.push(format!("TensorProto.data_type={}/typed", dt.name()));
        if dt != DataType::String {
            expected.push(format!("TensorProto.data_type={}/raw", dt.name()));
        }
    }
    for code in 1..=14 {
        let t = AttributeType::from_code(code).unwrap();
        expected.push(format!("AttributeProto.type={}", t.name()));
    }
    let missing: Vec<&String> = expected.iter().filter(|f| !seen.0.contains(f.as_str())).collect();
    assert!(missing.is_empty(), "no hand-built model sets: {missing:?}");
}

const EXPECTED: &[&str] = &[
    "ModelProto.ir_version",
    "ModelProto.opset_import",
    "ModelProto.producer_name",
    "ModelProto.producer_version",
    "ModelProto.domain",
    "ModelProto.model_version",
    "ModelProto.doc_string",
    "ModelProto.graph",
    "ModelProto.metadata_props",
    "ModelProto.training_info",
    "ModelProto.functions",
    "ModelProto.configuration",
    "OperatorSetIdProto.domain",
    "OperatorSetIdProto.version",
    "StringStringEntryProto.key",
    "StringStringEntryProto.value",
    "TrainingInfoProto.initialization",
    "TrainingInfoProto.algorithm",
    "TrainingInfoProto.initialization_binding",
    "TrainingInfoProto.update_binding",
    "DeviceConfigurationProto.name",
    "DeviceConfigurationProto.num_devices",
    "DeviceConfigurationProto.device",
    "GraphProto.node",
    "GraphProto.name",
    "GraphProto.initializer",
    "GraphProto.sparse_initializer",
    "GraphProto.doc_string",
    "GraphProto.input",
    "GraphProto.output",
    "GraphProto.value_info",
    "GraphProto.quantization_annotation",
    "GraphProto.metadata_props",
    "TensorAnnotation.tensor_name",
    "TensorAnnotation.quant_parameter_tensor_names",
    "NodeProto.input",
    "NodeProto.input(empty)",
    "NodeProto.output",
    "NodeProto.name",
    "NodeProto.op_type",
    "NodeProto.domain",
    "NodeProto.overload",
    "NodeProto.doc_string",
    "NodeProto.metadata_props",
    "NodeProto.device_configurations",
    "NodeDeviceConfigurationProto.configuration_id",
    "NodeDeviceConfigurationProto.pipeline_stage",
    "ShardingSpecProto.tensor_name",
    "ShardingSpecProto.device",
    "IntIntListEntryProto",
    "ShardedDimProto.axis",
    "SimpleShardedDimProto.dim_value",
    "SimpleShardedDimProto.dim_param",
    "SimpleShardedDimProto.num_shards",
    "AttributeProto.name",
    "AttributeProto.ref_attr_name",
    "AttributeProto.doc_string",
    "AttributeProto.f",
    "AttributeProto.i",
    "AttributeProto.s",
    "AttributeProto.t",
    "AttributeProto.g",
    "AttributeProto.sparse_tensor",
    "AttributeProto.tp",
    "AttributeProto.floats",
    "AttributeProto.ints",
    "AttributeProto.strings",
    "AttributeProto.tensors",
    "AttributeProto.graphs",
    "AttributeProto.sparse_tensors",
    "AttributeProto.type_protos",
    "ValueInfoProto.name",
    "ValueInfoProto.type",
    "ValueInfoProto.doc_string",
    "ValueInfoProto.metadata_props",
    "TypeProto.tensor_type",
    "TypeProto.sequence_type",
    "TypeProto.map_type",
    "TypeProto.optional_type",
    "TypeProto.sparse_tensor_type",
    "TypeProto.opaque_type",
    "TypeProto.denotation",
    "TypeProto.optional_type+denotation",
    "TypeProto.sparse_tensor_type+denotation",
    "TypeProto.opaque_type+denotation",
    "TypeProto.Tensor.elem_type",
    "TypeProto.Tensor.shape",
    "Dimension.dim_value",
    "Dimension.dim_param",
    "Dimension.unknown",
    "Dimension.denotation",
    "TensorProto.dims",
    "TensorProto.segment",
    "TensorProto.float_data",
    "TensorProto.int32_data",
    "TensorProto.string_data",
    "TensorProto.int64_data",
    "TensorProto.name",
    "TensorProto.doc_string",
    "TensorProto.raw_data",
    "TensorProto.data_location",
    "TensorProto.double_data",
    "TensorProto.uint64_data",
    "TensorProto.external_data",
    "TensorProto.metadata_props",
    "SparseTensorProto.values",
    "SparseTensorProto.dims",
    "SparseTensorProto.indices(linear)",
    "SparseTensorProto.indices(coo)",
    "FunctionProto.name",
    "FunctionProto.input",
    "FunctionProto.output",
    "FunctionProto.attribute",
    "FunctionProto.attribute_proto",
    "FunctionProto.node",
    "FunctionProto.doc_string",
    "FunctionProto.opset_import",
    "FunctionProto.domain",
    "FunctionProto.overload",
    "FunctionProto.value_info",
    "FunctionProto.metadata_props",
];
