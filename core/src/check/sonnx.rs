//! The SONNX profile (`onnx check --profile sonnx`): the graph constraints C1–C6 and the
//! restriction R1 of the ONNX safety-related profile working group's graph specification
//! (onnx/working-groups, `safety-related-profile/documents/profile_graph/graph.md` at
//! commit 979659bb, April 2025; a draft, later reworded). They apply to the model's graph:
//!
//! * C1 every graph input feeds at least one node (`sonnx-unused-input`);
//! * C2 every graph output is computed by a node (`sonnx-output-not-computed`);
//! * C3 the graph has no cycle (`sonnx-cycle`);
//! * C4 every node has at least one output (`sonnx-node-without-output`);
//! * C5 every node input comes from another node, a graph input or an initializer
//!   (`sonnx-unconnected-input`);
//! * C6 a node output may feed nodes, be a graph output or be unused: nothing to check;
//! * R1 no node has all its outputs unused, a dead node (`sonnx-dead-node`).
//!
//! Findings are warnings: onnx and onnxruntime accept such models, and the verdict
//! contract (docs/diagnostics.md) fails a model only for what they refuse; `onnx check
//! --strict` makes them errors for a pipeline that holds models to the profile.
//!
//! A value a subgraph uses from the main graph (an If branch reading a graph input) counts
//! as used by the node holding the subgraph. The draft says nothing of initializers; they
//! count as sources for C5, as they are constant graph inputs.

use std::collections::{HashMap, HashSet};

use crate::diagnostic::{Anchor, Diagnostic};
use crate::ir::{GraphId, Model, NodeId, Str};

/// The profiles `onnx check --profile` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// onnx.checker's rules and ours, nothing more.
    #[default]
    None,
    /// The SONNX graph constraints C1–C6 and restriction R1, on top of the usual rules.
    Sonnx,
}

pub fn check(model: &Model) -> Vec<Diagnostic> {
    let Some(g) = model.graph else { return Vec::new() };
    let graph = &model.graphs[g];
    let mut used: HashSet<&Str> = HashSet::new();
    collect_uses(model, g, &mut used, 0);
    let mut producer: HashMap<&Str, NodeId> = HashMap::new();
    for &n in &graph.nodes {
        for out in model.nodes[n].outputs.iter().filter(|o| !o.is_empty()) {
            producer.entry(out).or_insert(n);
        }
    }
    let mut out = Vec::new();
    // C1
    for (i, input) in graph.inputs.iter().enumerate() {
        if let Some(name) = &input.name
            && !used.contains(name)
        {
            out.push(Diagnostic::warning(
                "sonnx-unused-input",
                Anchor::GraphInput(g, i),
                format!("graph input '{}' feeds no node (SONNX C1)", name.escaped()),
            ));
        }
    }
    // C2
    for (i, output) in graph.outputs.iter().enumerate() {
        if let Some(name) = &output.name
            && !producer.contains_key(name)
        {
            out.push(Diagnostic::warning(
                "sonnx-output-not-computed",
                Anchor::GraphOutput(g, i),
                format!("graph output '{}' is not computed by a node (SONNX C2)", name.escaped()),
            ));
        }
    }
    // C3
    if let Some(cycle) = find_cycle(model, g, &producer) {
        let names: Vec<String> = cycle.iter().map(|&n| node_label(model, n)).collect();
        out.push(Diagnostic::warning(
            "sonnx-cycle",
            Anchor::Node(cycle[0]),
            format!("the graph has a cycle: {} (SONNX C3)", names.join(" → ")),
        ));
    }
    let sources: HashSet<&Str> = graph
        .inputs
        .iter()
        .filter_map(|v| v.name.as_ref())
        .chain(graph.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref()))
        .chain(graph.sparse_initializers.iter().filter_map(|s| s.values.and_then(|t| model.tensors[t].name.as_ref())))
        .collect();
    let graph_outputs: HashSet<&Str> = graph.outputs.iter().filter_map(|v| v.name.as_ref()).collect();
    for &n in &graph.nodes {
        let node = &model.nodes[n];
        // C4
        if node.outputs.iter().all(Str::is_empty) {
            out.push(Diagnostic::warning(
                "sonnx-node-without-output",
                Anchor::Node(n),
                format!("{} has no output (SONNX C4)", node_label(model, n)),
            ));
            continue;
        }
        // C5
        for (i, input) in node.inputs.iter().enumerate().filter(|(_, i)| !i.is_empty()) {
            let from_other_node = producer.get(input).is_some_and(|&p| p != n);
            if !from_other_node && !sources.contains(input) {
                out.push(Diagnostic::warning(
                    "sonnx-unconnected-input",
                    Anchor::NodeInput(n, i),
                    format!(
                        "input '{}' of {} comes from no other node, graph input or initializer (SONNX C5)",
                        input.escaped(),
                        node_label(model, n)
                    ),
                ));
            }
        }
        // R1
        let feeds_something =
            node.outputs.iter().any(|o| !o.is_empty() && (used.contains(o) || graph_outputs.contains(o)));
        if !feeds_something {
            out.push(Diagnostic::warning(
                "sonnx-dead-node",
                Anchor::Node(n),
                format!("no output of {} is used: a dead node (SONNX R1)", node_label(model, n)),
            ));
        }
    }
    out
}

/// Subgraphs nested deeper than this are not searched for uses (the checker reports the
/// depth elsewhere); it keeps the walk's stack bounded on hostile models.
const MAX_NESTING: usize = 256;

/// Every name a node of graph `g` or of a subgraph inside it takes as input.
fn collect_uses<'m>(model: &'m Model, g: GraphId, used: &mut HashSet<&'m Str>, depth: usize) {
    if depth > MAX_NESTING {
        return;
    }
    for &n in &model.graphs[g].nodes {
        let node = &model.nodes[n];
        used.extend(node.inputs.iter().filter(|i| !i.is_empty()));
        for sub in node.attributes.iter().flat_map(|a| a.subgraphs()) {
            collect_uses(model, sub, used, depth + 1);
            // A subgraph's outputs are what it passes back to its node.
            used.extend(model.graphs[sub].outputs.iter().filter_map(|v| v.name.as_ref()));
        }
    }
}

/// A cycle of nodes of graph `g` through their data dependencies, in order, if there is
/// one (iterative depth-first search: no recursion on long chains).
fn find_cycle(model: &Model, g: GraphId, producer: &HashMap<&Str, NodeId>) -> Option<Vec<NodeId>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let nodes = &model.graphs[g].nodes;
    let mut mark: HashMap<NodeId, Mark> = nodes.iter().map(|&n| (n, Mark::New)).collect();
    for &start in nodes {
        if mark[&start] != Mark::New {
            continue;
        }
        // Each frame: a node and the index of the next input to follow.
        let mut stack: Vec<(NodeId, usize)> = vec![(start, 0)];
        mark.insert(start, Mark::Open);
        while let Some(&mut (n, ref mut next)) = stack.last_mut() {
            let inputs = &model.nodes[n].inputs;
            if *next == inputs.len() {
                mark.insert(n, Mark::Done);
                stack.pop();
                continue;
            }
            let input = &inputs[*next];
            *next += 1;
            let Some(&p) = producer.get(input) else { continue };
            match mark[&p] {
                Mark::New => {
                    mark.insert(p, Mark::Open);
                    stack.push((p, 0));
                }
                Mark::Open => {
                    // The frames from `p` to the top are the cycle, consumers before
                    // producers; reversed, it reads in data-flow order.
                    let from = stack.iter().position(|&(m, _)| m == p).unwrap_or(0);
                    let mut cycle: Vec<NodeId> = stack[from..].iter().map(|&(m, _)| m).collect();
                    cycle.reverse();
                    return Some(cycle);
                }
                Mark::Done => {}
            }
        }
    }
    None
}

/// How a message names a node: its name, else its operator and first output.
fn node_label(model: &Model, n: NodeId) -> String {
    let node = &model.nodes[n];
    let op = node.op_type.as_ref().map_or_else(String::new, Str::escaped);
    match &node.name {
        Some(name) if !name.is_empty() => format!("node '{}' ({op})", name.escaped()),
        _ => match node.outputs.iter().find(|o| !o.is_empty()) {
            Some(first) => format!("{op} node computing '{}'", first.escaped()),
            None => format!("{op} node"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::analysis::analyze_text;

    #[test]
    fn a_node_without_outputs_breaks_c4_only() {
        let text = "<ir_version: 10, opset_import: [\"\" : 21]>\ng (float[2] x) => (float[2] y) {\n  y = Neg (x)\n  z = Abs (x)\n}\n";
        let mut model = analyze_text(text).model;
        let g = model.graph.expect("main graph");
        let second = model.graphs[g].nodes[1];
        model.nodes[second].outputs.clear();
        let codes: Vec<&str> = check(&model).iter().map(|d| d.code).collect();
        assert_eq!(codes, ["sonnx-node-without-output"]);
    }

    #[test]
    fn a_long_chain_is_searched_for_cycles_without_recursion() {
        let mut body = String::from("  v0 = Neg (x)\n");
        for i in 1..20_000 {
            body.push_str(&format!("  v{i} = Neg (v{})\n", i - 1));
        }
        let text =
            format!("<ir_version: 10, opset_import: [\"\" : 21]>\ng (float[2] x) => (float[2] v19999) {{\n{body}}}\n");
        let model = analyze_text(&text).model;
        assert!(check(&model).is_empty());
    }
}
