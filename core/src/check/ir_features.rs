//! Features newer than the model's declared IR version (`ir-version-feature`), from the
//! version history in onnx.proto: a model that says `ir_version: 8` but stores float8
//! tensors, or calls a function overload, claims a format its readers may not know.
//! onnx's checker does not look; we warn, once per feature at its first use, so verdicts
//! stay onnx's.

use std::collections::BTreeMap;

use super::Checker;
use crate::diagnostic::Anchor;
use crate::ir::{Attribute, DataType, Type, TypeValue};

/// The IR version that introduced an element type (onnx.proto, `Version` comments).
fn elem_type_since(code: i32) -> Option<i64> {
    Some(match code {
        16 => 4,       // bfloat16
        17..=20 => 9,  // float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz
        21 | 22 => 10, // uint4, int4
        23 => 11,      // float4e2m1
        24 => 12,      // float8e8m0
        25 | 26 => 13, // uint2, int2
        27 | 28 => 14, // float6e2m3, float6e3m2
        _ => return None,
    })
}

/// The features found so far, by description: the IR version each needs and where it is
/// first used.
#[derive(Default)]
struct Found(BTreeMap<String, (i64, Anchor)>);

impl Found {
    fn note(&mut self, feature: impl Into<String>, since: i64, at: Anchor) {
        self.0.entry(feature.into()).or_insert((since, at));
    }

    fn elem(&mut self, code: Option<i32>, at: Anchor) {
        if let Some(code) = code
            && let Some(since) = elem_type_since(code)
        {
            let name = DataType::from_code(code).map_or("?", DataType::name);
            self.note(format!("{name} elements"), since, at);
        }
    }

    fn ty(&mut self, ty: &Type, at: Anchor) {
        match &ty.value {
            Some(TypeValue::Tensor(t)) => self.elem(t.elem_type, at),
            Some(TypeValue::SparseTensor(t)) => {
                self.note("sparse tensor types", 8, at);
                self.elem(t.elem_type, at);
            }
            Some(TypeValue::Optional(inner)) => {
                self.note("optional types", 8, at);
                if let Some(inner) = inner {
                    self.ty(inner, at);
                }
            }
            Some(TypeValue::Sequence(Some(inner)) | TypeValue::Map { value_type: Some(inner), .. }) => {
                self.ty(inner, at);
            }
            _ => {}
        }
    }

    fn attribute(&mut self, model: &crate::ir::Model, a: &Attribute, at: Anchor) {
        if a.sparse_tensor.is_some() || !a.sparse_tensors.is_empty() {
            self.note("sparse tensor attributes", 6, at);
        }
        for &t in a.t.iter().chain(&a.tensors) {
            self.elem(model.tensors[t].data_type, at);
        }
        for ty in a.tp.iter().chain(&a.type_protos) {
            self.ty(ty, at);
        }
    }
}

impl Checker<'_> {
    pub(super) fn ir_features(&mut self) {
        let model = self.model;
        if self.ir_version <= 0 {
            return; // reported as missing-ir-version
        }
        let mut found = Found::default();
        if !model.training_info.is_empty() {
            found.note("training information", 7, Anchor::Model);
        }
        if !model.configuration.is_empty() {
            found.note("device configurations", 11, Anchor::Model);
        }
        for &f in &model.functions {
            let function = &model.function_store[f];
            found.note("model-local functions", 8, Anchor::Function(f));
            if !function.attribute_protos.is_empty() {
                found.note("function attribute defaults", 9, Anchor::Function(f));
            }
            if function.overload.is_some() {
                found.note("function overloads", 10, Anchor::Function(f));
            }
            if !function.metadata_props.is_empty() || !function.value_info.is_empty() {
                found.note("function metadata and value_info", 10, Anchor::Function(f));
            }
        }
        for (g, graph) in model.graphs.iter() {
            if !graph.quantization_annotation.is_empty() {
                found.note("quantization annotations", 5, Anchor::Graph(g));
            }
            if !graph.sparse_initializers.is_empty() {
                found.note("sparse initializers", 6, Anchor::SparseInitializer(g, 0));
            }
            if !graph.metadata_props.is_empty() {
                found.note("graph metadata", 10, Anchor::Graph(g));
            }
            let values = [
                (&graph.inputs, Anchor::GraphInput as fn(_, _) -> Anchor),
                (&graph.outputs, Anchor::GraphOutput),
                (&graph.value_info, Anchor::ValueInfo),
            ];
            for (list, anchor) in values {
                for (i, v) in list.iter().enumerate() {
                    if let Some(ty) = &v.ty {
                        found.ty(ty, anchor(g, i));
                    }
                    if !v.metadata_props.is_empty() {
                        found.note("value metadata", 10, anchor(g, i));
                    }
                }
            }
            for (i, &t) in graph.initializers.iter().enumerate() {
                found.elem(model.tensors[t].data_type, Anchor::Initializer(g, i));
                if !model.tensors[t].metadata_props.is_empty() {
                    found.note("tensor metadata", 10, Anchor::Initializer(g, i));
                }
            }
        }
        for (n, node) in model.nodes.iter() {
            if node.overload().is_some() {
                found.note("calls of function overloads", 10, Anchor::Node(n));
            }
            if !node.metadata_props().is_empty() {
                found.note("node metadata", 10, Anchor::Node(n));
            }
            if !node.device_configurations().is_empty() {
                found.note("node device configurations", 11, Anchor::Node(n));
            }
            for (i, a) in node.attributes.iter().enumerate() {
                found.attribute(model, a, Anchor::Attribute(n, i));
            }
        }
        let declared = self.ir_version;
        for (feature, (since, at)) in found.0 {
            if since > declared {
                self.warning(
                    "ir-version-feature",
                    at,
                    format!("{feature} need IR version {since} or later, but the model declares ir_version {declared}"),
                );
            }
        }
    }
}
