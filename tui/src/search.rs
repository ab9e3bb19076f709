//! `/` search over every node (op type, name, outputs) and every named input and
//! initializer, in all scopes. The texts are built once, off the UI thread; a query is
//! matched with frizbee (fzf syntax: `'exact ^prefix suffix$ !not`) and ranked.

use onnx_core::ir::{Model, NodeId, Str};

use crate::index::{Body, Index};
use crate::sanitize;

/// What a hit points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Node(NodeId),
    /// A graph input or initializer of a scope.
    Value {
        scope: usize,
        name: Str,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub target: Target,
    /// The matched text, cleaned for the terminal.
    pub label: String,
}

/// Every searchable item and its text.
#[derive(Debug, Default)]
pub struct Haystack {
    targets: Vec<Target>,
    texts: Vec<String>,
}

/// The most hits a query returns (the picker shows a screenful; `n` walks the rest).
pub const MAX_HITS: usize = 500;

impl Haystack {
    pub fn new(model: &Model, index: &Index) -> Haystack {
        let mut hay = Haystack::default();
        for (s, scope) in index.scopes.iter().enumerate() {
            for &n in &scope.nodes {
                let node = &model.nodes[n];
                let mut text = sanitize::opt(node.op_type.as_ref()).into_owned();
                for part in node.name.iter().chain(node.outputs.iter()) {
                    text.push(' ');
                    text.push_str(&sanitize::name(part));
                }
                hay.push(Target::Node(n), text);
            }
            if let Body::Graph(g) = scope.body {
                let graph = &model.graphs[g];
                let initializers = graph.initializers.iter().filter_map(|&t| model.tensors[t].name.as_ref());
                for name in graph.inputs.iter().filter_map(|v| v.name.as_ref()).chain(initializers) {
                    hay.push(Target::Value { scope: s, name: name.clone() }, sanitize::name(name).into_owned());
                }
            }
        }
        hay
    }

    fn push(&mut self, target: Target, text: String) {
        self.targets.push(target);
        self.texts.push(text);
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The best hits for `query`, best first; ties in model order.
    pub fn find(&self, query: &str) -> Vec<Hit> {
        if query.trim().is_empty() {
            return Vec::new();
        }
        let config = frizbee::Config::default();
        let mut matcher = frizbee::Matcher::from_query(query, &config);
        let mut matches = matcher.match_list(&self.texts);
        matches.sort();
        matches
            .into_iter()
            .take(MAX_HITS)
            .map(|m| {
                let i = m.index as usize;
                Hit { target: self.targets[i].clone(), label: self.texts[i].clone() }
            })
            .collect()
    }
}
