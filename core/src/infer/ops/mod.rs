//! The inference rules: what an operator's outputs are, from a node and what is known of
//! its inputs ([`Ctx`]). Each module is a family of operators that share a shape rule; each
//! has a `rule(op)` that names the rule of each operator it knows. The table that maps
//! (domain, operator) to its rule is built once from them ([`super::registry`]); nothing
//! here walks graphs, expands functions or touches the environment beyond reading it.

mod attention;
mod contrib;
mod einsum;
mod elementwise;
mod generator;
mod ml;
pub(super) mod nn;
mod recurrent;
mod select;
pub(super) mod sequence;
mod shape;
mod signal;
mod text;
mod training;
mod vision;

use super::env::Env;
pub use super::types::Outputs;
use super::types::{Known, tensor_parts};
use crate::ir::{AttributeValue, Dimension, Model, Node, Str, TensorId, Type};
use crate::resolve::{NO_VALUE, Places, ValueId};

/// An operator's inference rule. A plain function pointer, so that the table holds no
/// closures and a lookup is a copy; a rule that serves several operators reads which one
/// from [`Ctx::op`].
pub type Rule = for<'a, 'm> fn(&Ctx<'a, 'm>) -> Option<Outputs>;

/// Which operators a family has a rule for, and which rule: `None` for the others.
pub type Family = fn(&str) -> Option<Rule>;

/// The families of the default domain. An operator is claimed by at most one of them
/// (the table's tests check it), so their order does not matter.
pub const DEFAULT_DOMAIN: [Family; 12] = [
    elementwise::rule,
    shape::rule,
    nn::rule,
    select::rule,
    generator::rule,
    vision::rule,
    recurrent::rule,
    sequence::rule,
    text::rule,
    einsum::rule,
    signal::rule,
    attention::rule,
];

/// Rules that apply from a later version of their operator on, in place of its family's rule
/// (which the table registers from version 1): (domain, operator, since-version, rule). For
/// operators whose versions differ by more than a line of their rule.
pub const FROM_VERSION: &[(&str, &str, i64, Rule)] = &[("", "DFT", 20, signal::dft_from_20)];

/// The families of the other domains inference knows.
pub const OTHER_DOMAINS: [(&str, Family); 4] = [
    ("ai.onnx.ml", ml::rule),
    ("ai.onnx.preview.training", training::rule),
    ("ai.onnx.preview", attention::preview_rule),
    ("com.microsoft", contrib::rule),
];

/// What a rule sees: the node, its inputs' types and known values, the opset.
pub struct Ctx<'a, 'm> {
    pub model: &'m Model,
    /// The node as the rule sees it; inside a function body, a copy whose attribute
    /// references are bound to the caller's attributes.
    pub node: &'a Node,
    /// The numbers of the values the node's inputs refer to.
    inputs: Places<'m>,
    pub env: &'a Env<'m>,
    pub opset: i64,
}

impl<'a, 'm> Ctx<'a, 'm> {
    pub fn new(model: &'m Model, node: &'a Node, inputs: Places<'m>, env: &'a Env<'m>, opset: i64) -> Self {
        Ctx { model, node, inputs, env, opset }
    }

    /// Whether to infer as onnx's full check does (without data propagation, and no further
    /// than onnx's rule of the operator's version goes): see [`super::conflicts`].
    pub fn as_onnx(&self) -> bool {
        self.env.as_onnx()
    }

    /// The number of input `i`'s value (`NO_VALUE` when absent or undefined).
    fn input_value(&self, i: usize) -> ValueId {
        self.inputs.get(i).unwrap_or(NO_VALUE)
    }

    /// The operator's name, for a rule that serves several.
    pub fn op(&self) -> &'a str {
        self.node.op_type.as_ref().and_then(Str::as_str).unwrap_or("")
    }

    pub fn input_type(&self, i: usize) -> Option<&'a Type> {
        self.env.ty(self.input_value(i))
    }

    /// Element type and dims (dims `None` for unknown rank) of a tensor input.
    pub fn input(&self, i: usize) -> Option<(Option<i32>, Option<&[Dimension]>)> {
        self.input_type(i).and_then(tensor_parts)
    }

    pub fn elem(&self, i: usize) -> Option<i32> {
        self.input(i).and_then(|(e, _)| e)
    }

    pub fn dims(&self, i: usize) -> Option<&[Dimension]> {
        self.input(i).and_then(|(_, d)| d)
    }

    pub fn has_input(&self, i: usize) -> bool {
        self.node.has_input(i)
    }

    /// Whether input `i` is given as onnx's inference sees it when inferring as onnx does:
    /// named, and of a type onnx's inference knows. Split-13 and Squeeze ask for the
    /// input's type to tell whether it is given, so beside a `split` or `axes` onnx infers
    /// no type for, Split-13 splits evenly and Squeeze drops every axis of size 1
    /// (Split-18 asks the inference context's `hasInput`, which reads the name only).
    pub fn given_to_onnx(&self, i: usize) -> bool {
        self.has_input(i) && !(self.env.as_onnx() && self.env.onnx_leaves_untyped(self.input_value(i)))
    }

    /// The known value of input `i`: computed by data propagation, or a constant's (only
    /// those when inferring as onnx's full check does).
    pub fn value(&self, i: usize) -> Option<&Known> {
        let value = self.input_value(i);
        if self.env.as_onnx() && self.env.known_by_propagation(value) && !self.env.folded_by_onnxruntime(value) {
            return None;
        }
        self.env.value(value)
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Int(v) => Some(v),
            _ => None,
        }
    }

    pub fn ints(&self, name: &str) -> Option<&'a [i64]> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Ints(v) => Some(v),
            _ => None,
        }
    }

    /// A string attribute (`mode`, `direction`, …) as text.
    pub fn string(&self, name: &str) -> Option<&'a str> {
        self.node.attribute(name)?.s.as_ref()?.as_str()
    }

    /// The first element of a known 0-D or 1-D integer input (a `depth`, a `size`).
    pub fn scalar_value(&self, i: usize) -> Option<i64> {
        self.value(i).and_then(Known::ints).and_then(|v| (v.len() == 1).then(|| v[0]))
    }

    /// The dims of input `i` as a vector, when its rank is known.
    pub fn dims_vec(&self, i: usize) -> Option<Vec<Dimension>> {
        self.dims(i).map(<[_]>::to_vec)
    }

    /// The values of a small float32 constant input (an initializer or a `Constant`).
    pub fn float_values(&self, i: usize) -> Option<Vec<f32>> {
        let t = &self.model.tensors[self.env.constant(self.input_value(i))?];
        if t.element_count()? > 64 {
            return None;
        }
        crate::ir::tensor_data::float_values(t)
    }

    pub fn tensor_attr(&self, name: &str) -> Option<TensorId> {
        match self.node.attribute(name)?.value()? {
            AttributeValue::Tensor(t) => Some(t),
            _ => None,
        }
    }
}
