//! `onnx cost`: what a model costs to run, per node and in total: multiply-accumulates
//! (MACs, by each operator's rule in [`rules`], kept in the operator table), parameters and
//! weight bytes (the initializers each node is the first to read, as onnx-tool counts them),
//! the bytes of every value a node makes, and the peak of activation memory live at once
//! when the nodes run in the graph's order. Shapes come from inference; a symbolic dimension
//! stays a symbol, so counts are polynomials in them ([`Count`]).
//!
//! The main graph's nodes are counted. A node holding subgraphs (If, Loop, Scan) is listed
//! with the parameters its bodies read but no MACs: how often a body runs is a value known
//! only when the model runs.

mod count;
pub mod rules;

use std::collections::HashMap;

pub use count::{Count, grouped};

use crate::infer::{GraphTypes, infer_main_graph};
use crate::ir::{DataType, DimValue, GraphId, Model, NodeId, Str, Type, TypeValue};

/// What one node costs.
#[derive(Debug)]
pub struct NodeCost {
    pub node: NodeId,
    pub macs: Macs,
    /// Elements of the initializers this node is the first to read (in its subgraphs too).
    pub params: u64,
    /// Their bytes.
    pub param_bytes: u64,
    /// Bytes of the values it makes; `None` when an output's type or shape is unknown.
    pub output_bytes: Option<Count>,
}

/// A node's multiply-accumulates, or why there is no count.
#[derive(Debug, PartialEq)]
pub enum Macs {
    Counted(Count),
    /// Its rule needs a shape inference did not find.
    ShapeUnknown,
    /// Its operator has no cost rule (a custom operator, a model-local function, …).
    NoRule,
    /// It holds subgraphs, whose trip counts are run-time values.
    Subgraphs,
}

/// What a model costs.
#[derive(Debug, Default)]
pub struct ModelCost {
    /// The main graph's nodes, in graph order.
    pub nodes: Vec<NodeCost>,
    /// The MACs of every counted node.
    pub macs: Count,
    pub params: u64,
    pub param_bytes: u64,
    /// The bytes of every value the counted nodes make (those of known size).
    pub activation_bytes: Count,
    /// The most activation bytes live at once (graph inputs and node outputs, from where
    /// they are made to their last use; weights not included), and the node at which that
    /// happens; `None` when a size is symbolic or unknown.
    pub peak: Option<(u128, usize)>,
}

impl ModelCost {
    /// Nodes whose MACs are not counted.
    pub fn uncounted(&self) -> impl Iterator<Item = &NodeCost> {
        self.nodes.iter().filter(|n| !matches!(n.macs, Macs::Counted(_)))
    }
}

/// The shape of a value as counts; `None` when it is not a tensor with a known shape or a
/// dimension is unknown.
fn shape_of(ty: Option<&Type>) -> Option<Vec<Count>> {
    let Some(TypeValue::Tensor(t)) = &ty?.value else {
        return None;
    };
    t.shape
        .as_ref()?
        .dims
        .iter()
        .map(|d| match &d.value {
            Some(DimValue::Value(v)) if *v >= 0 => Some(Count::of((*v).into())),
            Some(DimValue::Param(p)) => Some(Count::parse_dim(&p.escaped())),
            _ => None,
        })
        .collect()
}

/// Bytes of a value of type `ty`, from its element type and shape.
fn bytes_of(ty: Option<&Type>) -> Option<Count> {
    let Some(TypeValue::Tensor(t)) = &ty?.value else {
        return None;
    };
    let bits = DataType::from_code(t.elem_type?)?.bits();
    let elements = Count::product(&shape_of(ty)?)?;
    if bits.is_multiple_of(8) {
        return elements.scaled((bits / 8).into());
    }
    // Packed sub-byte elements: whole bytes only when the count is known.
    let n = u64::try_from(elements.known()?).ok()?;
    Some(Count::of(n.checked_mul(bits)?.div_ceil(8).into()))
}

/// The initializers of the subgraphs of `node`, at any depth, as (elements, bytes).
fn subgraph_weights(model: &Model, node: NodeId) -> (u64, u64) {
    let mut graphs: Vec<GraphId> = model.nodes[node].attributes.iter().flat_map(|a| a.subgraphs()).collect();
    let (mut elements, mut bytes) = (0u64, 0u64);
    while let Some(g) = graphs.pop() {
        for &t in &model.graphs[g].initializers {
            let tensor = &model.tensors[t];
            let count = tensor.element_count().unwrap_or(0);
            elements = elements.saturating_add(count);
            bytes = bytes.saturating_add(tensor.elem_type().and_then(|e| e.raw_byte_size(count)).unwrap_or(0));
        }
        for &n in &model.graphs[g].nodes {
            graphs.extend(model.nodes[n].attributes.iter().flat_map(|a| a.subgraphs()));
        }
    }
    (elements, bytes)
}

/// The MACs of node `n` of `model`, from the types of its inputs and outputs (however a
/// caller found them: the browser and the language server have theirs).
pub fn node_macs<'t>(
    model: &Model,
    n: NodeId,
    input: impl Fn(usize) -> Option<&'t Type>,
    output: impl Fn(usize) -> Option<&'t Type>,
) -> Macs {
    let node = &model.nodes[n];
    if node.attributes.iter().any(|a| a.subgraphs().next().is_some()) {
        return Macs::Subgraphs;
    }
    let table = crate::infer::operator_table();
    let rule = node.schema_domain().and_then(|d| table.get(d, node.op_type.as_ref()?.as_str()?)?.cost());
    let Some(rule) = rule else {
        return Macs::NoRule;
    };
    let inputs = (0..node.inputs.len()).map(|i| shape_of(input(i))).collect();
    let outputs = (0..node.outputs.len()).map(|i| shape_of(output(i))).collect();
    rule.macs(&rules::Ctx { node, inputs, outputs }).map_or(Macs::ShapeUnknown, Macs::Counted)
}

/// The cost of `model`'s main graph, with the shapes inference finds from its declared
/// inputs (fix symbolic dimensions first, `set_dims`, for counts in numbers).
pub fn model_cost(model: &Model) -> ModelCost {
    let types = infer_main_graph(model);
    cost_with_types(model, &types)
}

/// The cost of `model`'s main graph with types inference found already (the browser's).
pub fn cost_with_types(model: &Model, types: &GraphTypes) -> ModelCost {
    let Some(g) = model.graph else {
        return ModelCost::default();
    };
    let graph = &model.graphs[g];
    let tensor_ids: HashMap<&Str, crate::ir::TensorId> =
        graph.initializers.iter().filter_map(|&t| Some((model.tensors[t].name.as_ref()?, t))).collect();
    let mut weights_read: std::collections::HashSet<&Str> = std::collections::HashSet::new();
    let mut cost = ModelCost::default();
    let mut reads = Vec::new();
    let lookup =
        |names: &[Str], i: usize| names.get(i).filter(|name| !name.is_empty()).and_then(|name| types.types.get(name));
    for &n in &graph.nodes {
        let node = &model.nodes[n];
        reads.clear();
        reads.extend(node.inputs.iter().filter(|i| !i.is_empty()).cloned());
        let holds_graphs = node.attributes.iter().any(|a| a.subgraphs().next().is_some());
        if holds_graphs {
            reads.extend(crate::ir::names_read_inside(model, n));
        }
        let (mut params, mut param_bytes) = if holds_graphs { subgraph_weights(model, n) } else { (0, 0) };
        for name in &reads {
            let Some((&key, &t)) = tensor_ids.get_key_value(name) else { continue };
            if weights_read.insert(key) {
                let tensor = &model.tensors[t];
                let count = tensor.element_count().unwrap_or(0);
                params = params.saturating_add(count);
                param_bytes =
                    param_bytes.saturating_add(tensor.elem_type().and_then(|e| e.raw_byte_size(count)).unwrap_or(0));
            }
        }
        let output_bytes = if node.op_type.as_ref().is_some_and(|o| o == "Constant") {
            // onnx-tool counts a Constant's value as a weight, not an activation.
            Some(Count::zero())
        } else {
            node.outputs
                .iter()
                .filter(|o| !o.is_empty())
                .try_fold(Count::zero(), |sum, o| sum.plus(&bytes_of(types.types.get(o))?))
        };
        let macs = node_macs(model, n, |i| lookup(&node.inputs, i), |i| lookup(&node.outputs, i));
        if let Macs::Counted(m) = &macs {
            cost.macs = cost.macs.plus(m).unwrap_or(cost.macs.clone());
        }
        if let Some(b) = &output_bytes {
            cost.activation_bytes = cost.activation_bytes.plus(b).unwrap_or(cost.activation_bytes.clone());
        }
        cost.params = cost.params.saturating_add(params);
        cost.param_bytes = cost.param_bytes.saturating_add(param_bytes);
        cost.nodes.push(NodeCost { node: n, macs, params, param_bytes, output_bytes });
    }
    cost.peak = peak_live_bytes(model, g, types);
    cost
}

/// The most bytes of activations live at once when the nodes of graph `g` run in order:
/// each graph input from the start and each node output from its node, to the last node
/// that reads it (inside a subgraph, the node holding it); graph outputs to the end. `None`
/// when a live value's size is symbolic or unknown.
fn peak_live_bytes(model: &Model, g: GraphId, types: &GraphTypes) -> Option<(u128, usize)> {
    let graph = &model.graphs[g];
    let initializers: std::collections::HashSet<&Str> =
        graph.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()).collect();
    let end = graph.nodes.len();
    // Where each value is born and where it is last read, by name.
    let mut born: HashMap<Str, usize> = HashMap::new();
    let mut last: HashMap<Str, usize> = HashMap::new();
    for v in &graph.inputs {
        if let Some(name) = v.name.as_ref().filter(|n| !initializers.contains(n)) {
            born.insert(name.clone(), 0);
            last.insert(name.clone(), 0);
        }
    }
    let mut reads = Vec::new();
    for (i, &n) in graph.nodes.iter().enumerate() {
        let node = &model.nodes[n];
        reads.clear();
        reads.extend(node.inputs.iter().filter(|x| !x.is_empty()).cloned());
        reads.extend(crate::ir::names_read_inside(model, n));
        for name in &reads {
            if let Some(l) = last.get_mut(name) {
                *l = i;
            }
        }
        for o in node.outputs.iter().filter(|o| !o.is_empty()) {
            born.insert(o.clone(), i);
            last.insert(o.clone(), i);
        }
    }
    for v in &graph.outputs {
        if let Some(l) = v.name.as_ref().and_then(|name| last.get_mut(name)) {
            *l = end;
        }
    }
    // Sizes change where values are born (+) and after their last read (-).
    let mut delta = vec![0i128; end + 2];
    for (name, &b) in &born {
        let bytes = u128::try_from(bytes_of(types.types.get(name))?.known()?).ok()? as i128;
        delta[b] = delta[b].checked_add(bytes)?;
        let l = last[name];
        delta[l + 1] = delta[l + 1].checked_sub(bytes)?;
    }
    let (mut live, mut best) = (0i128, (0u128, 0usize));
    for (i, d) in delta.iter().enumerate().take(end.max(1)) {
        live = live.checked_add(*d)?;
        if live as u128 > best.0 {
            best = (live as u128, i);
        }
    }
    Some(best)
}
