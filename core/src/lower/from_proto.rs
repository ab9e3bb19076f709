//! protobuf → IR. Consumes the messages, so strings and raw bytes move (they are `Bytes`
//! slices of the input buffer) rather than copy.
//!
//! Recursion here follows message nesting, which prost bounds at 100 levels while decoding,
//! so it cannot overflow the stack.

use onnx_proto as pb;

use crate::ir::*;

/// Lowers a decoded model into the IR.
pub fn model(proto: pb::ModelProto) -> Model {
    // The main graph's nodes and initializers go into arenas sized for them once (growing a
    // big graph's arena by doubling copies it and faults its memory in twice).
    let main = proto.graph.as_ref();
    let mut model = Model::default();
    if let Some(g) = main {
        model.nodes = la_arena::Arena::with_capacity(g.node.len());
        model.tensors = la_arena::Arena::with_capacity(g.initializer.len());
    }
    let mut lowerer = Lowerer { model };
    let pb::ModelProto {
        ir_version,
        opset_import,
        producer_name,
        producer_version,
        domain,
        model_version,
        doc_string,
        graph,
        metadata_props,
        training_info,
        functions,
        configuration,
    } = proto;
    let graph = graph.map(|g| lowerer.graph(g));
    let training_info = training_info.into_iter().map(|t| lowerer.training_info(t)).collect();
    let functions = functions.into_iter().map(|f| lowerer.function(f)).collect();
    let mut model = lowerer.model;
    model.ir_version = ir_version;
    model.opset_import = opset_import.into_iter().map(opset).collect();
    model.producer_name = producer_name.map(Str::from);
    model.producer_version = producer_version.map(Str::from);
    model.domain = domain.map(Str::from);
    model.model_version = model_version;
    model.doc_string = doc_string.map(Str::from);
    model.graph = graph;
    model.metadata_props = pairs(metadata_props);
    model.training_info = training_info;
    model.functions = functions;
    model.configuration = configuration.into_iter().map(device_configuration).collect();
    model
}

/// Lowers a standalone tensor (a backend test's `input_0.pb`, say).
pub fn tensor(proto: pb::TensorProto) -> Tensor {
    let pb::TensorProto {
        dims,
        data_type,
        segment,
        float_data,
        int32_data,
        string_data,
        int64_data,
        name,
        raw_data,
        double_data,
        uint64_data,
        doc_string,
        external_data,
        data_location,
        metadata_props,
    } = proto;
    Tensor {
        dims,
        data_type,
        segment: segment.map(|s| Segment { begin: s.begin, end: s.end }),
        float_data,
        int32_data,
        string_data: strs(string_data),
        int64_data,
        name: name.map(Str::from),
        doc_string: doc_string.map(Str::from),
        raw_data,
        external_data: pairs(external_data),
        data_location,
        data_location_once_embedded: None,
        packed_source: PackedSource::default(),
        typed_once_embedded: false,
        double_data,
        uint64_data,
        metadata_props: pairs(metadata_props),
    }
}

/// Lowers a standalone type.
pub fn ty(proto: pb::TypeProto) -> Type {
    let pb::TypeProto {
        tensor_type,
        sequence_type,
        map_type,
        denotation,
        opaque_type,
        sparse_tensor_type,
        optional_type,
    } = proto;
    // The proto's oneof is flattened (see onnx-proto); at most one case is set in any file
    // protobuf writes. Should a hand-made file set several, one is kept, as protobuf would.
    let value = if let Some(t) = tensor_type {
        Some(TypeValue::Tensor(tensor_type_of(t.elem_type, t.shape)))
    } else if let Some(s) = sequence_type {
        Some(TypeValue::Sequence(s.elem_type.map(|t| Box::new(ty(*t)))))
    } else if let Some(m) = map_type {
        Some(TypeValue::Map { key_type: m.key_type, value_type: m.value_type.map(|t| Box::new(ty(*t))) })
    } else if let Some(o) = optional_type {
        Some(TypeValue::Optional(o.elem_type.map(|t| Box::new(ty(*t)))))
    } else if let Some(s) = sparse_tensor_type {
        Some(TypeValue::SparseTensor(tensor_type_of(s.elem_type, s.shape)))
    } else {
        opaque_type.map(|o| TypeValue::Opaque { domain: o.domain.map(boxed), name: o.name.map(boxed) })
    };
    Type { value, denotation: denotation.map(boxed) }
}

struct Lowerer {
    model: Model,
}

impl Lowerer {
    fn graph(&mut self, proto: pb::GraphProto) -> GraphId {
        let pb::GraphProto {
            node,
            name,
            initializer,
            doc_string,
            input,
            output,
            value_info,
            quantization_annotation,
            sparse_initializer,
            metadata_props,
        } = proto;
        let graph = Graph {
            nodes: node.into_iter().map(|n| self.node(n)).collect(),
            name: name.map(Str::from),
            initializers: initializer.into_iter().map(|t| self.tensor(t)).collect(),
            sparse_initializers: sparse_initializer.into_iter().map(|s| self.sparse(s)).collect(),
            doc_string: doc_string.map(Str::from),
            inputs: input.into_iter().map(value_info_of).collect(),
            outputs: output.into_iter().map(value_info_of).collect(),
            value_info: value_info.into_iter().map(value_info_of).collect(),
            quantization_annotation: quantization_annotation
                .into_iter()
                .map(|a| TensorAnnotation {
                    tensor_name: a.tensor_name.map(Str::from),
                    quant_parameter_tensor_names: pairs(a.quant_parameter_tensor_names),
                })
                .collect(),
            metadata_props: pairs(metadata_props),
        };
        self.model.graphs.alloc(graph)
    }

    fn node(&mut self, proto: pb::NodeProto) -> NodeId {
        let pb::NodeProto {
            input,
            output,
            name,
            op_type,
            attribute,
            doc_string,
            domain,
            overload,
            metadata_props,
            device_configurations,
        } = proto;
        let mut node = Node {
            inputs: input.into_iter().map(Str::from).collect(),
            outputs: output.into_iter().map(Str::from).collect(),
            name: name.map(Str::from),
            op_type: op_type.map(Str::from),
            domain: domain.map(Str::from),
            attributes: attribute.into_iter().map(|a| self.attribute(a)).collect(),
            ..Node::default()
        };
        if overload.is_some() || doc_string.is_some() || !metadata_props.is_empty() || !device_configurations.is_empty()
        {
            *node.rare.get_mut() = NodeRareFields {
                overload: overload.map(Str::from),
                doc_string: doc_string.map(Str::from),
                metadata_props: pairs(metadata_props),
                device_configurations: device_configurations.into_iter().map(node_device).collect(),
            };
        }
        self.model.nodes.alloc(node)
    }

    fn attribute(&mut self, proto: pb::AttributeProto) -> Attribute {
        let pb::AttributeProto {
            name,
            f,
            i,
            s,
            t,
            g,
            floats,
            ints,
            strings,
            tensors,
            graphs,
            doc_string,
            tp,
            type_protos,
            r#type,
            ref_attr_name,
            sparse_tensor,
            sparse_tensors,
        } = proto;
        Attribute {
            name: name.map(Str::from),
            ref_attr_name: ref_attr_name.map(Str::from),
            doc_string: doc_string.map(Str::from),
            ty: r#type,
            f,
            i,
            s: s.map(Str::from),
            t: t.map(|t| self.tensor(t)),
            g: g.map(|g| self.graph(g)),
            sparse_tensor: sparse_tensor.map(|s| self.sparse(s)),
            tp: tp.map(ty),
            floats,
            ints,
            strings: strs(strings),
            tensors: tensors.into_iter().map(|t| self.tensor(t)).collect(),
            graphs: graphs.into_iter().map(|g| self.graph(g)).collect(),
            sparse_tensors: sparse_tensors.into_iter().map(|s| self.sparse(s)).collect(),
            type_protos: type_protos.into_iter().map(ty).collect(),
        }
    }

    fn tensor(&mut self, proto: pb::TensorProto) -> TensorId {
        self.model.tensors.alloc(tensor(proto))
    }

    fn sparse(&mut self, proto: pb::SparseTensorProto) -> SparseTensor {
        SparseTensor {
            values: proto.values.map(|t| self.tensor(t)),
            indices: proto.indices.map(|t| self.tensor(t)),
            dims: proto.dims,
        }
    }

    fn training_info(&mut self, proto: pb::TrainingInfoProto) -> TrainingInfo {
        TrainingInfo {
            initialization: proto.initialization.map(|g| self.graph(g)),
            algorithm: proto.algorithm.map(|g| self.graph(g)),
            initialization_binding: pairs(proto.initialization_binding),
            update_binding: pairs(proto.update_binding),
        }
    }

    fn function(&mut self, proto: pb::FunctionProto) -> FunctionId {
        let pb::FunctionProto {
            name,
            input,
            output,
            attribute,
            node,
            doc_string,
            opset_import,
            domain,
            attribute_proto,
            value_info,
            overload,
            metadata_props,
        } = proto;
        let function = Function {
            name: name.map(Str::from),
            inputs: input.into_iter().map(Str::from).collect(),
            outputs: output.into_iter().map(Str::from).collect(),
            attributes: strs(attribute),
            attribute_protos: attribute_proto.into_iter().map(|a| self.attribute(a)).collect(),
            nodes: node.into_iter().map(|n| self.node(n)).collect(),
            doc_string: doc_string.map(Str::from),
            opset_import: opset_import.into_iter().map(opset).collect(),
            domain: domain.map(Str::from),
            overload: overload.map(Str::from),
            value_info: value_info.into_iter().map(value_info_of).collect(),
            metadata_props: pairs(metadata_props),
        };
        self.model.function_store.alloc(function)
    }
}

/// A rare text (denotations, opaque type names), boxed as the IR keeps it.
fn boxed(b: bytes::Bytes) -> Box<Str> {
    Box::new(Str::from(b))
}

fn strs(v: Vec<bytes::Bytes>) -> Vec<Str> {
    v.into_iter().map(Str::from).collect()
}

fn pairs(v: Vec<pb::StringStringEntryProto>) -> Vec<StringPair> {
    v.into_iter().map(|e| StringPair { key: e.key.map(Str::from), value: e.value.map(Str::from) }).collect()
}

fn opset(o: pb::OperatorSetIdProto) -> OpsetImport {
    OpsetImport { domain: o.domain.map(Str::from), version: o.version }
}

fn value_info_of(v: pb::ValueInfoProto) -> ValueInfo {
    ValueInfo {
        name: v.name.map(Str::from),
        ty: v.r#type.map(ty),
        doc_string: v.doc_string.map(Str::from),
        metadata_props: pairs(v.metadata_props),
    }
}

fn tensor_type_of(elem_type: Option<i32>, shape: Option<pb::TensorShapeProto>) -> TensorType {
    TensorType {
        elem_type,
        shape: shape.map(|s| Shape {
            dims: s
                .dim
                .into_iter()
                .map(|d| Dimension { value: dim_value(d.dim_value, d.dim_param), denotation: d.denotation.map(boxed) })
                .collect(),
        }),
    }
}

fn dim_value(value: Option<i64>, param: Option<bytes::Bytes>) -> Option<DimValue> {
    match (value, param) {
        (_, Some(p)) => Some(DimValue::Param(Str::from(p))),
        (Some(v), None) => Some(DimValue::Value(v)),
        (None, None) => None,
    }
}

fn device_configuration(c: pb::DeviceConfigurationProto) -> DeviceConfiguration {
    DeviceConfiguration { name: c.name.map(Str::from), num_devices: c.num_devices, device: strs(c.device) }
}

fn node_device(c: pb::NodeDeviceConfigurationProto) -> NodeDeviceConfiguration {
    NodeDeviceConfiguration {
        configuration_id: c.configuration_id.map(Str::from),
        sharding_spec: c
            .sharding_spec
            .into_iter()
            .map(|s| ShardingSpec {
                tensor_name: s.tensor_name.map(Str::from),
                device: s.device,
                index_to_device_group_map: s
                    .index_to_device_group_map
                    .into_iter()
                    .map(|e| IntIntList { key: e.key, value: e.value })
                    .collect(),
                sharded_dim: s
                    .sharded_dim
                    .into_iter()
                    .map(|d| ShardedDim {
                        axis: d.axis,
                        simple_sharding: d
                            .simple_sharding
                            .into_iter()
                            .map(|s| SimpleShardedDim {
                                dim: dim_value(s.dim_value, s.dim_param),
                                num_shards: s.num_shards,
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect(),
        pipeline_stage: c.pipeline_stage,
    }
}

/// Parts of a model embedded as protobuf bytes, for the few constructs the text format
/// writes that way (see `print::canonical`). Decoded parts are added to `model`'s arenas.
pub mod embedded {
    use bytes::Bytes;
    use onnx_proto as pb;

    use super::Lowerer;
    use crate::ir::*;

    fn with_lowerer<T>(model: &mut Model, f: impl FnOnce(&mut Lowerer) -> T) -> T {
        let mut lowerer = Lowerer { model: std::mem::take(model) };
        let out = f(&mut lowerer);
        *model = lowerer.model;
        out
    }

    pub fn attribute(model: &mut Model, bytes: Bytes) -> Result<Attribute, pb::DecodeError> {
        let proto = pb::decode::<pb::AttributeProto>(bytes)?;
        Ok(with_lowerer(model, |l| l.attribute(proto)))
    }

    pub fn sparse_tensor(model: &mut Model, bytes: Bytes) -> Result<SparseTensor, pb::DecodeError> {
        let proto = pb::decode::<pb::SparseTensorProto>(bytes)?;
        Ok(with_lowerer(model, |l| l.sparse(proto)))
    }

    pub fn training_info(model: &mut Model, bytes: Bytes) -> Result<TrainingInfo, pb::DecodeError> {
        let proto = pb::decode::<pb::TrainingInfoProto>(bytes)?;
        Ok(with_lowerer(model, |l| l.training_info(proto)))
    }

    pub fn device_configuration(bytes: Bytes) -> Result<DeviceConfiguration, pb::DecodeError> {
        Ok(super::device_configuration(pb::decode(bytes)?))
    }

    pub fn node_device_configuration(bytes: Bytes) -> Result<NodeDeviceConfiguration, pb::DecodeError> {
        Ok(super::node_device(pb::decode(bytes)?))
    }

    pub fn ty(bytes: Bytes) -> Result<Type, pb::DecodeError> {
        Ok(super::ty(pb::decode(bytes)?))
    }

    pub fn tensor(bytes: Bytes) -> Result<Tensor, pb::DecodeError> {
        Ok(super::tensor(pb::decode(bytes)?))
    }

    pub fn tensor_annotation(bytes: Bytes) -> Result<TensorAnnotation, pb::DecodeError> {
        let a: pb::TensorAnnotation = pb::decode(bytes)?;
        Ok(TensorAnnotation {
            tensor_name: a.tensor_name.map(Str::from),
            quant_parameter_tensor_names: super::pairs(a.quant_parameter_tensor_names),
        })
    }
}
