//! Attribute level (semantics spec §1.5): name, type, the value fields against the type,
//! and what the attribute holds (tensors, subgraphs).

use super::{Checker, GraphRole, Opsets};
use crate::diagnostic::Anchor;
use crate::ir::{Attribute, AttributeType, NodeId, Str};

/// The value fields an attribute actually carries, by the type each one belongs to.
fn present_fields(a: &Attribute) -> Vec<AttributeType> {
    use AttributeType as T;
    let mut fields = Vec::new();
    let mut add = |present: bool, ty| {
        if present {
            fields.push(ty);
        }
    };
    add(a.f.is_some(), T::Float);
    add(a.i.is_some(), T::Int);
    add(a.s.is_some(), T::String);
    add(a.t.is_some(), T::Tensor);
    add(a.g.is_some(), T::Graph);
    add(a.sparse_tensor.is_some(), T::SparseTensor);
    add(a.tp.is_some(), T::TypeProto);
    add(!a.floats.is_empty(), T::Floats);
    add(!a.ints.is_empty(), T::Ints);
    add(!a.strings.is_empty(), T::Strings);
    add(!a.tensors.is_empty(), T::Tensors);
    add(!a.graphs.is_empty(), T::Graphs);
    add(!a.sparse_tensors.is_empty(), T::SparseTensors);
    add(!a.type_protos.is_empty(), T::TypeProtos);
    fields
}

impl Checker<'_> {
    pub(super) fn attribute(&mut self, node: NodeId, index: usize, role: GraphRole, opsets: &Opsets) {
        let a = &self.model.nodes[node].attributes[index];
        let anchor = Anchor::Attribute(node, index);
        let name = a.name.as_ref().map_or_else(String::new, Str::escaped);
        if name.is_empty() {
            self.error("missing-attribute-name", anchor, "the attribute has no name");
        }
        if self.ir_version >= 2 && a.ty.is_none() {
            self.error("missing-attribute-type", anchor, format!("attribute '{name}' has no type"));
        }
        let fields = present_fields(a);
        if let Some(ty) = a.attribute_type() {
            for &field in fields.iter().filter(|&&f| f != ty) {
                self.error(
                    "attribute-field-mismatch",
                    anchor,
                    format!("attribute '{name}' is of type {} but holds a {} value", ty.name(), field.name()),
                );
            }
        }
        if fields.len() > 1 {
            self.error("attribute-several-values", anchor, format!("attribute '{name}' holds more than one value"));
        }
        if a.ref_attr_name.is_some() && !fields.is_empty() && role == GraphRole::Sub {
            self.error(
                "reference-attribute-with-value",
                anchor,
                format!("attribute '{name}' refers to a function attribute and must not hold a value too"),
            );
        }
        for t in a.t.iter().chain(&a.tensors) {
            self.tensor(*t, anchor);
        }
        for s in a.sparse_tensor.iter().chain(&a.sparse_tensors) {
            self.sparse_tensor(s, anchor);
        }
        for g in a.subgraphs().collect::<Vec<_>>() {
            self.graph(g, GraphRole::Sub, opsets);
        }
    }
}
