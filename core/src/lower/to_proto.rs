//! IR → protobuf. Borrows the IR; strings and raw bytes are `Bytes` clones (reference
//! counts), typed numeric fields are copied.

use std::borrow::Borrow;

use bytes::Bytes;
use onnx_proto as pb;

use crate::ir::*;

pub fn model(model: &Model) -> pb::ModelProto {
    let raiser = Raiser { model };
    pb::ModelProto {
        ir_version: model.ir_version,
        opset_import: model.opset_import.iter().map(opset).collect(),
        producer_name: bytes(&model.producer_name),
        producer_version: bytes(&model.producer_version),
        domain: bytes(&model.domain),
        model_version: model.model_version,
        doc_string: bytes(&model.doc_string),
        graph: model.graph.map(|g| raiser.graph(g)),
        metadata_props: pairs(&model.metadata_props),
        training_info: model.training_info.iter().map(|t| raiser.training_info(t)).collect(),
        functions: model.functions.iter().map(|&f| raiser.function(f)).collect(),
        configuration: model.configuration.iter().map(device_configuration).collect(),
    }
}

/// Raises a standalone tensor.
pub fn tensor(t: &Tensor) -> pb::TensorProto {
    pb::TensorProto {
        dims: t.dims.clone(),
        data_type: t.data_type,
        segment: t.segment.as_ref().map(|s| pb::tensor_proto::Segment { begin: s.begin, end: s.end }),
        float_data: t.float_data.clone(),
        int32_data: t.int32_data.clone(),
        string_data: strs(&t.string_data),
        int64_data: t.int64_data.clone(),
        name: bytes(&t.name),
        raw_data: t.raw_data.clone(),
        double_data: t.double_data.clone(),
        uint64_data: t.uint64_data.clone(),
        doc_string: bytes(&t.doc_string),
        external_data: pairs(&t.external_data),
        data_location: t.data_location,
        metadata_props: pairs(&t.metadata_props),
    }
}

/// Raises a standalone type.
pub fn ty(t: &Type) -> pb::TypeProto {
    let mut proto = pb::TypeProto { denotation: bytes(&t.denotation), ..Default::default() };
    let boxed = |t: &Option<Box<Type>>| t.as_deref().map(|t| Box::new(ty(t)));
    match &t.value {
        None => {}
        Some(TypeValue::Tensor(t)) => {
            proto.tensor_type =
                Some(pb::type_proto::Tensor { elem_type: t.elem_type, shape: t.shape.as_ref().map(shape) })
        }
        Some(TypeValue::SparseTensor(t)) => {
            proto.sparse_tensor_type =
                Some(pb::type_proto::SparseTensor { elem_type: t.elem_type, shape: t.shape.as_ref().map(shape) })
        }
        Some(TypeValue::Sequence(e)) => {
            proto.sequence_type = Some(Box::new(pb::type_proto::Sequence { elem_type: boxed(e) }))
        }
        Some(TypeValue::Optional(e)) => {
            proto.optional_type = Some(Box::new(pb::type_proto::Optional { elem_type: boxed(e) }))
        }
        Some(TypeValue::Map { key_type, value_type }) => {
            proto.map_type = Some(Box::new(pb::type_proto::Map { key_type: *key_type, value_type: boxed(value_type) }))
        }
        Some(TypeValue::Opaque { domain, name }) => {
            proto.opaque_type = Some(pb::type_proto::Opaque { domain: bytes(domain), name: bytes(name) })
        }
    }
    proto
}

struct Raiser<'m> {
    model: &'m Model,
}

impl Raiser<'_> {
    fn graph(&self, id: GraphId) -> pb::GraphProto {
        let g = &self.model.graphs[id];
        pb::GraphProto {
            node: g.nodes.iter().map(|&n| self.node(n)).collect(),
            name: bytes(&g.name),
            initializer: g.initializers.iter().map(|&t| self.tensor(t)).collect(),
            doc_string: bytes(&g.doc_string),
            input: g.inputs.iter().map(value_info).collect(),
            output: g.outputs.iter().map(value_info).collect(),
            value_info: g.value_info.iter().map(value_info).collect(),
            quantization_annotation: g
                .quantization_annotation
                .iter()
                .map(|a| pb::TensorAnnotation {
                    tensor_name: bytes(&a.tensor_name),
                    quant_parameter_tensor_names: pairs(&a.quant_parameter_tensor_names),
                })
                .collect(),
            sparse_initializer: g.sparse_initializers.iter().map(|s| self.sparse(s)).collect(),
            metadata_props: pairs(&g.metadata_props),
        }
    }

    fn node(&self, id: NodeId) -> pb::NodeProto {
        let n = &self.model.nodes[id];
        pb::NodeProto {
            input: strs(&n.inputs),
            output: strs(&n.outputs),
            name: bytes(&n.name),
            op_type: bytes(&n.op_type),
            attribute: n.attributes.iter().map(|a| self.attribute(a)).collect(),
            doc_string: bytes(&n.doc_string()),
            domain: bytes(&n.domain),
            overload: bytes(&n.overload()),
            metadata_props: pairs(n.metadata_props()),
            device_configurations: n.device_configurations().iter().map(node_device).collect(),
        }
    }

    fn attribute(&self, a: &Attribute) -> pb::AttributeProto {
        pb::AttributeProto {
            name: bytes(&a.name),
            f: a.f,
            i: a.i,
            s: bytes(&a.s),
            t: a.t.map(|t| self.tensor(t)),
            g: a.g.map(|g| self.graph(g)),
            floats: a.floats.clone(),
            ints: a.ints.clone(),
            strings: strs(&a.strings),
            tensors: a.tensors.iter().map(|&t| self.tensor(t)).collect(),
            graphs: a.graphs.iter().map(|&g| self.graph(g)).collect(),
            doc_string: bytes(&a.doc_string),
            tp: a.tp.as_ref().map(ty),
            type_protos: a.type_protos.iter().map(ty).collect(),
            r#type: a.ty,
            ref_attr_name: bytes(&a.ref_attr_name),
            sparse_tensor: a.sparse_tensor.as_ref().map(|s| self.sparse(s)),
            sparse_tensors: a.sparse_tensors.iter().map(|s| self.sparse(s)).collect(),
        }
    }

    fn tensor(&self, id: TensorId) -> pb::TensorProto {
        tensor(&self.model.tensors[id])
    }

    fn sparse(&self, s: &SparseTensor) -> pb::SparseTensorProto {
        pb::SparseTensorProto {
            values: s.values.map(|t| self.tensor(t)),
            indices: s.indices.map(|t| self.tensor(t)),
            dims: s.dims.clone(),
        }
    }

    fn training_info(&self, t: &TrainingInfo) -> pb::TrainingInfoProto {
        pb::TrainingInfoProto {
            initialization: t.initialization.map(|g| self.graph(g)),
            algorithm: t.algorithm.map(|g| self.graph(g)),
            initialization_binding: pairs(&t.initialization_binding),
            update_binding: pairs(&t.update_binding),
        }
    }

    fn function(&self, id: FunctionId) -> pb::FunctionProto {
        let f = &self.model.function_store[id];
        pb::FunctionProto {
            name: bytes(&f.name),
            input: strs(&f.inputs),
            output: strs(&f.outputs),
            attribute: strs(&f.attributes),
            node: f.nodes.iter().map(|&n| self.node(n)).collect(),
            doc_string: bytes(&f.doc_string),
            opset_import: f.opset_import.iter().map(opset).collect(),
            domain: bytes(&f.domain),
            attribute_proto: f.attribute_protos.iter().map(|a| self.attribute(a)).collect(),
            value_info: f.value_info.iter().map(value_info).collect(),
            overload: bytes(&f.overload),
            metadata_props: pairs(&f.metadata_props),
        }
    }
}

/// An optional text as prost holds it (`Str`, or `Box<Str>` for the rare ones the IR boxes).
fn bytes<S: Borrow<Str>>(s: &Option<S>) -> Option<Bytes> {
    s.as_ref().map(|s| s.borrow().clone().into_bytes())
}

fn strs(v: &[Str]) -> Vec<Bytes> {
    v.iter().cloned().map(Str::into_bytes).collect()
}

fn pairs(v: &[StringPair]) -> Vec<pb::StringStringEntryProto> {
    v.iter().map(|e| pb::StringStringEntryProto { key: bytes(&e.key), value: bytes(&e.value) }).collect()
}

fn opset(o: &OpsetImport) -> pb::OperatorSetIdProto {
    pb::OperatorSetIdProto { domain: bytes(&o.domain), version: o.version }
}

fn value_info(v: &ValueInfo) -> pb::ValueInfoProto {
    pb::ValueInfoProto {
        name: bytes(&v.name),
        r#type: v.ty.as_ref().map(ty),
        doc_string: bytes(&v.doc_string),
        metadata_props: pairs(&v.metadata_props),
    }
}

fn shape(s: &Shape) -> pb::TensorShapeProto {
    pb::TensorShapeProto {
        dim: s
            .dims
            .iter()
            .map(|d| {
                let (dim_value, dim_param) = split_dim(&d.value);
                pb::tensor_shape_proto::Dimension { dim_value, dim_param, denotation: bytes(&d.denotation) }
            })
            .collect(),
    }
}

fn split_dim(d: &Option<DimValue>) -> (Option<i64>, Option<Bytes>) {
    match d {
        None => (None, None),
        Some(DimValue::Value(v)) => (Some(*v), None),
        Some(DimValue::Param(p)) => (None, Some(p.clone().into_bytes())),
    }
}

fn device_configuration(c: &DeviceConfiguration) -> pb::DeviceConfigurationProto {
    pb::DeviceConfigurationProto { name: bytes(&c.name), num_devices: c.num_devices, device: strs(&c.device) }
}

fn node_device(c: &NodeDeviceConfiguration) -> pb::NodeDeviceConfigurationProto {
    pb::NodeDeviceConfigurationProto {
        configuration_id: bytes(&c.configuration_id),
        sharding_spec: c
            .sharding_spec
            .iter()
            .map(|s| pb::ShardingSpecProto {
                tensor_name: bytes(&s.tensor_name),
                device: s.device.clone(),
                index_to_device_group_map: s
                    .index_to_device_group_map
                    .iter()
                    .map(|e| pb::IntIntListEntryProto { key: e.key, value: e.value.clone() })
                    .collect(),
                sharded_dim: s
                    .sharded_dim
                    .iter()
                    .map(|d| pb::ShardedDimProto {
                        axis: d.axis,
                        simple_sharding: d
                            .simple_sharding
                            .iter()
                            .map(|s| {
                                let (dim_value, dim_param) = split_dim(&s.dim);
                                pb::SimpleShardedDimProto { dim_value, dim_param, num_shards: s.num_shards }
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect(),
        pipeline_stage: c.pipeline_stage,
    }
}

/// The protobuf bytes of model parts that the text format embeds as `b"…"` (the inverse of
/// `from_proto::embedded`).
pub mod embedded {
    use onnx_proto as pb;

    use super::Raiser;
    use crate::ir::*;

    pub fn attribute(model: &Model, a: &Attribute) -> Vec<u8> {
        pb::encode(&Raiser { model }.attribute(a))
    }

    pub fn sparse_tensor(model: &Model, s: &SparseTensor) -> Vec<u8> {
        pb::encode(&Raiser { model }.sparse(s))
    }

    pub fn training_info(model: &Model, t: &TrainingInfo) -> Vec<u8> {
        pb::encode(&Raiser { model }.training_info(t))
    }

    pub fn device_configuration(c: &DeviceConfiguration) -> Vec<u8> {
        pb::encode(&super::device_configuration(c))
    }

    pub fn node_device_configuration(c: &NodeDeviceConfiguration) -> Vec<u8> {
        pb::encode(&super::node_device(c))
    }

    pub fn ty(t: &Type) -> Vec<u8> {
        pb::encode(&super::ty(t))
    }

    pub fn tensor(t: &Tensor) -> Vec<u8> {
        pb::encode(&super::tensor(t))
    }

    pub fn tensor_annotation(a: &TensorAnnotation) -> Vec<u8> {
        pb::encode(&pb::TensorAnnotation {
            tensor_name: super::bytes(&a.tensor_name),
            quant_parameter_tensor_names: super::pairs(&a.quant_parameter_tensor_names),
        })
    }
}
