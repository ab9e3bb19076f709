//! The constants a conversion may turn into attributes: initializers and Constant node
//! outputs, read as integers or floats.

use std::collections::HashMap;

use crate::ir::{AttributeValue, Model, NodeId, Str, Tensor, TensorId};

/// The constants of a model by name: initializers and Constant node outputs, in every graph
/// and function body. A name defined twice (in two scopes) is left out.
pub(super) struct Constants(HashMap<Str, Option<Source>>);

#[derive(Clone, Copy)]
enum Source {
    Initializer(TensorId),
    Node(NodeId),
}

impl Constants {
    pub(super) fn of(model: &Model) -> Constants {
        let mut found: HashMap<Str, Option<Source>> = HashMap::new();
        let mut add = |name: &Str, source: Source| {
            found.entry(name.clone()).and_modify(|s| *s = None).or_insert(Some(source));
        };
        let bodies = model.function_store.iter().map(|(_, f)| &f.nodes);
        for (_, graph) in model.graphs.iter() {
            for &t in &graph.initializers {
                if let Some(name) = &model.tensors[t].name {
                    add(name, Source::Initializer(t));
                }
            }
        }
        let graph_nodes = model.graphs.iter().map(|(_, g)| &g.nodes);
        for nodes in graph_nodes.chain(bodies) {
            for &n in nodes {
                let node = &model.nodes[n];
                if node.schema_domain() == Some("")
                    && node.op_type.as_ref().is_some_and(|o| o == "Constant")
                    && let Some(out) = node.outputs.first()
                {
                    add(out, Source::Node(n));
                }
            }
        }
        Constants(found)
    }

    /// A constant the conversion made, so that a later step (of a node it inserted) reads it.
    pub(super) fn add(&mut self, name: &Str, t: TensorId) {
        self.0.insert(name.clone(), Some(Source::Initializer(t)));
    }

    /// The tensor a constant holds (a Constant node's `value`), or its values straight from
    /// the node's other value attributes.
    fn values(&self, model: &Model, name: &Str) -> Option<Values> {
        match (*self.0.get(name)?)? {
            Source::Initializer(t) => Some(Values::Tensor(t)),
            Source::Node(n) => {
                let a = model.nodes[n].attributes.first()?;
                Some(match a.value()? {
                    AttributeValue::Tensor(t) => Values::Tensor(t),
                    AttributeValue::Int(v) => Values::Ints(vec![v]),
                    AttributeValue::Ints(v) => Values::Ints(v.to_vec()),
                    AttributeValue::Float(v) => Values::Floats(vec![f64::from(v)]),
                    AttributeValue::Floats(v) => Values::Floats(v.iter().map(|&f| f64::from(f)).collect()),
                    _ => return None,
                })
            }
        }
    }

    pub(super) fn ints(&self, model: &Model, name: &Str) -> Option<Vec<i64>> {
        match self.values(model, name)? {
            Values::Tensor(t) => crate::ir::tensor_data::int_values(&model.tensors[t]),
            Values::Ints(v) => Some(v),
            Values::Floats(_) => None,
        }
    }

    pub(super) fn floats(&self, model: &Model, name: &Str) -> Option<Vec<f64>> {
        match self.values(model, name)? {
            Values::Tensor(t) => float_values(&model.tensors[t]),
            Values::Floats(v) => Some(v),
            Values::Ints(v) => Some(v.iter().map(|&x| x as f64).collect()),
        }
    }
}

enum Values {
    Tensor(TensorId),
    Ints(Vec<i64>),
    Floats(Vec<f64>),
}

/// A numeric tensor's values held in the model, as f64.
fn float_values(t: &Tensor) -> Option<Vec<f64>> {
    if t.is_external() {
        return None;
    }
    let (width, read) = crate::print::digest::element_reader(t.elem_type()?)?;
    let mut t = t.clone();
    if t.raw_data.as_ref().is_none_or(|r| r.is_empty()) {
        crate::ir::tensor_data::typed_to_raw(&mut t).ok()?;
    }
    let count = usize::try_from(t.element_count()?).ok()?;
    let raw = t.raw_data.unwrap_or_default();
    if !raw.len().is_multiple_of(width) || raw.len() / width != count {
        return None;
    }
    Some(raw.chunks_exact(width).map(read).collect())
}
