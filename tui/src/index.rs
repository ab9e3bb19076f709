//! What the browser needs to move around a model in constant time, built once from the IR
//! before the first frame: the scopes (main graph, nested subgraphs, training graphs,
//! model-local functions) as a tree, each scope's nodes in order, where each node sits,
//! and, per scope, which definition each name has and which node inputs read it.
//!
//! A scope sees the names of the scopes around it (a Loop body reads outer values), so a
//! use is filed under the scope that defines the name, the nearest one outwards.

// foldhash: names are hashed several times per node while indexing; std's SipHash made
// indexing a 100,000-node model take most of the time before the first frame.
use foldhash::HashMap;

use onnx_core::ir::{FunctionId, GraphId, Model, NodeId, Str};

use crate::sanitize;

/// A place where values are defined and nodes run.
#[derive(Clone, Debug)]
pub struct Scope {
    pub body: Body,
    /// For the tree: `main`, `If_3 ▸ then_branch`, `com.example::Gelu`.
    pub title: String,
    pub parent: Option<usize>,
    pub depth: usize,
    /// The node whose attribute holds this graph (subgraphs only).
    pub holder: Option<NodeId>,
    pub nodes: Vec<NodeId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    Graph(GraphId),
    Function(FunctionId),
}

/// Where a name comes from, in its scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    Input(usize),
    Initializer(usize),
    Node(NodeId, usize),
}

#[derive(Debug, Default)]
pub struct Index {
    /// In tree order: each scope follows its parent and precedes its parent's next sibling.
    pub scopes: Vec<Scope>,
    /// A node's scope and row.
    pub node_at: std::collections::HashMap<NodeId, (usize, usize), foldhash::fast::RandomState>,
    defs: HashMap<(usize, Str), Def>,
    uses: HashMap<(usize, Str), Vec<(NodeId, usize)>>,
}

impl Index {
    pub fn new(model: &Model) -> Index {
        let mut index = Index::default();
        if let Some(g) = model.graph {
            index.add_graph(model, g, "main".into(), None, None);
        }
        for (i, info) in model.training_info.iter().enumerate() {
            for (g, what) in [(info.initialization, "initialization"), (info.algorithm, "algorithm")] {
                if let Some(g) = g {
                    index.add_graph(model, g, format!("training_info[{i}] {what}"), None, None);
                }
            }
        }
        for &f in &model.functions {
            let function = &model.function_store[f];
            let domain = sanitize::opt(function.domain.as_ref());
            let mut title = format!("{domain}::{}", sanitize::opt(function.name.as_ref()));
            if let Some(o) = &function.overload {
                title.push_str(&format!(":{}", sanitize::name(o)));
            }
            let s = index.push(Scope {
                body: Body::Function(f),
                title,
                parent: None,
                depth: 0,
                holder: None,
                nodes: function.nodes.clone(),
            });
            for (i, name) in function.inputs.iter().enumerate() {
                index.defs.insert((s, name.clone()), Def::Input(i));
            }
            index.add_nodes(model, s);
        }
        index.file_uses(model);
        index
    }

    fn push(&mut self, scope: Scope) -> usize {
        self.scopes.push(scope);
        self.scopes.len() - 1
    }

    fn add_graph(&mut self, model: &Model, g: GraphId, title: String, parent: Option<usize>, holder: Option<NodeId>) {
        // A malformed model may hold a graph inside itself; a graph is entered once.
        if self.scopes.iter().any(|s| s.body == Body::Graph(g)) {
            return;
        }
        let graph = &model.graphs[g];
        let depth = parent.map_or(0, |p| self.scopes[p].depth + 1);
        let s = self.push(Scope { body: Body::Graph(g), title, parent, depth, holder, nodes: graph.nodes.clone() });
        for (i, v) in graph.inputs.iter().enumerate() {
            if let Some(name) = &v.name {
                self.defs.insert((s, name.clone()), Def::Input(i));
            }
        }
        for (i, &t) in graph.initializers.iter().enumerate() {
            if let Some(name) = &model.tensors[t].name {
                // Models of IR < 4 list initializers among the inputs too; the initializer
                // is what the value is (and what the viewer opens).
                self.defs.insert((s, name.clone()), Def::Initializer(i));
            }
        }
        self.add_nodes(model, s);
    }

    fn add_nodes(&mut self, model: &Model, s: usize) {
        let nodes = self.scopes[s].nodes.clone();
        for (row, &n) in nodes.iter().enumerate() {
            self.node_at.insert(n, (s, row));
            let node = &model.nodes[n];
            for (i, out) in node.outputs.iter().enumerate() {
                if !out.is_empty() {
                    self.defs.insert((s, out.clone()), Def::Node(n, i));
                }
            }
            for a in &node.attributes {
                let attr = sanitize::opt(a.name.as_ref()).into_owned();
                for sub in a.subgraphs() {
                    let title = format!("{} ▸ {attr}", self.node_title(model, n));
                    self.add_graph(model, sub, title, Some(s), Some(n));
                }
            }
        }
    }

    fn file_uses(&mut self, model: &Model) {
        for s in 0..self.scopes.len() {
            for &n in &self.scopes[s].nodes {
                for (i, name) in model.nodes[n].inputs.iter().enumerate() {
                    if name.is_empty() {
                        continue;
                    }
                    let at = self.defining_scope(s, name).unwrap_or(s);
                    self.uses.entry((at, name.clone())).or_default().push((n, i));
                }
            }
        }
    }

    /// The scope, from `s` outwards, that defines `name`.
    pub fn defining_scope(&self, s: usize, name: &Str) -> Option<usize> {
        let mut at = Some(s);
        let mut steps = 0;
        while let Some(scope) = at {
            if self.defs.contains_key(&(scope, name.clone())) {
                return Some(scope);
            }
            at = self.scopes[scope].parent;
            steps += 1;
            if steps > self.scopes.len() {
                break;
            }
        }
        None
    }

    /// The definition `name` has as seen from scope `s`, and the scope it is in.
    pub fn def(&self, s: usize, name: &Str) -> Option<(usize, Def)> {
        let at = self.defining_scope(s, name)?;
        Some((at, self.defs[&(at, name.clone())]))
    }

    /// The node inputs that read the value `name` defined in scope `s` (or seen from it).
    pub fn consumers(&self, s: usize, name: &Str) -> &[(NodeId, usize)] {
        let at = self.defining_scope(s, name).unwrap_or(s);
        self.uses.get(&(at, name.clone())).map_or(&[], Vec::as_slice)
    }

    /// The scope a graph is, if it is one the index holds.
    pub fn scope_of_graph(&self, g: GraphId) -> Option<usize> {
        self.scopes.iter().position(|s| s.body == Body::Graph(g))
    }

    /// `s` and its enclosing scopes, outermost first (the breadcrumb).
    /// Empty when `s` is no scope (a model without a main graph has none).
    pub fn path(&self, s: usize) -> Vec<usize> {
        if s >= self.scopes.len() {
            return Vec::new();
        }
        let mut path = vec![s];
        while let Some(p) = self.scopes[*path.last().unwrap_or(&s)].parent {
            if path.contains(&p) {
                break;
            }
            path.push(p);
        }
        path.reverse();
        path
    }

    pub fn node_count(&self) -> usize {
        self.node_at.len()
    }

    /// A node as one short label: its name, or its op and row in its scope when it has
    /// none (`If#0`).
    pub fn node_title(&self, model: &Model, n: NodeId) -> String {
        let node = &model.nodes[n];
        match node.name.as_ref().filter(|s| !s.is_empty()) {
            Some(name) => sanitize::name(name).into_owned(),
            None => {
                let row = self.node_at.get(&n).map_or(0, |&(_, row)| row);
                format!("{}#{row}", sanitize::opt(node.op_type.as_ref()))
            }
        }
    }
}
