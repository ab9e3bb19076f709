//! A sub-model cut out of a model: the nodes that compute chosen outputs from chosen inputs,
//! as `onnx.utils.extract_model` cuts it (the same nodes, in the model's order, with the
//! initializers and value descriptions they use and the local functions they call), except
//! that a node inside an If, Loop or Scan body that reads a value of the main graph makes the
//! node computing that value part of the cut too (onnx's extractor follows only a node's own
//! inputs, and leaves such a model broken). Every problem is reported at once: names that are
//! no value of the model, values the cut needs that nothing gives it, and inputs or outputs
//! whose type nothing says. The types of values the model does not describe come from
//! inference as onnx's `infer_shapes` runs it (from the declared types), as onnx's
//! `extract_model` does by default.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::ir::{Graph, GraphId, Model, NodeId, Str, TensorId, ValueInfo};

/// What keeps a cut from being made, all of it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ExtractError {
    /// Names given that no value of the main graph has.
    pub unknown: Vec<String>,
    /// Values the cut's nodes read that are neither chosen inputs, nor initializers, nor
    /// computed inside the cut, each with the first node (by its output) that needs it.
    pub missing: Vec<(String, String)>,
    /// Chosen inputs and outputs whose type neither the model nor inference gives.
    pub untyped: Vec<String>,
}

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.unknown.is_empty() {
            parts.push(format!("no value of the main graph is named {}", self.unknown.join(", ")));
        }
        if !self.missing.is_empty() {
            let listed: Vec<String> = self.missing.iter().map(|(name, by)| format!("{name} (read by {by})")).collect();
            parts.push(format!(
                "the cut needs {} more input(s), which nothing inside it computes: {}",
                self.missing.len(),
                listed.join(", ")
            ));
        }
        if !self.untyped.is_empty() {
            parts.push(format!("no type is known for {}", self.untyped.join(", ")));
        }
        f.write_str(&parts.join("; "))
    }
}

/// What the cut holds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    pub nodes: usize,
    pub initializers: usize,
    pub functions: usize,
}

/// Cuts `model` down to the nodes that compute `outputs` from `inputs` (names of values of
/// its main graph), in place.
pub fn extract(model: &mut Model, inputs: &[Str], outputs: &[Str]) -> Result<Extracted, ExtractError> {
    let Some(main) = model.graph else {
        return Err(ExtractError {
            unknown: inputs.iter().chain(outputs).map(Str::escaped).collect(),
            ..Default::default()
        });
    };
    // Inferred descriptions first, as onnx's extractor reads the model after `infer_shapes`.
    let inferred = crate::infer::infer_main_graph_as_onnx(model);
    let g = &model.graphs[main];
    let described_names: HashSet<&Str> =
        g.value_info.iter().chain(&g.inputs).chain(&g.outputs).filter_map(|v| v.name.as_ref()).collect();
    let mut added: Vec<ValueInfo> = Vec::new();
    for &n in &g.nodes {
        for out in model.nodes[n].outputs.iter().filter(|o| !described_names.contains(o)) {
            if let Some(ty) = inferred.types.get(out) {
                added.push(ValueInfo { name: Some(out.clone()), ty: Some(ty.clone()), ..ValueInfo::default() });
            }
        }
    }
    // Descriptions as onnx's extractor reads them: value_info, then inputs, then outputs.
    let mut described: HashMap<&Str, &ValueInfo> = HashMap::new();
    for v in g.value_info.iter().chain(&added).chain(&g.inputs).chain(&g.outputs) {
        if let Some(name) = &v.name {
            // A graph output declared without a type keeps the type inference found.
            if v.ty.is_some() || !described.contains_key(name) {
                described.insert(name, v);
            }
        }
    }
    let initializers: HashMap<&Str, TensorId> =
        g.initializers.iter().filter_map(|&t| Some((model.tensors[t].name.as_ref()?, t))).collect();
    let mut producer: HashMap<&Str, usize> = HashMap::new();
    for (i, &n) in g.nodes.iter().enumerate() {
        for out in model.nodes[n].outputs.iter().filter(|o| !o.as_bytes().is_empty()) {
            producer.entry(out).or_insert(i);
        }
    }
    let mut error = ExtractError::default();
    for name in inputs.iter().chain(outputs) {
        let known = described.contains_key(name) || producer.contains_key(name) || initializers.contains_key(name);
        if !known {
            error.unknown.push(name.escaped());
        } else if described.get(name).is_none_or(|v| v.ty.is_none()) {
            error.untyped.push(name.escaped());
        }
    }

    // From the outputs back to the inputs.
    let stop: HashSet<&Str> = inputs.iter().collect();
    let mut reached: Vec<bool> = vec![false; g.nodes.len()];
    let mut stack: Vec<&Str> = outputs.iter().collect();
    let mut reads_of: HashMap<usize, Vec<Str>> = HashMap::new();
    while let Some(name) = stack.pop() {
        if stop.contains(name) {
            continue;
        }
        let Some(&i) = producer.get(name) else { continue };
        if std::mem::replace(&mut reached[i], true) {
            continue;
        }
        let reads = names_read(model, g.nodes[i]);
        reads_of.insert(i, reads);
        stack.extend(reads_of[&i].iter().filter_map(|r| producer.get_key_value(r).map(|(k, _)| *k)));
    }
    let kept: Vec<usize> = (0..g.nodes.len()).filter(|&i| reached[i]).collect();

    // Every value the kept nodes read must come from somewhere inside the cut.
    let computed: HashSet<&Str> = kept.iter().flat_map(|&i| model.nodes[g.nodes[i]].outputs.iter()).collect();
    let mut needed: HashSet<Str> = HashSet::new();
    let mut seen_missing: HashSet<Str> = HashSet::new();
    for &i in &kept {
        for read in &reads_of[&i] {
            needed.insert(read.clone());
            let given = stop.contains(read) || computed.contains(read) || initializers.contains_key(read);
            if !given && seen_missing.insert(read.clone()) {
                let by = model.nodes[g.nodes[i]].outputs.first().map_or_else(|| format!("node {i}"), Str::escaped);
                error.missing.push((read.escaped(), by));
            }
        }
    }
    if error != ExtractError::default() {
        return Err(error);
    }

    let value = |name: &Str| described.get(name).map(|v| (*v).clone()).unwrap_or_default();
    let mut new_inputs: Vec<ValueInfo> = inputs.iter().map(value).collect();
    let new_outputs: Vec<ValueInfo> = outputs.iter().map(value).collect();
    let io: HashSet<&Str> = inputs.iter().chain(outputs).collect();
    let touched: HashSet<&Str> =
        kept.iter().flat_map(|&i| model.nodes[g.nodes[i]].outputs.iter()).chain(needed.iter()).collect();
    let value_info: Vec<ValueInfo> = g
        .value_info
        .iter()
        .chain(&added)
        .filter(|v| v.name.as_ref().is_some_and(|n| touched.contains(n) && !io.contains(n)))
        .cloned()
        .collect();
    let kept_initializers: Vec<TensorId> = g
        .initializers
        .iter()
        .copied()
        .filter(|&t| model.tensors[t].name.as_ref().is_some_and(|n| needed.contains(n)))
        .collect();
    // Before IR version 4 every initializer is also a graph input.
    if model.ir_version.is_some_and(|v| v < 4) {
        for &t in &kept_initializers {
            let name = model.tensors[t].name.clone().unwrap_or_default();
            if !stop.contains(&name) {
                let ty = described.get(&name).and_then(|v| v.ty.clone());
                new_inputs.push(ValueInfo { name: Some(name), ty, ..ValueInfo::default() });
            }
        }
    }
    let nodes: Vec<NodeId> = kept.iter().map(|&i| g.nodes[i]).collect();
    let functions = called_functions(model, &nodes);
    let summary = Extracted { nodes: nodes.len(), initializers: kept_initializers.len(), functions: functions.len() };
    let g = &mut model.graphs[main];
    g.nodes = nodes;
    g.inputs = new_inputs;
    g.outputs = new_outputs;
    g.value_info = value_info;
    g.initializers = kept_initializers;
    g.sparse_initializers
        .retain(|s| s.values.and_then(|t| model.tensors[t].name.clone()).is_some_and(|n| needed.contains(&n)));
    model.functions = functions;
    Ok(summary)
}

/// The values a node reads: its inputs, and the values its subgraphs read from outside
/// themselves.
fn names_read(model: &Model, node: NodeId) -> Vec<Str> {
    let n = &model.nodes[node];
    let mut reads: Vec<Str> = n.inputs.iter().filter(|i| !i.as_bytes().is_empty()).cloned().collect();
    for a in &n.attributes {
        for &sub in a.g.iter().chain(&a.graphs) {
            outer_reads(model, sub, &mut reads);
        }
    }
    reads
}

/// The values the graph `id` (a subgraph) reads that it does not define itself, appended.
fn outer_reads(model: &Model, id: GraphId, out: &mut Vec<Str>) {
    let g: &Graph = &model.graphs[id];
    let mut defined: HashSet<&Str> = g.inputs.iter().filter_map(|v| v.name.as_ref()).collect();
    defined.extend(g.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()));
    for &n in &g.nodes {
        defined.extend(model.nodes[n].outputs.iter());
    }
    let mut inner = Vec::new();
    for &n in &g.nodes {
        inner.extend(names_read(model, n));
    }
    out.extend(inner.into_iter().filter(|name| !defined.contains(name)));
}

/// The model-local functions the nodes call, and those the called ones call, in the model's
/// order.
fn called_functions(model: &Model, nodes: &[NodeId]) -> Vec<crate::ir::FunctionId> {
    let key =
        |op: &Option<Str>, domain: &Option<Str>| (op.clone().unwrap_or_default(), domain.clone().unwrap_or_default());
    let by_key: HashMap<(Str, Str), crate::ir::FunctionId> = model
        .functions
        .iter()
        .map(|&f| (key(&model.function_store[f].name, &model.function_store[f].domain), f))
        .collect();
    let mut called: HashSet<crate::ir::FunctionId> = HashSet::new();
    let mut queue: Vec<NodeId> = nodes.to_vec();
    while let Some(n) = queue.pop() {
        let node = &model.nodes[n];
        if let Some(&f) = by_key.get(&key(&node.op_type, &node.domain))
            && called.insert(f)
        {
            queue.extend(model.function_store[f].nodes.iter().copied());
        }
        // Subgraphs of the node may call functions too.
        for a in &node.attributes {
            for &sub in a.g.iter().chain(&a.graphs) {
                queue.extend(model.graphs[sub].nodes.iter().copied());
            }
        }
    }
    model.functions.iter().copied().filter(|f| called.contains(f)).collect()
}
