//! Shape and type inference (semantics spec §2): for every node, the types and shapes of
//! its outputs from those of its inputs, its attributes and, where a shape is computed
//! inside the graph (`Shape → Gather → Concat → Reshape`), the values that computation
//! carries (data propagation, [`env::Known`]).
//!
//! Layout: [`env`] holds what is known about each value; [`ops`] has one rule per operator
//! family, dispatched by name; [`broadcast`] the multidirectional broadcasting rule many of
//! them share; [`call`] infers through function bodies (model-local functions, and schema
//! bodies for operators without a rule). A node whose operator has neither a rule nor a
//! body gets its output element types from the schema's type constraints alone, with
//! unknown shapes.
//!
//! Status: the rules cover the operators the corpus uses most; `tests/tests/infer_corpus.rs`
//! measures agreement with onnx 1.23.2 value by value.

mod broadcast;
mod call;
mod constraints;
mod env;
mod merge;
mod ops;
#[cfg(test)]
mod tests;

pub use constraints::constraint_spelling;
pub use env::{Env, Known, tensor_type};
pub use merge::{conflicts, contradiction};

use crate::diagnostic::Diagnostic;
use crate::ir::{GraphId, Model, Str, Type};

/// What inference found for one graph: the type of every value it could type, by name.
#[derive(Debug, Default)]
pub struct GraphTypes {
    pub types: foldhash::HashMap<Str, Type>,
}

/// Infers the main graph from its declared inputs and its initializers. Declared output
/// types and value_info are not used: the result is what the graph itself implies.
pub fn infer_main_graph(model: &Model) -> GraphTypes {
    let Some(g) = model.graph else {
        return GraphTypes::default();
    };
    let opset = model.opset_version("").unwrap_or(1);
    let mut env = Env::new(model, opset);
    infer_graph(model, g, &mut env);
    GraphTypes { types: env.into_types() }
}

/// What inference found in every graph of a model: the main graph and each subgraph.
#[derive(Debug, Default)]
pub struct ModelTypes {
    pub main: Option<GraphId>,
    pub graphs: foldhash::HashMap<GraphId, foldhash::HashMap<Str, Type>>,
    /// Every graph node input whose inferred type its operator's type constraints reject
    /// (`input-type`), or that disagrees with another input bound to the same type
    /// parameter (`type-parameter-mismatch`): what onnx's strict inference rejects.
    pub violations: Vec<Diagnostic>,
}

impl ModelTypes {
    /// The inferred type of `name` as the graph `g` sees it.
    pub fn get(&self, g: GraphId, name: &Str) -> Option<&Type> {
        self.graphs.get(&g)?.get(name)
    }
}

/// Like [`infer_main_graph`], but keeps the types found inside subgraphs too (If branches,
/// Loop bodies), for tools that show the type of any value (the language server).
pub fn infer_model(model: &Model) -> ModelTypes {
    let Some(g) = model.graph else {
        return ModelTypes::default();
    };
    let mut env = Env::new(model, model.opset_version("").unwrap_or(1));
    env.keep_subgraph_types();
    env.collect_violations();
    infer_graph(model, g, &mut env);
    let violations = env.take_violations();
    let (main, mut graphs) = env.into_all_types();
    graphs.insert(g, main);
    ModelTypes { main: Some(g), graphs, violations }
}

/// Infers a subgraph in a new scope (outer values visible) and returns the types of its
/// outputs: declared types refined by inference (as onnx merges them), inferred types
/// where nothing is declared.
pub(crate) fn infer_subgraph(
    model: &Model,
    id: GraphId,
    env: &mut Env<'_>,
    inputs: &[Option<Type>],
) -> Vec<Option<Type>> {
    env.push_scope();
    let g = &model.graphs[id];
    for (v, given) in g.inputs.iter().zip(inputs.iter().chain(std::iter::repeat(&None))) {
        if let (Some(name), Some(ty)) = (&v.name, given.as_ref().or(v.ty.as_ref())) {
            env.set_type(name.clone(), ty.clone());
        }
    }
    infer_body(model, id, env);
    let outputs = g
        .outputs
        .iter()
        .map(|v| match (v.ty.as_ref(), v.name.as_ref().and_then(|n| env.ty(n))) {
            (Some(declared), Some(inferred)) => Some(merge::refine(declared, inferred)),
            (declared, inferred) => inferred.or(declared).cloned(),
        })
        .collect();
    env.leave_subgraph(id);
    outputs
}

fn infer_graph(model: &Model, id: GraphId, env: &mut Env<'_>) {
    let g = &model.graphs[id];
    for v in &g.inputs {
        if let (Some(name), Some(ty)) = (&v.name, &v.ty) {
            env.set_type(name.clone(), ty.clone());
        }
    }
    infer_body(model, id, env);
}

/// Initializers, then every node in order.
fn infer_body(model: &Model, id: GraphId, env: &mut Env<'_>) {
    let g = &model.graphs[id];
    let outputs: usize = g.nodes.iter().map(|&n| model.nodes[n].outputs.len()).sum();
    env.reserve(g.inputs.len() + g.initializers.len() + outputs);
    for &t in &g.initializers {
        env.add_initializer(t);
    }
    env.enter_graph(id);
    for &n in &g.nodes {
        ops::infer_node(model, n, env);
        env.check_constraints(id, n);
    }
}

/// Records inferred types in the main graph's `value_info` for every node output that is
/// neither a graph output nor already described there; returns how many were added.
/// Declared types are left as they are.
pub fn annotate(model: &mut Model) -> usize {
    let Some(g) = model.graph else {
        return 0;
    };
    let mut inferred = infer_main_graph(model);
    let graph = &model.graphs[g];
    // Borrowed names and types moved out of the result: nothing is copied but the entries.
    let mut described: foldhash::HashSet<&[u8]> =
        graph.outputs.iter().chain(&graph.value_info).filter_map(|v| v.name.as_ref().map(Str::as_bytes)).collect();
    let mut added = Vec::new();
    for &n in &graph.nodes {
        for name in &model.nodes[n].outputs {
            if name.is_empty() || !described.insert(name.as_bytes()) {
                continue;
            }
            if let Some(ty) = inferred.types.remove(name) {
                added.push(crate::ir::ValueInfo { name: Some(name.clone()), ty: Some(ty), ..Default::default() });
            }
        }
    }
    let count = added.len();
    model.graphs[g].value_info.extend(added);
    count
}
