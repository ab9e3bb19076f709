//! Model-local functions (semantics spec §1.8): identity, the call graph (no cycles, bounded
//! depth), signatures, and body nodes under the function's own opset imports.

use std::collections::{HashMap, HashSet};

use super::{Checker, GraphRole, Opsets};
use crate::diagnostic::Anchor;
use crate::ir::{FunctionId, Model, NodeId, Str};

/// More functions than this is taken as a malformed or hostile model.
const MAX_FUNCTIONS: usize = 10_000;
/// Most calls nested below the first (onnx accepts a chain of 101 functions, not 102).
const MAX_CALL_DEPTH: usize = 100;

/// `domain:name[:overload]`, how nodes refer to functions.
fn call_key(domain: Option<&Str>, name: Option<&Str>, overload: Option<&Str>) -> String {
    let part = |s: Option<&Str>| s.map_or_else(String::new, Str::escaped);
    let mut key = format!("{}:{}", part(domain), part(name));
    if let Some(o) = overload.filter(|o| !o.is_empty()) {
        key.push(':');
        key.push_str(&o.escaped());
    }
    key
}

/// Every node of a function body, including nodes of subgraphs held by its attributes.
fn body_nodes(model: &Model, f: FunctionId) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack: Vec<NodeId> = model.function_store[f].nodes.iter().rev().copied().collect();
    while let Some(n) = stack.pop() {
        out.push(n);
        for a in &model.nodes[n].attributes {
            for g in a.subgraphs() {
                stack.extend(model.graphs[g].nodes.iter().rev());
            }
        }
    }
    out
}

impl Checker<'_> {
    pub(super) fn functions(&mut self, model_opsets: &Opsets) {
        let model = self.model;
        if model.functions.len() > MAX_FUNCTIONS {
            self.error(
                "too-many-functions",
                Anchor::Model,
                format!("the model has {} functions, more than {MAX_FUNCTIONS}", model.functions.len()),
            );
            return;
        }
        let mut keys: HashMap<String, FunctionId> = HashMap::new();
        for &f in &model.functions {
            let func = &model.function_store[f];
            let key = call_key(func.domain.as_ref(), func.name.as_ref(), func.overload.as_ref());
            if let Some(&first) = keys.get(&key) {
                self.diagnostics.push(
                    crate::diagnostic::Diagnostic::error(
                        "duplicate-function",
                        Anchor::Function(f),
                        format!("function '{key}' is defined twice"),
                    )
                    .with_related(Anchor::Function(first), "first defined here"),
                );
            } else {
                keys.insert(key, f);
            }
        }
        self.call_cycles(&keys);
        for &f in &model.functions {
            self.function(f, model_opsets);
        }
    }

    /// Cycles and over-deep chains in the call graph, found by an iterative depth-first walk.
    fn call_cycles(&mut self, keys: &HashMap<String, FunctionId>) {
        let model = self.model;
        let callees = |f: FunctionId| -> Vec<FunctionId> {
            let mut out: Vec<FunctionId> = body_nodes(model, f)
                .into_iter()
                .filter_map(|n| {
                    let n = &model.nodes[n];
                    keys.get(&call_key(n.domain.as_ref(), n.op_type.as_ref(), n.overload())).copied()
                })
                .collect();
            out.dedup();
            out
        };
        let name = |f: FunctionId| model.function_store[f].name.as_ref().map_or_else(String::new, Str::escaped);
        let mut done: HashSet<FunctionId> = HashSet::new();
        for &root in &model.functions {
            if done.contains(&root) {
                continue;
            }
            // Each frame: a function on the current path and the callees still to visit.
            let mut path: Vec<(FunctionId, Vec<FunctionId>)> = vec![(root, callees(root))];
            while let Some((current, pending)) = path.last_mut() {
                let current = *current;
                let Some(next) = pending.pop() else {
                    done.insert(current);
                    path.pop();
                    continue;
                };
                if let Some(start) = path.iter().position(|(f, _)| *f == next) {
                    let mut chain: Vec<String> = path[start..].iter().map(|(f, _)| name(*f)).collect();
                    chain.push(name(next));
                    self.error(
                        "function-call-cycle",
                        Anchor::Function(next),
                        format!("model-local functions call each other in a cycle: {}", chain.join(" -> ")),
                    );
                    return;
                }
                if done.contains(&next) {
                    continue;
                }
                if path.len() > MAX_CALL_DEPTH {
                    self.error(
                        "function-call-depth",
                        Anchor::Function(root),
                        format!("function calls nest deeper than {MAX_CALL_DEPTH} levels"),
                    );
                    return;
                }
                path.push((next, callees(next)));
            }
        }
    }

    fn function(&mut self, id: FunctionId, model_opsets: &Opsets) {
        let model = self.model;
        let f = &model.function_store[id];
        let fname = f.name.as_ref().map_or_else(String::new, Str::escaped);
        if fname.is_empty() {
            self.error("missing-function-name", Anchor::Function(id), "the function has no name");
        }
        if self.ir_version >= 8 && f.domain.is_none() {
            self.error(
                "missing-function-domain",
                Anchor::Function(id),
                format!("function '{fname}' has no domain field"),
            );
        }
        let mut outputs = HashSet::new();
        for (i, o) in f.outputs.iter().enumerate() {
            if !outputs.insert(o) {
                self.error(
                    "duplicate-function-output",
                    Anchor::FunctionOutput(id, i),
                    format!("function '{fname}' lists output '{o}' twice"),
                );
            }
        }
        let mut attributes = HashSet::new();
        for a in &f.attributes {
            if !attributes.insert(a) {
                self.error(
                    "duplicate-function-attribute",
                    Anchor::Function(id),
                    format!("function '{fname}' lists attribute '{a}' twice"),
                );
            }
        }
        let own = Opsets::from_imports(&f.opset_import);
        for &n in &f.nodes {
            let node = &model.nodes[n];
            let domain = node.domain.as_ref().map_or_else(String::new, Str::escaped);
            let Some(version) = own.version(&domain) else {
                let shown = if domain.is_empty() { "ai.onnx".to_owned() } else { domain.clone() };
                self.error(
                    "missing-opset-import",
                    Anchor::Node(n),
                    format!("function '{fname}' uses domain '{shown}' but does not import it"),
                );
                continue;
            };
            self.opset_compatibility(n, &domain, version, model_opsets);
            self.node(n, GraphRole::Sub, &own);
        }
    }

    /// A body node must mean the same under the function's import and the model's.
    fn opset_compatibility(&mut self, n: NodeId, domain: &str, version: i64, model_opsets: &Opsets) {
        let Some(model_version) = model_opsets.version(domain).filter(|&v| v != version) else {
            return;
        };
        let op = self.model.nodes[n].op_type.as_ref().map_or_else(String::new, Str::escaped);
        let schema_domain = crate::ir::schema_domain(domain);
        let since = |v| self.registry.lookup(schema_domain, &op, v).map(|s| s.since_version);
        let (in_function, in_model) = (since(version), since(model_version));
        if in_function != in_model {
            let show = |s: Option<i64>| s.map_or_else(|| "no schema".to_owned(), |v| format!("version {v}"));
            self.error(
                "function-opset-mismatch",
                Anchor::Node(n),
                format!(
                    "'{op}' resolves to {} under the function's opset {version} but to {} under the model's opset {model_version}",
                    show(in_function),
                    show(in_model)
                ),
            );
        }
    }
}
