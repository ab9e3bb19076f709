//! `onnx simplify`: a model made smaller without changing what it computes. Rounds of, until
//! nothing changes:
//!
//! 1. **Constant folding**: every main-graph node whose inputs are all constants is run once
//!    and its values become initializers. Running nodes needs kernels, which `core` does not
//!    have: the caller hands a [`Fold`] (the CLI gives the evaluator's).
//! 2. **Shapes inference knows**: a node whose integer values inference knows (a `Shape` of
//!    a fixed shape; a fixed size gathered from a shape whose other sizes are symbolic, and
//!    the arithmetic after it) becomes those constants.
//! 3. **Identities**: an `Identity` (or an inference-mode `Dropout` whose mask nobody reads)
//!    is removed and its readers read its input.
//! 4. **Fusions** (`fuse.rs`) and **duplicates** merged (`cse.rs`).
//! 5. **Dead nodes**: nodes none of whose outputs is read (by a node, a subgraph or the
//!    graph's outputs), and initializers nothing reads.
//!
//! Symbolic dimensions stay symbolic (fix them first, `set_dims`, to fold what depends on
//! them); the graph's inputs and outputs keep their names and types; nodes of custom domains
//! are kept as they are. Inside If, Loop and Scan bodies, the passes that need no types run
//! (no-ops, duplicates, dead nodes); what a body reads from outside stays.

mod cse;
mod fuse;
mod nops;

use std::collections::HashSet;

use crate::ir::{GraphId, Model, NodeId, Str, Tensor};

/// What folding found: for each node it ran, the values of its outputs, in order.
pub type Folded = Vec<(NodeId, Vec<Tensor>)>;

/// Runs the nodes of a model's main graph whose inputs are all constants.
pub trait Fold {
    /// The nodes of `model`'s main graph that can be folded, in graph order, with their
    /// outputs' values. A node whose kernel fails, or that would make more bytes than its
    /// constant inputs hold plus a little (unless `allow_growth`), is not folded.
    fn fold(&self, model: &Model, allow_growth: bool) -> Folded;
}

/// What simplifying did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Simplified {
    pub nodes_before: usize,
    pub nodes_after: usize,
    /// Nodes replaced by their values.
    pub folded: usize,
    /// Nodes whose integer values inference knows (shape computations) replaced by them.
    pub shapes: usize,
    /// Nodes that pass their input on (Identity, an inference-mode Dropout, a Transpose
    /// that keeps the order, a Cast to the type it has, …) removed.
    pub identities: usize,
    /// Pairs of nodes made one (a Conv and the BatchNormalization or bias Add after it, a
    /// MatMul and its bias Add as a Gemm, two Reshapes).
    pub fused: usize,
    /// Nodes and initializers that repeated another (same operator, inputs and attributes;
    /// same type, shape and bytes) merged into it.
    pub merged: usize,
    pub dead: usize,
    pub initializers_removed: usize,
    pub rounds: usize,
}

/// Options of [`simplify`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Options {
    /// Fold nodes whose results are bigger than their constant inputs (an 8-bit weight
    /// dequantized to float32, a ConstantOfShape): the model may grow.
    pub allow_growth: bool,
}

/// The rounds of simplification, to a fixed point (at most 16 rounds).
pub fn simplify(model: &mut Model, folder: &dyn Fold, options: Options) -> Simplified {
    let Some(g) = model.graph else {
        return Simplified::default();
    };
    let mut done = Simplified { nodes_before: model.graphs[g].nodes.len(), ..Simplified::default() };
    for _ in 0..16 {
        done.rounds += 1;
        let before = done.clone();
        let folded = folder.fold(model, options.allow_growth);
        done.folded += replace_by_values(model, g, folded);
        // One inference for the rest of the round: replacing nodes by their known values
        // changes no value's type, nor the values the Reshape targets are read from.
        let (types, known) = crate::infer::main_graph_types_and_values(model);
        let shapes = known_shapes(model, g, &known);
        done.shapes += replace_by_values(model, g, shapes);
        done.shapes += reshape_targets(model, g, &known);
        done.identities += nops::drop_empty_concat_inputs(model, g, &types);
        done.fused += nops::bypass_reshape_chains(model, g);
        done.identities += nops::remove_nops(model, g, &types);
        done.fused += fuse::fuse(model, g, &types);
        done.identities += fuse::drop_zero_states(model, g);
        done.merged += cse::merge_duplicates(model, g);
        let (dead, initializers) = remove_dead(model, g);
        done.dead += dead;
        done.initializers_removed += initializers;
        // Inside If, Loop and Scan bodies (inference's types and folding are the main
        // graph's): no-ops that need no type, duplicates, dead nodes.
        let no_types = crate::infer::GraphTypes::default();
        for sub in subgraphs(model, g) {
            done.identities += nops::remove_nops(model, sub, &no_types);
            done.merged += cse::merge_duplicates(model, sub);
            let (dead, initializers) = remove_dead(model, sub);
            done.dead += dead;
            done.initializers_removed += initializers;
        }
        let unchanged = Simplified { rounds: done.rounds, ..before };
        if done == unchanged {
            break;
        }
    }
    drop_stale_value_info(model, g);
    done.nodes_after = model.graphs[g].nodes.len();
    done
}

/// Every graph inside graph `g`'s nodes, at any depth, outermost first.
fn subgraphs(model: &Model, g: GraphId) -> Vec<GraphId> {
    let mut found = Vec::new();
    let mut next = vec![g];
    while let Some(graph) = next.pop() {
        for &n in &model.graphs[graph].nodes {
            for sub in model.nodes[n].attributes.iter().flat_map(|a| a.subgraphs()) {
                found.push(sub);
                next.push(sub);
            }
        }
    }
    found
}

/// Every name read inside the subgraphs of the nodes of graph `g`, at any depth (a [`Fold`]
/// counts them as readers).
pub fn subgraph_reads(model: &Model, g: GraphId) -> HashSet<Str> {
    model.graphs[g].nodes.iter().flat_map(|&n| crate::ir::names_read_inside(model, n)).collect()
}

/// Names graph `g` gives out: its outputs.
pub(super) fn graph_outputs(model: &Model, g: GraphId) -> HashSet<Str> {
    model.graphs[g].outputs.iter().filter_map(|v| v.name.clone()).collect()
}

/// Replaces each folded node by initializers holding those of its values something still
/// reads (a node that is not folded, a subgraph, a graph output); removes the nodes.
fn replace_by_values(model: &mut Model, g: GraphId, folded: Folded) -> usize {
    if folded.is_empty() {
        return 0;
    }
    let gone: HashSet<NodeId> = folded.iter().map(|(n, _)| *n).collect();
    let mut read: HashSet<Str> = graph_outputs(model, g);
    read.extend(subgraph_reads(model, g));
    for &n in &model.graphs[g].nodes {
        if !gone.contains(&n) {
            read.extend(model.nodes[n].inputs.iter().filter(|i| !i.is_empty()).cloned());
        }
    }
    let count = folded.len();
    for (n, values) in folded {
        let outputs = model.nodes[n].outputs.clone();
        for (name, value) in outputs.into_iter().zip(values) {
            if name.is_empty() || !read.contains(&name) {
                continue;
            }
            add_initializer(model, g, name, value);
        }
    }
    model.graphs[g].nodes.retain(|n| !gone.contains(n));
    count
}

/// The default-domain nodes every output of which inference knows as plain integers (a
/// `Shape` of a fixed shape, a `Gather` of a fixed size from a shape with symbolic ones,
/// the arithmetic and `Concat` after them), with those values.
fn known_shapes(model: &Model, g: GraphId, known: &foldhash::HashMap<Str, crate::infer::KnownInts>) -> Folded {
    let mut found = Vec::new();
    for &n in &model.graphs[g].nodes {
        let node = &model.nodes[n];
        let is_constant = node.op_type.as_ref().is_some_and(|o| o.as_bytes() == b"Constant");
        if node.schema_domain() != Some("") || is_constant || node.outputs.is_empty() {
            continue;
        }
        let values: Option<Vec<Tensor>> = node
            .outputs
            .iter()
            .map(|o| {
                let k = known.get(o)?;
                let dims = if k.scalar { Vec::new() } else { vec![k.values.len() as i64] };
                integer_tensor(k.elem_type, dims, &k.all()?)
            })
            .collect();
        if let Some(values) = values {
            found.push((n, values));
        }
    }
    found
}

/// Reshapes to a computed shape of which inference knows every size but one (the batch, a
/// symbolic length), all known ones positive: the shape becomes a constant with `-1` there,
/// which Reshape computes from the element count, and the computation is left to the
/// dead-node pass. (A known size of 0 would mean "copy" and a `-1` already there would be a
/// second one: neither is rewritten.)
fn reshape_targets(model: &mut Model, g: GraphId, known: &foldhash::HashMap<Str, crate::infer::KnownInts>) -> usize {
    let constants: HashSet<Str> =
        model.graphs[g].initializers.iter().filter_map(|&t| model.tensors[t].name.clone()).collect();
    let mut rewrites = Vec::new();
    for &n in &model.graphs[g].nodes {
        let node = &model.nodes[n];
        let is_reshape = node.op_type.as_ref().is_some_and(|o| o.as_bytes() == b"Reshape");
        if node.schema_domain() != Some("")
            || !is_reshape
            || node.inputs.len() != 2
            || constants.contains(&node.inputs[1])
        {
            continue;
        }
        let Some(k) = known.get(&node.inputs[1]).filter(|k| !k.scalar) else { continue };
        let unknown = k.values.iter().filter(|v| v.is_none()).count();
        if unknown != 1 || k.values.iter().flatten().any(|&v| v <= 0) {
            continue;
        }
        let target: Vec<i64> = k.values.iter().map(|v| v.unwrap_or(-1)).collect();
        if let Some(t) = integer_tensor(k.elem_type, vec![target.len() as i64], &target) {
            rewrites.push((n, t));
        }
    }
    let count = rewrites.len();
    for (n, tensor) in rewrites {
        let base = format!("{}/shape", model.nodes[n].outputs[0].escaped());
        let name = fuse::fresh_name(model, g, &base);
        add_initializer(model, g, name.clone(), tensor);
        model.nodes[n].inputs[1] = name;
    }
    count
}

/// A tensor of an integer type holding `values`; `None` for a type whose values these do
/// not fit.
pub(super) fn integer_tensor(elem_type: i32, dims: Vec<i64>, values: &[i64]) -> Option<Tensor> {
    use crate::ir::DataType;
    let raw: Vec<u8> = match DataType::from_code(elem_type)? {
        DataType::Int64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        DataType::Int32 => {
            let v: Option<Vec<i32>> = values.iter().map(|&x| i32::try_from(x).ok()).collect();
            v?.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        _ => return None,
    };
    Some(Tensor { dims, data_type: Some(elem_type), raw_data: Some(raw.into()), ..Tensor::default() })
}

/// Renames every read of `from` to `to` in graph `g` and the subgraphs inside it.
pub(super) fn rename_reads(model: &mut Model, g: GraphId, from: &Str, to: &Str) {
    let mut graphs = vec![g];
    while let Some(graph) = graphs.pop() {
        for i in 0..model.graphs[graph].nodes.len() {
            let n = model.graphs[graph].nodes[i];
            for input in model.nodes[n].inputs.iter_mut() {
                if input == from {
                    *input = to.clone();
                }
            }
            graphs.extend(model.nodes[n].attributes.iter().flat_map(|a| a.subgraphs()));
        }
        if graph != g {
            for v in &mut model.graphs[graph].outputs {
                if v.name.as_ref() == Some(from) {
                    v.name = Some(to.clone());
                }
            }
        }
    }
}

/// Removes the nodes none of whose outputs is read, last to first (so a chain goes in one
/// pass), then the initializers nothing reads (those listed as graph inputs stay).
fn remove_dead(model: &mut Model, g: GraphId) -> (usize, usize) {
    let mut read: HashSet<Str> = graph_outputs(model, g);
    read.extend(subgraph_reads(model, g));
    let mut keep = vec![true; model.graphs[g].nodes.len()];
    for (k, &n) in model.graphs[g].nodes.iter().enumerate().rev() {
        let node = &model.nodes[n];
        if node.outputs.iter().all(|o| o.is_empty() || !read.contains(o)) {
            keep[k] = false;
            continue;
        }
        read.extend(node.inputs.iter().filter(|i| !i.is_empty()).cloned());
    }
    let dead = keep.iter().filter(|k| !**k).count();
    let mut k = 0;
    model.graphs[g].nodes.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    // Before IR 4 every initializer is listed as an input too: an unread one goes with its
    // listing. From IR 4 on, an initializer listed as an input is a default the caller may
    // replace: it stays.
    let listings = listed_as_inputs(model);
    let listed: HashSet<Str> = model.graphs[g].inputs.iter().filter_map(|v| v.name.clone()).collect();
    let tensors = &model.tensors;
    let before = model.graphs[g].initializers.len();
    let mut gone: HashSet<Str> = HashSet::new();
    model.graphs[g].initializers.retain(|t| {
        let Some(name) = tensors[*t].name.as_ref() else { return false };
        let unread = !read.contains(name) && (listings || !listed.contains(name));
        if unread {
            gone.insert(name.clone());
        }
        !unread
    });
    if listings {
        model.graphs[g].inputs.retain(|v| v.name.as_ref().is_none_or(|n| !gone.contains(n)));
    }
    (dead, before - model.graphs[g].initializers.len())
}

/// Adds `tensor` to graph `g` as the initializer `name` (before IR 4 also listed as an input
/// with its type, as that version requires).
pub(crate) fn add_initializer(model: &mut Model, g: GraphId, name: Str, mut tensor: Tensor) {
    tensor.name = Some(name.clone());
    if listed_as_inputs(model) {
        let ty = crate::infer::tensor_type(&tensor);
        model.graphs[g].inputs.push(crate::ir::ValueInfo { name: Some(name), ty: Some(ty), ..Default::default() });
    }
    let t = model.tensors.alloc(tensor);
    model.graphs[g].initializers.push(t);
}

/// Whether the model's IR version (before 4) lists every initializer as a graph input too.
fn listed_as_inputs(model: &Model) -> bool {
    model.ir_version.is_some_and(|v| v < 4)
}

/// Drops the main graph's value_info entries for values no longer in it.
fn drop_stale_value_info(model: &mut Model, g: GraphId) {
    let mut defined: HashSet<Str> = model.graphs[g].inputs.iter().filter_map(|v| v.name.clone()).collect();
    for &t in &model.graphs[g].initializers {
        defined.extend(model.tensors[t].name.clone());
    }
    for &n in &model.graphs[g].nodes {
        defined.extend(model.nodes[n].outputs.iter().cloned());
    }
    model.graphs[g].value_info.retain(|v| v.name.as_ref().is_some_and(|n| defined.contains(n)));
}
