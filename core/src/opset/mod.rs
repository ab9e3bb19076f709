//! `onnx opset --to N`: a model's default-domain opset converted up or down, node by node.
//!
//! Each node walks its operator's versions from the one in force at the model's opset to
//! the one in force at the target, one since-version at a time. At each step:
//! * an attribute whose default changed between the two versions is written out with the
//!   default the node had (Softmax's `axis` was 1 before 13 and is -1 from 13 on);
//! * the operator's own step runs, where its meaning or signature changed
//!   (`steps.rs`: attributes that became inputs, Softmax's axis, Resize's coordinates, …);
//!   it may insert nodes or constants, rename the operator (Upsample became Resize at 10)
//!   or refuse with the reason.
//!
//! Then the node is judged against the target version's schema: inputs and outputs it has
//! places for, attributes it knows (one it does not know is dropped when it holds the
//! default the operator used to assume, and refused otherwise), required attributes, and
//! the types inference found against the type constraints. Every refusal of every node is
//! collected, so one run names every node that blocks the conversion.
//!
//! Subgraphs (If, Loop, Scan bodies) are converted with their nodes; model-local functions
//! that import the default domain are converted to the same version (their values have no
//! inferred types, so their nodes are judged without types). Other domains are untouched.

mod constants;
mod expand;
mod judge;
mod site;
pub mod steps;

use std::collections::{HashMap, HashSet};

use crate::ir::{FunctionId, GraphId, Model, Node, NodeId, Str, Type};
use crate::schema::registry;

pub use site::Site;
pub use steps::{Adapt, Step, steps_of};

use constants::Constants;
use judge::{judge, restate_defaults};

/// What a conversion did.
#[derive(Debug, Default)]
pub struct Converted {
    pub from: i64,
    pub to: i64,
    /// The IR version before and after, when the target needed a newer one.
    pub ir_version: Option<(Option<i64>, i64)>,
    /// Nodes whose operator, attributes or inputs changed.
    pub changed: usize,
    /// Nodes and constants the conversion added.
    pub added: usize,
    /// Constants that became attributes and that nothing reads any more, removed.
    pub removed: usize,
    /// Conversions that hold for the values the model is likely to see but not for every
    /// value (a Gather whose indices are computed must not meet a negative one before 11).
    pub notes: Vec<Finding>,
}

/// A node the conversion refuses or remarks on, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The node in the model given (ids survive the conversion, which only adds nodes).
    pub id: NodeId,
    /// The node's name, or its first output's where it has none.
    pub node: String,
    pub op: String,
    /// Where the node is: `main graph`, a subgraph (`the body of Loop 'loop_0'`), a function.
    pub place: String,
    pub reason: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} node {} ({}): {}", self.op, self.node, self.place, self.reason)
    }
}

#[derive(Debug)]
pub enum OpsetError {
    /// The model imports no default-domain opset: nothing to convert.
    NoDefaultOpset,
    /// The target is outside the versions onnx defines.
    OutOfRange { target: i64, newest: i64 },
    /// Nodes that cannot be converted, every one with its reason. The model given is left
    /// part-converted: callers discard it.
    Blocked { from: i64, to: i64, blockers: Vec<Finding> },
}

impl std::fmt::Display for OpsetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpsetError::NoDefaultOpset => write!(f, "the model imports no default-domain (ai.onnx) opset"),
            OpsetError::OutOfRange { target, newest } => {
                write!(f, "opset {target} does not exist: onnx's default domain has opsets 1 to {newest}")
            }
            OpsetError::Blocked { from, to, blockers } => {
                write!(f, "{} node(s) cannot be converted from opset {from} to {to}:", blockers.len())?;
                for b in blockers {
                    write!(f, "\n  {b}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for OpsetError {}

/// The newest default-domain opset the schema table knows.
pub fn newest_opset() -> i64 {
    registry().domain_versions.iter().find(|(d, _)| d.is_empty()).map_or(1, |(_, v)| *v)
}

/// The IR version each opset came with (onnx's release table): a model converted up to an
/// opset gets at least this one.
fn ir_version_for(opset: i64) -> i64 {
    const TABLE: &[(i64, i64)] =
        &[(9, 4), (10, 5), (11, 6), (12, 7), (15, 8), (19, 9), (21, 10), (23, 11), (24, 12), (25, 13), (28, 14)];
    TABLE.iter().rev().find(|(o, _)| *o <= opset).map_or(3, |(_, ir)| *ir)
}

/// Converts `model`'s default-domain opset to `target`, in place.
pub fn convert(model: &mut Model, target: i64) -> Result<Converted, OpsetError> {
    let newest = newest_opset();
    if !(1..=newest).contains(&target) {
        return Err(OpsetError::OutOfRange { target, newest });
    }
    let from = model.opset_version("").ok_or(OpsetError::NoDefaultOpset)?;
    let mut converted = Converted { from, to: target, ..Converted::default() };
    let types = collect_types(model);
    let mut cx = Cx {
        constants: Constants::of(model),
        names: all_names(model),
        read: HashSet::new(),
        detached: Vec::new(),
        blockers: Vec::new(),
    };
    cx.read = read_names(model);
    if from != target {
        for (g, place) in graphs_with_places(model) {
            convert_nodes(model, &mut cx, &mut converted, Place::Graph(g), &place, from, target, &types);
        }
        for f in model.functions.clone() {
            let Some(version) = model.function_store[f].opset_version("") else { continue };
            let name = model.function_store[f].name.as_ref().map(|n| n.to_string()).unwrap_or_default();
            let place = format!("function '{name}'");
            convert_nodes(model, &mut cx, &mut converted, Place::Function(f), &place, version, target, &types);
            set_imports(&mut model.function_store[f].opset_import, target);
        }
    }
    if !cx.blockers.is_empty() {
        return Err(OpsetError::Blocked { from, to: target, blockers: cx.blockers });
    }
    converted.removed = remove_unread_constants(model, &cx.detached);
    set_imports(&mut model.opset_import, target);
    let needed = ir_version_for(target);
    if model.ir_version.is_none_or(|v| v < needed) {
        converted.ir_version = Some((model.ir_version, needed));
        model.ir_version = Some(needed);
    }
    Ok(converted)
}

/// Sets every default-domain entry of an import list to `version`.
fn set_imports(imports: &mut [crate::ir::OpsetImport], version: i64) {
    for import in imports {
        let domain = import.domain.as_ref().map_or(&b""[..], Str::as_bytes);
        if domain.is_empty() || domain == b"ai.onnx" {
            import.version = Some(version);
        }
    }
}

/// `base`, or `base_2`, `base_3`, …: a name not in `names`, which then holds it.
fn fresh_name(names: &mut HashSet<Str>, base: &str) -> Str {
    let mut candidate = base.to_owned();
    let mut k = 2;
    while names.contains(candidate.as_bytes()) {
        candidate = format!("{base}_{k}");
        k += 1;
    }
    let name = Str::from(candidate.as_str());
    names.insert(name.clone());
    name
}

/// Where a node lies: a graph (constants become initializers there) or a function body
/// (constants become Constant nodes, a function having no initializers).
#[derive(Clone, Copy, Debug)]
pub enum Place {
    Graph(GraphId),
    Function(FunctionId),
}

/// What the whole conversion keeps between nodes.
pub(super) struct Cx {
    constants: Constants,
    /// Every name in the model, so that added values get fresh ones.
    names: HashSet<Str>,
    /// Every value some node, graph output or function output reads.
    read: HashSet<Str>,
    /// Constants an input was taken from to become an attribute: removed at the end when
    /// nothing reads them any more.
    detached: Vec<Str>,
    blockers: Vec<Finding>,
}

/// The types inference found for each graph node's inputs and outputs, by value name.
type NodeTypes = HashMap<NodeId, HashMap<Str, Type>>;

fn collect_types(model: &Model) -> NodeTypes {
    let inferred = crate::infer::infer_model(model);
    let mut types = NodeTypes::new();
    for (g, _) in graphs_with_places(model) {
        for &n in &model.graphs[g].nodes {
            let node = &model.nodes[n];
            if node.schema_domain() != Some("") {
                continue;
            }
            let mut by_name = HashMap::new();
            for (i, name) in node.inputs.iter().enumerate() {
                if let Some(t) = inferred.node_input(model, n, i).filter(|_| !name.is_empty()) {
                    by_name.insert(name.clone(), t.clone());
                }
            }
            for (i, name) in node.outputs.iter().enumerate() {
                if let Some(t) = inferred.node_output(model, n, i).filter(|_| !name.is_empty()) {
                    by_name.insert(name.clone(), t.clone());
                }
            }
            types.insert(n, by_name);
        }
    }
    types
}

/// The main graph and every subgraph inside it, each with how messages name it.
fn graphs_with_places(model: &Model) -> Vec<(GraphId, String)> {
    let mut found = Vec::new();
    let mut stack: Vec<(GraphId, String)> = model.graph.map(|g| (g, "main graph".to_owned())).into_iter().collect();
    while let Some((g, place)) = stack.pop() {
        for &n in &model.graphs[g].nodes {
            let node = &model.nodes[n];
            for a in &node.attributes {
                let attr = a.name.as_ref().map(|s| s.to_string()).unwrap_or_default();
                for sub in a.subgraphs() {
                    stack.push((sub, format!("the {attr} of {} {}", node.op_label(), label(node))));
                }
            }
        }
        found.push((g, place));
    }
    found
}

/// How messages name a node: its name, or its first output's.
fn label(node: &Node) -> String {
    match node.name.as_ref().filter(|n| !n.is_empty()) {
        Some(name) => format!("'{name}'"),
        None => match node.outputs.first().filter(|o| !o.is_empty()) {
            Some(output) => format!("(output '{output}')"),
            None => "(unnamed)".to_owned(),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn convert_nodes(
    model: &mut Model,
    cx: &mut Cx,
    converted: &mut Converted,
    place: Place,
    place_name: &str,
    from: i64,
    to: i64,
    types: &NodeTypes,
) {
    let nodes = match place {
        Place::Graph(g) => model.graphs[g].nodes.clone(),
        Place::Function(f) => model.function_store[f].nodes.clone(),
    };
    let mut order = Vec::with_capacity(nodes.len());
    for n in nodes {
        if model.nodes[n].schema_domain() != Some("") {
            order.push(n);
            continue;
        }
        let before = model.nodes[n].clone();
        let empty = HashMap::new();
        let finding = |reason: String| Finding {
            id: n,
            node: label(&before),
            op: before.op_label(),
            place: place_name.to_owned(),
            reason,
        };
        let mut outcome = Outcome::default();
        match convert_one(model, cx, place, n, from, to, types.get(&n).unwrap_or(&empty), &mut outcome, 0) {
            Ok(()) => {
                converted.notes.extend(outcome.notes.into_iter().map(finding));
                if outcome.nodes != [n] || model.nodes[n] != before {
                    converted.changed += 1;
                }
                converted.added += outcome.added + outcome.nodes.len().saturating_sub(1);
                order.extend(outcome.nodes);
            }
            Err(reason) => {
                cx.blockers.push(finding(reason));
                order.push(n);
            }
        }
    }
    match place {
        Place::Graph(g) => model.graphs[g].nodes = order,
        Place::Function(f) => model.function_store[f].nodes = order,
    }
}

/// What converting one node gave: the nodes that stand in its place, in order (itself among
/// them unless it was replaced), notes, and how many constants were added.
#[derive(Default)]
struct Outcome {
    nodes: Vec<NodeId>,
    notes: Vec<String>,
    added: usize,
}

/// How deep nodes a step inserts may themselves insert nodes (a step's nodes are plain
/// operators; this only bounds a mistake).
const MOST_NESTED_INSERTIONS: usize = 8;

/// Converts node `n` from opset `from` to `to`, then the nodes its steps inserted (written
/// at the version the step left them at) from there to `to`, appending them all in order.
#[allow(clippy::too_many_arguments)]
fn convert_one(
    model: &mut Model,
    cx: &mut Cx,
    place: Place,
    n: NodeId,
    from: i64,
    to: i64,
    types: &HashMap<Str, Type>,
    outcome: &mut Outcome,
    depth: usize,
) -> Result<(), String> {
    if depth > MOST_NESTED_INSERTIONS {
        return Err("its rewriting nests too deep".to_owned());
    }
    let mut site = Site {
        model: &mut *model,
        node: n,
        place,
        types,
        to,
        at: from,
        before: Vec::new(),
        after: Vec::new(),
        replaced_by: None,
        notes: Vec::new(),
        cx: &mut *cx,
        added: 0,
    };
    convert_node(&mut site, from, to)?;
    let (before, after, replaced_by, at) = (site.before, site.after, site.replaced_by, site.at);
    outcome.notes.extend(site.notes);
    outcome.added += site.added;
    // Inserted nodes are written as the node is (its domain spelling) and, when it is
    // named, named after it.
    let original = model.nodes[n].clone();
    let stem = original.name.clone().filter(|n| !n.is_empty());
    // Inserted nodes know the types of the values they share with the node (its inputs, and
    // the outputs they make in its place), none of the values they add.
    let insert = |model: &mut Model, cx: &mut Cx, outcome: &mut Outcome, mut inserted: Node| {
        inserted.domain = original.domain.clone();
        if inserted.name.is_none()
            && let Some(stem) = &stem
        {
            let op = inserted.op_type.as_ref().map(|o| o.to_string()).unwrap_or_default();
            inserted.name = Some(fresh_name(&mut cx.names, &format!("{stem}_{}", op.to_lowercase())));
        }
        let op = inserted.op_label();
        let id = model.nodes.alloc(inserted);
        if model.nodes[id].schema_domain() != Some("") {
            outcome.nodes.push(id);
            return Ok(());
        }
        convert_one(model, cx, place, id, at, to, types, outcome, depth + 1)
            .map_err(|reason| format!("the {op} its rewriting needs cannot be: {reason}"))
    };
    for node in before {
        insert(model, cx, outcome, node)?;
    }
    match replaced_by {
        Some(nodes) => {
            for node in nodes {
                insert(model, cx, outcome, node)?;
            }
        }
        None => outcome.nodes.push(n),
    }
    for node in after {
        insert(model, cx, outcome, node)?;
    }
    Ok(())
}

/// The step of default-domain operator `op` at version `since`, from the operator table.
fn step_of(op: &str, since: i64) -> Option<Step> {
    crate::infer::operator_table().get("", op)?.opset_step(since)
}

/// Walks one node from opset `from` to `to`: the steps, then the target schema's judgement.
fn convert_node(site: &mut Site, from: i64, to: i64) -> Result<(), String> {
    let reg = registry();
    let op = site.op().to_owned();
    let source = reg.lookup("", &op, from).ok_or_else(|| format!("{op} is not an operator of opset {from}"))?;
    // A deprecated operator (Upsample from 10, Scatter from 11) is its replacement first.
    if source.deprecated
        && let Some(step) = step_of(&op, source.since_version)
    {
        site.at = source.since_version;
        (step.up)(site)?;
    }
    let mut at = from;
    if to > from {
        loop {
            let versions = reg.versions("", site.op());
            let Some(current) = versions.iter().rev().find(|s| s.since_version <= at) else { break };
            let Some(next) = versions.iter().find(|s| s.since_version > current.since_version && s.since_version <= to)
            else {
                break;
            };
            restate_defaults(site, current, next);
            let op = site.op().to_owned();
            if let Some(step) = step_of(&op, next.since_version) {
                site.at = next.since_version;
                (step.up)(site)?;
                if site.replaced_by.is_some() {
                    return Ok(());
                }
            }
            at = next.since_version;
        }
    } else {
        loop {
            let op = site.op().to_owned();
            let versions = reg.versions("", &op);
            let Some(current) = versions.iter().rev().find(|s| s.since_version <= at) else { break };
            if current.since_version <= to {
                break;
            }
            let previous = versions.iter().rev().find(|s| s.since_version < current.since_version);
            if let Some(previous) = previous {
                restate_defaults(site, current, previous);
            }
            // Below its first version the operator is renamed or expanded, as written for
            // that version: what the node sets that the version does not know is judged
            // there (CastLike's saturate cannot follow it into a Cast-13).
            if previous.is_none() {
                judge(site, source, current)?;
            }
            site.at = current.since_version - 1;
            match step_of(&op, current.since_version) {
                Some(step) => {
                    (step.down)(site)?;
                    if site.replaced_by.is_some() {
                        return Ok(());
                    }
                }
                // An operator the target predates: its function body, where it has one.
                None if previous.is_none() => return expand::function_body(site, current),
                None => {}
            }
            at = current.since_version - 1;
        }
    }
    let op = site.op().to_owned();
    let target = reg.lookup("", &op, to).ok_or_else(|| format!("{op} exists only from a later opset than {to}"))?;
    judge(site, source, target)
}

/// Every name a graph, node, initializer or function of the model uses.
fn all_names(model: &Model) -> HashSet<Str> {
    let mut names = HashSet::new();
    for (_, node) in model.nodes.iter() {
        names.extend(node.inputs.iter().chain(&node.outputs).filter(|n| !n.is_empty()).cloned());
        names.extend(node.name.clone());
    }
    for (_, t) in model.tensors.iter() {
        names.extend(t.name.clone());
    }
    for (_, g) in model.graphs.iter() {
        names.extend(g.inputs.iter().chain(&g.outputs).filter_map(|v| v.name.clone()));
    }
    for (_, f) in model.function_store.iter() {
        names.extend(f.inputs.iter().chain(&f.outputs).cloned());
    }
    names
}

/// Every value something reads: node inputs, graph outputs and function outputs.
fn read_names(model: &Model) -> HashSet<Str> {
    let mut read = HashSet::new();
    for (_, node) in model.nodes.iter() {
        read.extend(node.inputs.iter().filter(|n| !n.is_empty()).cloned());
    }
    for (_, g) in model.graphs.iter() {
        read.extend(g.outputs.iter().filter_map(|v| v.name.clone()));
    }
    for (_, f) in model.function_store.iter() {
        read.extend(f.outputs.iter().cloned());
    }
    read
}

/// Removes the constants inputs were taken from that nothing reads now (an initializer a
/// graph lists as an input stays: a caller may feed it). Returns how many went.
fn remove_unread_constants(model: &mut Model, detached: &[Str]) -> usize {
    if detached.is_empty() {
        return 0;
    }
    let mut read = HashSet::new();
    let mut reachable: Vec<GraphId> = model.graph.into_iter().collect();
    let mut graphs = Vec::new();
    while let Some(g) = reachable.pop() {
        graphs.push(g);
        read.extend(model.graphs[g].outputs.iter().filter_map(|v| v.name.clone()));
        for &n in &model.graphs[g].nodes {
            read.extend(model.nodes[n].inputs.iter().filter(|i| !i.is_empty()).cloned());
            reachable.extend(model.nodes[n].attributes.iter().flat_map(|a| a.subgraphs()));
        }
    }
    for &f in &model.functions {
        let body = &model.function_store[f];
        read.extend(body.outputs.iter().cloned());
        for &n in &body.nodes {
            read.extend(model.nodes[n].inputs.iter().filter(|i| !i.is_empty()).cloned());
        }
    }
    let gone: HashSet<&Str> = detached.iter().filter(|n| !read.contains(*n)).collect();
    let mut removed = 0;
    for g in graphs {
        let listed: HashSet<Str> = model.graphs[g].inputs.iter().filter_map(|v| v.name.clone()).collect();
        let tensors = &model.tensors;
        let before = model.graphs[g].initializers.len();
        model.graphs[g]
            .initializers
            .retain(|&t| tensors[t].name.as_ref().is_none_or(|name| !gone.contains(name) || listed.contains(name)));
        let nodes = &model.nodes;
        let constant = |n: NodeId| {
            nodes[n].op_type.as_ref().is_some_and(|o| o == "Constant")
                && nodes[n].outputs.first().is_some_and(|o| gone.contains(o))
        };
        let nodes_before = model.graphs[g].nodes.len();
        model.graphs[g].nodes.retain(|&n| !constant(n));
        removed += before - model.graphs[g].initializers.len() + nodes_before - model.graphs[g].nodes.len();
    }
    for &f in &model.functions {
        let nodes = &model.nodes;
        let body = &mut model.function_store[f];
        let before = body.nodes.len();
        body.nodes.retain(|&n| {
            !(nodes[n].op_type.as_ref().is_some_and(|o| o == "Constant")
                && nodes[n].outputs.first().is_some_and(|o| gone.contains(o)))
        });
        removed += before - body.nodes.len();
    }
    removed
}
