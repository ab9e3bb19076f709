//! What a front end shows about the values and scopes of a model, computed once from the IR
//! and name resolution: which graph or function each node belongs to, which node holds each
//! subgraph, and for each value where it is defined, its declared and inferred types, its
//! producer and its consumers. The language server's hover and rename, and the browser's
//! detail pane, read these instead of walking the model themselves.

use std::collections::HashMap;

use crate::diagnostic::Anchor;
use crate::infer::{ModelTypes, tensor_type};
use crate::ir::{FunctionId, GraphId, Model, NodeId, Str, Type, ValueInfo};
use crate::resolve::{DefSite, Resolution};

/// A graph or a function body: the places where values are defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeId {
    Graph(GraphId),
    Function(FunctionId),
}

/// Where every node and subgraph sits.
#[derive(Debug, Default)]
pub struct Scopes {
    pub node_scope: HashMap<NodeId, ScopeId>,
    /// A subgraph's enclosing scope and the node holding it.
    pub graph_parent: HashMap<GraphId, (ScopeId, NodeId)>,
}

impl Scopes {
    pub fn of_model(model: &Model) -> Scopes {
        let mut scopes = Scopes::default();
        for (g, graph) in model.graphs.iter() {
            for &n in &graph.nodes {
                scopes.node_scope.insert(n, ScopeId::Graph(g));
            }
        }
        for (f, function) in model.function_store.iter() {
            for &n in &function.nodes {
                scopes.node_scope.insert(n, ScopeId::Function(f));
            }
        }
        for (n, node) in model.nodes.iter() {
            let Some(&scope) = scopes.node_scope.get(&n) else { continue };
            for a in &node.attributes {
                for sub in a.subgraphs() {
                    scopes.graph_parent.insert(sub, (scope, n));
                }
            }
        }
        scopes
    }

    /// The graph or function a definition belongs to.
    pub fn scope_of(&self, site: DefSite) -> Option<ScopeId> {
        match site {
            DefSite::GraphInput(g, _) | DefSite::Initializer(g, _) | DefSite::SparseInitializer(g, _) => {
                Some(ScopeId::Graph(g))
            }
            DefSite::FunctionInput(f, _) => Some(ScopeId::Function(f)),
            DefSite::NodeOutput(n, _) => self.node_scope.get(&n).copied(),
        }
    }

    /// `scope` and the scopes around it, innermost first.
    pub fn scope_chain(&self, scope: ScopeId) -> Vec<ScopeId> {
        let mut chain = vec![scope];
        let mut current = scope;
        while let ScopeId::Graph(g) = current
            && let Some(&(parent, _)) = self.graph_parent.get(&g)
        {
            // A malformed model may nest a graph in itself; stop at the first repeat.
            if chain.contains(&parent) {
                break;
            }
            chain.push(parent);
            current = parent;
        }
        chain
    }
}

/// Everything known about one value.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueFacts {
    pub site: DefSite,
    /// The node that computes it (none for inputs and initializers).
    pub producer: Option<NodeId>,
    /// Every node input that reads it: node and input position, in model order.
    pub consumers: Vec<(NodeId, usize)>,
    /// What the model declares (input declaration, initializer, graph output or value_info).
    pub declared: Option<Type>,
    /// What inference found.
    pub inferred: Option<Type>,
}

/// The facts of every value of a model, from its name resolution (made with tables).
#[derive(Debug, Default)]
pub struct Facts {
    pub scopes: Scopes,
    consumers: HashMap<DefSite, Vec<(NodeId, usize)>>,
}

impl Facts {
    pub fn new(model: &Model, resolution: &Resolution) -> Facts {
        let mut consumers: HashMap<DefSite, Vec<(NodeId, usize)>> = HashMap::new();
        for u in &resolution.uses {
            if let (Some(def), Anchor::NodeInput(node, i)) = (u.def, u.at) {
                consumers.entry(def).or_default().push((node, i));
            }
        }
        Facts { scopes: Scopes::of_model(model), consumers }
    }

    /// The facts of the value defined at `site`, named `name`.
    pub fn value(&self, model: &Model, types: &ModelTypes, site: DefSite, name: &Str) -> ValueFacts {
        ValueFacts {
            site,
            producer: match site {
                DefSite::NodeOutput(n, _) => Some(n),
                _ => None,
            },
            consumers: self.consumers.get(&site).cloned().unwrap_or_default(),
            declared: declared_type(model, &self.scopes, site, name),
            inferred: types.at(model, site).cloned(),
        }
    }
}

/// The type a model declares for a value: its input declaration, its initializer's tensor,
/// or a graph output / value_info entry of its own graph.
pub fn declared_type(model: &Model, scopes: &Scopes, site: DefSite, name: &Str) -> Option<Type> {
    let described =
        |infos: &[ValueInfo]| infos.iter().find(|v| v.name.as_ref() == Some(name)).and_then(|v| v.ty.clone());
    match site {
        DefSite::GraphInput(g, i) => model.graphs[g].inputs.get(i)?.ty.clone(),
        DefSite::Initializer(g, i) => model.graphs[g].initializers.get(i).map(|&t| tensor_type(&model.tensors[t])),
        DefSite::SparseInitializer(..) => None,
        DefSite::FunctionInput(f, _) => described(&model.function_store[f].value_info),
        DefSite::NodeOutput(..) => match scopes.scope_of(site)? {
            ScopeId::Graph(g) => {
                let graph = &model.graphs[g];
                described(&graph.outputs).or_else(|| described(&graph.value_info))
            }
            ScopeId::Function(f) => described(&model.function_store[f].value_info),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::check_text;

    #[test]
    fn a_value_knows_its_producer_consumers_and_types() {
        let source = "<ir_version: 10, opset_import: [\"\" : 21]>\n\
            g (float[2, 3] x) => (float[2, 3] z) {\n  y = Relu(x)\n  z = Add(y, y)\n  w = Neg(y)\n}\n";
        let checked = check_text(source, &crate::check::CheckOptions { full_check: true, ..Default::default() });
        let model = &checked.analysis.model;
        let facts = Facts::new(model, &checked.analysis.resolution);
        let graph = &model.graphs[model.graph.expect("a graph")];
        let (relu, add, neg) = (graph.nodes[0], graph.nodes[1], graph.nodes[2]);
        let y = facts.value(model, &checked.types, DefSite::NodeOutput(relu, 0), &Str::from("y"));
        assert_eq!(y.producer, Some(relu));
        assert_eq!(y.consumers, vec![(add, 0), (add, 1), (neg, 0)]);
        assert_eq!(y.declared, None);
        assert_eq!(y.inferred.map(|t| t.to_string()).as_deref(), Some("float[2,3]"));
        let z = facts.value(model, &checked.types, DefSite::NodeOutput(add, 0), &Str::from("z"));
        assert_eq!(z.declared.map(|t| t.to_string()).as_deref(), Some("float[2,3]"));
        assert!(z.consumers.is_empty());
        let x = facts.value(model, &checked.types, DefSite::GraphInput(graph_id(model), 0), &Str::from("x"));
        assert_eq!((x.producer, x.consumers), (None, vec![(relu, 0)]));
        assert_eq!(facts.scopes.scope_of(DefSite::NodeOutput(neg, 0)), Some(ScopeId::Graph(graph_id(model))));
    }

    fn graph_id(model: &Model) -> GraphId {
        model.graph.expect("a graph")
    }
}
