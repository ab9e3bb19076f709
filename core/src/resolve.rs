//! Name resolution: which definition each value use refers to, following the IR's scoping
//! rules (the checker's rules of onnx, semantics spec §1.3):
//!
//! * a graph defines its inputs, initializers and node outputs, in that order; a node may use
//!   only names defined before it, in its graph or in an enclosing graph before the node
//!   that holds the subgraph;
//! * a name is defined once in its scope and its ancestors (SSA; a subgraph cannot shadow an
//!   outer name), except that an initializer may share its name with a graph input;
//! * a graph's outputs must be defined in that graph itself;
//! * a function body sees only its inputs and its own node outputs.
//!
//! The result is a def/use table (for go-to-definition and references) and diagnostics
//! anchored to IR places.

use foldhash::HashMap;

use crate::diagnostic::{Anchor, Diagnostic};
use crate::ir::*;

/// Where a value is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefSite {
    GraphInput(GraphId, usize),
    Initializer(GraphId, usize),
    SparseInitializer(GraphId, usize),
    NodeOutput(NodeId, usize),
    FunctionInput(FunctionId, usize),
}

impl DefSite {
    pub fn anchor(self) -> Anchor {
        match self {
            DefSite::GraphInput(g, i) => Anchor::GraphInput(g, i),
            DefSite::Initializer(g, i) => Anchor::Initializer(g, i),
            DefSite::SparseInitializer(g, i) => Anchor::SparseInitializer(g, i),
            DefSite::NodeOutput(n, i) => Anchor::NodeOutput(n, i),
            DefSite::FunctionInput(f, i) => Anchor::FunctionInput(f, i),
        }
    }
}

/// A use of a value name, and the definition it resolves to (if any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    pub at: Anchor,
    pub def: Option<DefSite>,
}

#[derive(Debug, Default)]
pub struct Resolution {
    pub uses: Vec<Use>,
    /// Every definition, with its name.
    pub defs: Vec<(Str, DefSite)>,
    pub diagnostics: Vec<Diagnostic>,
    /// Whether `uses` and `defs` are recorded (the language server's tables) or only the
    /// diagnostics are wanted (the checker).
    tables: bool,
}

impl Resolution {
    fn define(&mut self, name: &Str, site: DefSite) {
        if self.tables {
            self.defs.push((name.clone(), site));
        }
    }

    fn use_of(&mut self, at: Anchor, def: Option<DefSite>) {
        if self.tables {
            self.uses.push(Use { at, def });
        }
    }
}

/// One lexical scope: names defined so far (borrowed from the model), and the enclosing
/// scope.
struct Scope<'m, 'p> {
    names: HashMap<&'m Str, DefSite>,
    parent: Option<&'p Scope<'m, 'p>>,
}

impl Scope<'_, '_> {
    fn lookup(&self, name: &Str) -> Option<DefSite> {
        self.names.get(name).copied().or_else(|| self.parent.and_then(|p| p.lookup(name)))
    }
}

/// Resolves every name of the model: the def/use tables and the diagnostics.
pub fn resolve(model: &Model) -> Resolution {
    resolve_with(model, true)
}

/// Only the diagnostics of name resolution (what the checker reports), without building
/// the def/use tables.
pub fn resolution_diagnostics(model: &Model) -> Vec<Diagnostic> {
    resolve_with(model, false).diagnostics
}

fn resolve_with(model: &Model, tables: bool) -> Resolution {
    let mut r = Resolution { tables, ..Resolution::default() };
    if let Some(g) = model.graph {
        graph(model, g, None, &mut r);
    }
    // Training graphs may use the main graph's initializers (ONNX IR spec, TrainingInfoProto).
    let mut main_initializers = Scope { names: HashMap::default(), parent: None };
    if let Some(g) = model.graph {
        for (i, &t) in model.graphs[g].initializers.iter().enumerate() {
            if let Some(name) = &model.tensors[t].name {
                main_initializers.names.insert(name, DefSite::Initializer(g, i));
            }
        }
    }
    for t in &model.training_info {
        for g in [t.initialization, t.algorithm].into_iter().flatten() {
            graph(model, g, Some(&main_initializers), &mut r);
        }
    }
    for &f in &model.functions {
        function(model, f, &mut r);
    }
    r
}

fn define<'m>(scope: &mut Scope<'m, '_>, name: &'m Str, site: DefSite, r: &mut Resolution) {
    if name.is_empty() {
        return;
    }
    let declared = matches!(site, DefSite::GraphInput(..) | DefSite::Initializer(..) | DefSite::SparseInitializer(..));
    if let Some(previous) = scope.lookup(name) {
        let in_this_graph = scope.names.contains_key(name);
        // An initializer may give a graph input its default value.
        let initializes_input = in_this_graph
            && matches!(previous, DefSite::GraphInput(..))
            && matches!(site, DefSite::Initializer(..) | DefSite::SparseInitializer(..));
        if initializes_input {
            // Keep pointing at the input: it is what users and the graph's signature see.
            r.define(name, site);
            return;
        }
        if !in_this_graph && declared {
            // onnx accepts a subgraph input or initializer that reuses an outer name; uses
            // inside the subgraph then see the inner value. Legal, but easy to misread.
            r.diagnostics.push(
                Diagnostic::warning(
                    "shadowed-name",
                    site.anchor(),
                    format!("'{name}' hides a value of an enclosing graph"),
                )
                .with_related(previous.anchor(), "outer value defined here"),
            );
        } else {
            r.diagnostics.push(
                Diagnostic::error("duplicate-definition", site.anchor(), format!("'{name}' is already defined"))
                    .with_related(previous.anchor(), "first defined here"),
            );
            return;
        }
    }
    scope.names.insert(name, site);
    r.define(name, site);
}

fn graph<'m>(model: &'m Model, id: GraphId, parent: Option<&Scope<'m, '_>>, r: &mut Resolution) {
    let g = &model.graphs[id];
    // Sized once for every name the graph defines (a big graph's table is not regrown).
    let defined = g.inputs.len()
        + g.initializers.len()
        + g.sparse_initializers.len()
        + g.nodes.iter().map(|&n| model.nodes[n].outputs.len()).sum::<usize>();
    let mut names = HashMap::default();
    names.reserve(defined);
    let mut scope = Scope { names, parent };
    for (i, v) in g.inputs.iter().enumerate() {
        if let Some(name) = &v.name {
            define(&mut scope, name, DefSite::GraphInput(id, i), r);
        }
    }
    for (i, &t) in g.initializers.iter().enumerate() {
        if let Some(name) = &model.tensors[t].name {
            define(&mut scope, name, DefSite::Initializer(id, i), r);
        }
    }
    for (i, sparse) in g.sparse_initializers.iter().enumerate() {
        if let Some(name) = sparse.values.and_then(|v| model.tensors[v].name.as_ref()) {
            define(&mut scope, name, DefSite::SparseInitializer(id, i), r);
        }
    }
    for &n in &g.nodes {
        node(model, n, &mut scope, r);
    }
    for (i, v) in g.outputs.iter().enumerate() {
        let Some(name) = &v.name else { continue };
        let def = scope.names.get(name).copied();
        r.use_of(Anchor::GraphOutput(id, i), def.or_else(|| scope.lookup(name)));
        if def.is_none() {
            r.diagnostics.push(Diagnostic::error(
                "output-not-defined",
                Anchor::GraphOutput(id, i),
                format!("graph output '{name}' is not defined in this graph"),
            ));
        }
    }
}

fn node<'m>(model: &'m Model, id: NodeId, scope: &mut Scope<'m, '_>, r: &mut Resolution) {
    let n = &model.nodes[id];
    for (i, name) in n.inputs.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let def = scope.lookup(name);
        r.use_of(Anchor::NodeInput(id, i), def);
        if def.is_none() {
            r.diagnostics.push(Diagnostic::error(
                "undefined-value",
                Anchor::NodeInput(id, i),
                format!("'{name}' is not defined before this use"),
            ));
        }
    }
    // Subgraphs see what is defined before this node.
    for a in &n.attributes {
        for sub in a.subgraphs() {
            graph(model, sub, Some(scope), r);
        }
    }
    for (i, name) in n.outputs.iter().enumerate() {
        define(scope, name, DefSite::NodeOutput(id, i), r);
    }
}

fn function(model: &Model, id: FunctionId, r: &mut Resolution) {
    let f = &model.function_store[id];
    let mut scope = Scope { names: HashMap::default(), parent: None };
    for (i, name) in f.inputs.iter().enumerate() {
        define(&mut scope, name, DefSite::FunctionInput(id, i), r);
    }
    for &n in &f.nodes {
        node(model, n, &mut scope, r);
    }
    for (i, name) in f.outputs.iter().enumerate() {
        let def = scope.lookup(name);
        r.use_of(Anchor::FunctionOutput(id, i), def);
        if def.is_none() {
            // A warning: onnx's checker accepts such functions (semantics spec §1.8).
            r.diagnostics.push(Diagnostic::warning(
                "output-not-produced",
                Anchor::FunctionOutput(id, i),
                format!("function output '{name}' is not produced by the body"),
            ));
        }
    }
}
