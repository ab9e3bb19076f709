//! How deep a model's protobuf messages nest, for refusing to write a binary that no reader
//! reads: protobuf's readers (onnx's and onnxruntime's C++ one, prost, ours) stop at
//! [`READABLE_DEPTH`] levels of nested messages, and each If or Loop level adds three
//! (node, attribute, graph), so a text with subgraphs about thirty deep, or a type of nested
//! `seq(` some ninety deep, converts to bytes that cannot be loaded back.
//!
//! The walk mirrors `onnx.proto`'s nesting (the model is level 0, its graph level 1, …) and
//! stops going down past [`COUNTED_DEPTH`], so a malformed model whose graph holds itself
//! cannot send it round forever, nor a deep one exhaust the stack.

use crate::ir::*;

/// The deepest nesting protobuf's default readers accept: `CodedInputStream`'s default
/// recursion limit in C++, and prost's.
pub const READABLE_DEPTH: usize = 100;

/// How far down the walk counts; a model nested deeper is said to be deeper than this.
pub const COUNTED_DEPTH: usize = 1000;

/// The level of `model`'s most deeply nested message, counted up to one past
/// [`COUNTED_DEPTH`] (a deeper model says that much).
pub fn message_depth(model: &Model) -> usize {
    let mut walk = Walk { model, deepest: 0 };
    walk.model();
    walk.deepest
}

struct Walk<'m> {
    model: &'m Model,
    deepest: usize,
}

impl Walk<'_> {
    /// Notes a message at `level`; whether to look inside it.
    fn at(&mut self, level: usize) -> bool {
        self.deepest = self.deepest.max(level);
        level <= COUNTED_DEPTH
    }

    fn model(&mut self) {
        let m = self.model;
        if let Some(g) = m.graph {
            self.graph(g, 1);
        }
        for info in &m.training_info {
            if self.at(1) {
                for g in [info.initialization, info.algorithm].into_iter().flatten() {
                    self.graph(g, 2);
                }
                if !info.initialization_binding.is_empty() || !info.update_binding.is_empty() {
                    self.at(2);
                }
            }
        }
        for &f in &m.functions {
            self.function(f, 1);
        }
        if !m.metadata_props.is_empty() || !m.opset_import.is_empty() || !m.configuration.is_empty() {
            self.at(1);
        }
    }

    fn graph(&mut self, g: GraphId, level: usize) {
        if !self.at(level) {
            return;
        }
        let graph = &self.model.graphs[g];
        for &n in &graph.nodes {
            self.node(n, level + 1);
        }
        for &t in &graph.initializers {
            self.tensor(t, level + 1);
        }
        for s in &graph.sparse_initializers {
            self.sparse(s, level + 1);
        }
        for v in graph.inputs.iter().chain(&graph.outputs).chain(&graph.value_info) {
            self.value_info(v, level + 1);
        }
        for a in &graph.quantization_annotation {
            if self.at(level + 1) && !a.quant_parameter_tensor_names.is_empty() {
                self.at(level + 2);
            }
        }
        if !graph.metadata_props.is_empty() {
            self.at(level + 1);
        }
    }

    fn function(&mut self, f: FunctionId, level: usize) {
        if !self.at(level) {
            return;
        }
        let function = &self.model.function_store[f];
        for &n in &function.nodes {
            self.node(n, level + 1);
        }
        for a in &function.attribute_protos {
            self.attribute(a, level + 1);
        }
        for v in &function.value_info {
            self.value_info(v, level + 1);
        }
        if !function.metadata_props.is_empty() || !function.opset_import.is_empty() {
            self.at(level + 1);
        }
    }

    fn node(&mut self, n: NodeId, level: usize) {
        if !self.at(level) {
            return;
        }
        let node = &self.model.nodes[n];
        for a in &node.attributes {
            self.attribute(a, level + 1);
        }
        if let Some(rare) = node.rare.get() {
            if !rare.metadata_props.is_empty() {
                self.at(level + 1);
            }
            for c in &rare.device_configurations {
                // NodeDeviceConfiguration > ShardingSpec > ShardedDim > SimpleShardedDim,
                // and ShardingSpec > IntIntListEntry.
                let deepest = c.sharding_spec.iter().fold(1, |d, s| {
                    let dims = if s.sharded_dim.iter().any(|d| !d.simple_sharding.is_empty()) {
                        4
                    } else if s.sharded_dim.is_empty() {
                        2
                    } else {
                        3
                    };
                    let lists = if s.index_to_device_group_map.is_empty() { 2 } else { 3 };
                    d.max(dims).max(lists)
                });
                self.at(level + deepest);
            }
        }
    }

    fn attribute(&mut self, a: &Attribute, level: usize) {
        if !self.at(level) {
            return;
        }
        for t in a.t.iter().chain(&a.tensors) {
            self.tensor(*t, level + 1);
        }
        for g in a.g.iter().chain(&a.graphs) {
            self.graph(*g, level + 1);
        }
        for s in a.sparse_tensor.iter().chain(&a.sparse_tensors) {
            self.sparse(s, level + 1);
        }
        for t in a.tp.iter().chain(&a.type_protos) {
            self.ty(t, level + 1);
        }
    }

    fn tensor(&mut self, t: TensorId, level: usize) {
        if !self.at(level) {
            return;
        }
        let tensor = &self.model.tensors[t];
        if tensor.segment.is_some() || !tensor.external_data.is_empty() || !tensor.metadata_props.is_empty() {
            self.at(level + 1);
        }
    }

    fn sparse(&mut self, s: &SparseTensor, level: usize) {
        if !self.at(level) {
            return;
        }
        for t in s.values.iter().chain(&s.indices) {
            self.tensor(*t, level + 1);
        }
    }

    fn value_info(&mut self, v: &ValueInfo, level: usize) {
        if !self.at(level) {
            return;
        }
        if let Some(ty) = &v.ty {
            self.ty(ty, level + 1);
        }
        if !v.metadata_props.is_empty() {
            self.at(level + 1);
        }
    }

    /// A TypeProto at `level`; nested types iteratively (a `seq(` may nest a million deep).
    fn ty(&mut self, t: &Type, level: usize) {
        let mut next = Some((t, level));
        while let Some((t, level)) = next.take() {
            if !self.at(level) {
                return;
            }
            match &t.value {
                None => {}
                Some(TypeValue::Tensor(x) | TypeValue::SparseTensor(x)) => {
                    // The tensor type, its shape, a dimension.
                    let inner = match &x.shape {
                        None => 1,
                        Some(s) if s.dims.is_empty() => 2,
                        Some(_) => 3,
                    };
                    self.at(level + inner);
                }
                Some(TypeValue::Opaque { .. }) => {
                    self.at(level + 1);
                }
                Some(TypeValue::Sequence(e) | TypeValue::Optional(e) | TypeValue::Map { value_type: e, .. }) => {
                    self.at(level + 1);
                    if let Some(e) = e {
                        next = Some((e, level + 2));
                    }
                }
            }
        }
    }
}
