//! One node being converted: what a step reads of it (its attributes, inputs, the types
//! inference found) and what it writes (attributes, inputs, constants, nodes around it).

use std::collections::HashMap;

use super::{Cx, Place};
use crate::ir::{
    Attribute, AttributeType, AttributeValue, DataType, Model, Node, NodeId, Str, Tensor, Type, TypeValue,
};

/// One node being converted: what a step reads and writes.
pub struct Site<'a> {
    pub model: &'a mut Model,
    pub node: NodeId,
    pub place: Place,
    /// The types inference found for the node's values, by name (none in functions).
    pub(super) types: &'a HashMap<Str, Type>,
    /// The target opset.
    pub to: i64,
    /// The version the step being run leaves the node at: nodes it inserts are written for
    /// it, and converted from it to the target in turn.
    pub at: i64,
    /// Nodes to insert before and after the node.
    pub before: Vec<Node>,
    pub after: Vec<Node>,
    /// Nodes that take the node's place (an operator expanded into others).
    pub replaced_by: Option<Vec<Node>>,
    pub notes: Vec<String>,
    pub(super) cx: &'a mut Cx,
    /// Constants added as initializers.
    pub(super) added: usize,
}

impl std::fmt::Debug for Site<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Site").field("node", &self.node).field("to", &self.to).finish_non_exhaustive()
    }
}

impl Site<'_> {
    pub fn node(&self) -> &Node {
        &self.model.nodes[self.node]
    }

    pub fn node_mut(&mut self) -> &mut Node {
        &mut self.model.nodes[self.node]
    }

    pub fn op(&self) -> &str {
        self.node().op_type.as_ref().and_then(Str::as_str).unwrap_or("")
    }

    pub fn input(&self, i: usize) -> Option<Str> {
        self.node().inputs.get(i).filter(|n| !n.is_empty()).cloned()
    }

    /// The tensor type inference found for a value, when it found one.
    fn tensor_type(&self, name: &Str) -> Option<&crate::ir::TensorType> {
        match self.types.get(name)?.value.as_ref()? {
            TypeValue::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The rank of input `i`, when inference knows it.
    pub fn rank(&self, i: usize) -> Option<usize> {
        let name = self.input(i)?;
        Some(self.tensor_type(&name)?.shape.as_ref()?.dims.len())
    }

    /// The size of dimension `axis` of input `i`, when known.
    pub fn dim(&self, i: usize, axis: usize) -> Option<i64> {
        let name = self.input(i)?;
        match self.tensor_type(&name)?.shape.as_ref()?.dims.get(axis)?.value {
            Some(crate::ir::DimValue::Value(v)) => Some(v),
            _ => None,
        }
    }

    /// The element type of input `i`, when known.
    pub fn elem_type(&self, i: usize) -> Option<DataType> {
        let name = self.input(i)?;
        DataType::from_code(self.tensor_type(&name)?.elem_type?)
    }

    pub fn attribute(&self, name: &str) -> Option<AttributeValue<'_>> {
        self.node().attribute(name)?.value()
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        match self.attribute(name)? {
            AttributeValue::Int(v) => Some(v),
            _ => None,
        }
    }

    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attribute(name)? {
            AttributeValue::Ints(v) => Some(v.to_vec()),
            _ => None,
        }
    }

    pub fn string(&self, name: &str) -> Option<String> {
        match self.attribute(name)? {
            AttributeValue::String(s) => s.as_str().map(str::to_owned),
            _ => None,
        }
    }

    /// Removes an attribute, returning it.
    pub fn take(&mut self, name: &str) -> Option<Attribute> {
        let attributes = &mut self.node_mut().attributes;
        let at = attributes.iter().position(|a| a.name.as_ref().is_some_and(|n| n == name))?;
        Some(attributes.remove(at))
    }

    pub fn set(&mut self, attribute: Attribute) {
        let name = attribute.name.clone();
        let attributes = &mut self.node_mut().attributes;
        match attributes.iter_mut().find(|a| a.name == name) {
            Some(a) => *a = attribute,
            None => attributes.push(attribute),
        }
    }

    /// Sets input `i`, padding with omitted inputs before it.
    pub fn set_input(&mut self, i: usize, name: Str) {
        let inputs = &mut self.node_mut().inputs;
        while inputs.len() <= i {
            inputs.push(Str::default());
        }
        inputs[i] = name;
    }

    /// Drops omitted inputs at the end.
    pub fn trim_inputs(&mut self) {
        let inputs = &mut self.node_mut().inputs;
        while inputs.last().is_some_and(|v| v.is_empty()) {
            inputs.pop();
        }
    }

    /// A name nothing in the model has, from `base`.
    pub fn fresh(&mut self, base: &str) -> Str {
        super::fresh_name(&mut self.cx.names, base)
    }

    /// A base for the names of values made for this node: its name, else its first output.
    pub fn stem(&self) -> String {
        let node = self.node();
        node.name
            .as_ref()
            .filter(|n| !n.is_empty())
            .or_else(|| node.outputs.first())
            .map(|n| n.to_string())
            .unwrap_or_else(|| "opset".to_owned())
    }

    /// Adds a constant the node reads, named from `what`: an initializer in a graph, a
    /// Constant node before the node in a function body. Returns its name.
    pub fn constant(&mut self, what: &str, tensor: Tensor) -> Str {
        // In typed fields, as exporters write small constants and as text shows them plainly.
        let tensor = crate::ir::tensor_data::raw_to_typed(&tensor).unwrap_or(tensor);
        let name = self.fresh(&format!("{}_{what}", self.stem()));
        match self.place {
            Place::Graph(g) => {
                crate::simplify::add_initializer(self.model, g, name.clone(), tensor);
                if let Some(&t) = self.model.graphs[g].initializers.last() {
                    self.cx.constants.add(&name, t);
                }
                self.added += 1;
            }
            Place::Function(_) => {
                let t = self.model.tensors.alloc(tensor);
                self.cx.constants.add(&name, t);
                let value = Attribute {
                    name: Some(Str::from("value")),
                    ty: Some(AttributeType::Tensor as i32),
                    t: Some(t),
                    ..Attribute::default()
                };
                self.before.push(Node {
                    op_type: Some(Str::from("Constant")),
                    outputs: std::iter::once(name.clone()).collect(),
                    attributes: vec![value],
                    ..Node::default()
                });
            }
        }
        name
    }

    /// Adds a scalar constant of element type `dt` (see [`Site::constant`]); `Err` for a type
    /// no constant is written in here (strings, packed 4-bit types).
    pub fn scalar(&mut self, what: &str, dt: DataType, value: f64) -> Result<Str, String> {
        let tensor = super::steps::tensor_of(dt, Vec::new(), &[value])
            .ok_or_else(|| format!("it computes in {}, which has no constants here", dt.name()))?;
        Ok(self.constant(what, tensor))
    }

    /// The values of input `i` as integers, when it is a constant (an initializer or a
    /// Constant node's output); `Err` with the reason otherwise.
    pub fn constant_ints(&self, i: usize, what: &str) -> Result<Vec<i64>, String> {
        let name = self.input(i).ok_or_else(|| format!("it has no {what} input"))?;
        self.cx.constants.ints(self.model, &name).ok_or_else(|| self.not_constant(what, &name))
    }

    /// The values of input `i` as floats, when it is a constant.
    pub fn constant_floats(&self, i: usize, what: &str) -> Result<Vec<f64>, String> {
        let name = self.input(i).ok_or_else(|| format!("it has no {what} input"))?;
        self.cx.constants.floats(self.model, &name).ok_or_else(|| self.not_constant(what, &name))
    }

    fn not_constant(&self, what: &str, name: &Str) -> String {
        format!(
            "its {what} input '{name}' is not a constant the model holds, and opset {} takes it as an attribute",
            self.to
        )
    }

    /// Input `i` is no longer read by this node: dropped from it, its constant removed at
    /// the end if nothing else reads it.
    pub fn detach(&mut self, i: usize) {
        if let Some(name) = self.input(i) {
            self.cx.detached.push(name);
        }
        let inputs = &mut self.node_mut().inputs;
        if i < inputs.len() {
            inputs[i] = Str::default();
        }
    }

    /// Whether anything reads value `name`.
    pub fn is_read(&self, name: &Str) -> bool {
        self.cx.read.contains(name)
    }
}
