//! `/` search over every node (op type, name, outputs) and every named input and
//! initializer, in all scopes. The texts are built once, off the UI thread; a query is
//! matched with frizbee (fzf syntax: `'exact ^prefix suffix$ !not`) and ranked.
//!
//! Terms with a prefix narrow the hits, and all of them hold together (AND) with the
//! fuzzy text that is left:
//!
//! * `op:Conv`: the operator type is `Conv` or starts with it (`ConvTranspose`), in any case;
//! * `name:enc`: the name of the node, of one of its outputs, or of the value contains
//!   `enc`, in any case;
//! * `shape:1,3,224`, `shape:float16`: the type of one of the node's outputs (inferred, else
//!   declared) or of the value holds these whole numbers and words (`shape:64` finds
//!   `float[1,64,56,56]`, not `float[1,640]`);
//! * `in:body`: the title of the scope the node or value is in contains `body`.
//!
//! A prefix with nothing after it (`op:` while it is typed) narrows nothing yet.

use std::sync::Arc;

use onnx_core::infer::ModelTypes;
use onnx_core::ir::{GraphId, Model, NodeId, Str, Type};

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

/// What a value item of the haystack is, for its declared type.
#[derive(Clone, Copy, Debug)]
enum ValueKind {
    Input(usize),
    Initializer(usize),
}

/// The type texts of every item, built on the first `shape:` query (and again once
/// inference has found what the first one lacked).
#[derive(Debug)]
struct Shapes {
    /// The types they were built with (`None`: declared types only).
    types: Option<Arc<ModelTypes>>,
    /// As shown: a node's output types joined by `, `.
    shown: Vec<String>,
    /// Lower case, for matching.
    lower: Vec<String>,
}

/// Every searchable item and its text.
#[derive(Debug, Default)]
pub struct Haystack {
    targets: Vec<Target>,
    texts: Vec<String>,
    /// The scope of each item.
    scopes: Vec<u32>,
    /// Each scope's title, in lower case (for `in:`), and as shown.
    titles: Vec<(String, String)>,
    /// Each scope's graph (none for a function).
    graphs: Vec<Option<GraphId>>,
    /// The value items: their graph and what they are there (for their declared type).
    values: Vec<(usize, GraphId, ValueKind)>,
    shapes: Option<Shapes>,
}

/// The most hits a query returns (the picker shows a screenful; `n` walks the rest).
pub const MAX_HITS: usize = 500;

/// The prefixes that narrow a search, as the search box's hint shows them.
pub const PREFIXES: &str = "op:Conv name:… shape:1,64 in:body";

/// A query taken apart: the narrowing terms (lower case, each a list that must all hold)
/// and the fuzzy text left.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub ops: Vec<String>,
    pub names: Vec<String>,
    pub shapes: Vec<String>,
    pub scopes: Vec<String>,
    pub fuzzy: String,
}

impl Query {
    pub fn parse(query: &str) -> Query {
        let mut q = Query::default();
        let mut fuzzy = Vec::new();
        for word in query.split_whitespace() {
            let list = word.split_once(':').and_then(|(key, value)| {
                let list = match key.to_ascii_lowercase().as_str() {
                    "op" => &mut q.ops,
                    "name" => &mut q.names,
                    "shape" => &mut q.shapes,
                    "in" => &mut q.scopes,
                    _ => return None,
                };
                Some((list, value))
            });
            match list {
                Some((list, value)) if !value.is_empty() => list.push(value.to_lowercase()),
                Some(_) => {}
                None => fuzzy.push(word),
            }
        }
        q.fuzzy = fuzzy.join(" ");
        q
    }

    /// Whether any term narrows the hits.
    pub fn narrows(&self) -> bool {
        !(self.ops.is_empty() && self.names.is_empty() && self.shapes.is_empty() && self.scopes.is_empty())
    }
}

impl Haystack {
    pub fn new(model: &Model, index: &Index) -> Haystack {
        let mut hay = Haystack::default();
        for (s, scope) in index.scopes.iter().enumerate() {
            hay.titles.push((scope.title.to_lowercase(), scope.title.clone()));
            hay.graphs.push(match scope.body {
                Body::Graph(g) => Some(g),
                Body::Function(_) => None,
            });
            for &n in &scope.nodes {
                let node = &model.nodes[n];
                let mut text = sanitize::opt(node.op_type.as_ref()).into_owned();
                for part in node.name.iter().chain(node.outputs.iter()) {
                    text.push(' ');
                    text.push_str(&sanitize::name(part));
                }
                hay.push(Target::Node(n), text, s);
            }
            if let Body::Graph(g) = scope.body {
                let graph = &model.graphs[g];
                for (i, v) in graph.inputs.iter().enumerate() {
                    if let Some(name) = &v.name {
                        hay.values.push((hay.texts.len(), g, ValueKind::Input(i)));
                        hay.push(Target::Value { scope: s, name: name.clone() }, sanitize::name(name).into_owned(), s);
                    }
                }
                for (i, &t) in graph.initializers.iter().enumerate() {
                    if let Some(name) = &model.tensors[t].name {
                        hay.values.push((hay.texts.len(), g, ValueKind::Initializer(i)));
                        hay.push(Target::Value { scope: s, name: name.clone() }, sanitize::name(name).into_owned(), s);
                    }
                }
            }
        }
        hay
    }

    fn push(&mut self, target: Target, text: String, scope: usize) {
        self.targets.push(target);
        self.texts.push(text);
        self.scopes.push(u32::try_from(scope).unwrap_or(u32::MAX));
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The best hits for `query`, best first; ties in model order. `types`: what inference
    /// found, for `shape:` (declared types are used where it found nothing, or before it
    /// has run).
    pub fn find(&mut self, model: &Model, types: Option<&Arc<ModelTypes>>, query: &str) -> Vec<Hit> {
        let q = Query::parse(query);
        if !q.narrows() {
            if q.fuzzy.trim().is_empty() {
                return Vec::new();
            }
            let matches = fuzzy(&q.fuzzy, &self.texts);
            return matches.into_iter().take(MAX_HITS).map(|i| self.hit(i, &q)).collect();
        }
        if !q.shapes.is_empty() {
            self.build_shapes(model, types);
        }
        let candidates: Vec<usize> = (0..self.texts.len()).filter(|&i| self.passes(model, i, &q)).collect();
        let chosen: Vec<usize> = if q.fuzzy.is_empty() {
            candidates.into_iter().take(MAX_HITS).collect()
        } else {
            let texts: Vec<&str> = candidates.iter().map(|&i| self.texts[i].as_str()).collect();
            fuzzy(&q.fuzzy, &texts).into_iter().take(MAX_HITS).map(|k| candidates[k]).collect()
        };
        chosen.into_iter().map(|i| self.hit(i, &q)).collect()
    }

    fn hit(&self, i: usize, q: &Query) -> Hit {
        let mut label = self.texts[i].clone();
        if !q.shapes.is_empty()
            && let Some(shape) = self.shapes.as_ref().map(|s| &s.shown[i]).filter(|s| !s.is_empty())
        {
            label.push_str(" : ");
            label.push_str(shape);
        }
        if !q.scopes.is_empty()
            && let Some((_, title)) = self.titles.get(self.scopes[i] as usize)
        {
            label.push_str(&format!("  (in {title})"));
        }
        Hit { target: self.targets[i].clone(), label }
    }

    /// Whether item `i` holds every narrowing term of `q`.
    fn passes(&self, model: &Model, i: usize, q: &Query) -> bool {
        if !q.scopes.is_empty() {
            let Some((title, _)) = self.titles.get(self.scopes[i] as usize) else { return false };
            if !q.scopes.iter().all(|s| title.contains(s.as_str())) {
                return false;
            }
        }
        let (op, node) = match &self.targets[i] {
            Target::Node(n) => (model.nodes[*n].op_type.as_ref(), Some(&model.nodes[*n])),
            Target::Value { .. } => (None, None),
        };
        if !q.ops.is_empty() {
            let Some(op) = op else { return false };
            let op = op.as_bytes();
            if !q.ops.iter().all(|o| op.len() >= o.len() && op[..o.len()].eq_ignore_ascii_case(o.as_bytes())) {
                return false;
            }
        }
        if !q.names.is_empty() {
            // A node's name or one of its outputs' names; a value's own.
            let holds = |term: &String| match (node, &self.targets[i]) {
                (Some(node), _) => node.name.iter().chain(&node.outputs).any(|n| contains_ignoring_case(n, term)),
                (None, Target::Value { name, .. }) => contains_ignoring_case(name, term),
                (None, Target::Node(_)) => false,
            };
            if !q.names.iter().all(holds) {
                return false;
            }
        }
        if !q.shapes.is_empty() {
            let Some(text) = self.shapes.as_ref().map(|s| s.lower[i].as_str()) else { return false };
            if !q.shapes.iter().all(|s| whole_match(text, s)) {
                return false;
            }
        }
        true
    }

    /// The type texts of every item, unless they are built with these types already.
    fn build_shapes(&mut self, model: &Model, types: Option<&Arc<ModelTypes>>) {
        if let Some(s) = &self.shapes
            && match (&s.types, types) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
        {
            return;
        }
        // Declared types of node outputs (graph outputs and value_info), by scope and name:
        // what a node has where inference found nothing (or has not run yet). Gathered on
        // the first node that needs them.
        let mut declared: Option<foldhash::HashMap<(u32, &Str), &Type>> = None;
        let mut shown = vec![String::new(); self.texts.len()];
        for (i, target) in self.targets.iter().enumerate() {
            let Target::Node(n) = target else { continue };
            let node = &model.nodes[*n];
            let mut text = String::new();
            for (k, out) in node.outputs.iter().enumerate() {
                let inferred = types.and_then(|t| t.node_output(model, *n, k));
                let ty = inferred.or_else(|| {
                    let declared = declared.get_or_insert_with(|| declared_types(model, &self.graphs));
                    declared.get(&(self.scopes[i], out)).copied()
                });
                if let Some(ty) = ty {
                    if !text.is_empty() {
                        text.push_str(", ");
                    }
                    text.push_str(&sanitize::str(&ty.to_string()));
                }
            }
            shown[i] = text;
        }
        for &(i, g, kind) in &self.values {
            let graph = &model.graphs[g];
            let ty = match kind {
                ValueKind::Input(k) => graph.inputs.get(k).and_then(|v| v.ty.as_ref()).map(ToString::to_string),
                ValueKind::Initializer(k) => {
                    graph.initializers.get(k).map(|&t| onnx_core::infer::tensor_type(&model.tensors[t]).to_string())
                }
            };
            shown[i] = ty.map(|t| sanitize::str(&t).into_owned()).unwrap_or_default();
        }
        let lower = shown.iter().map(|s| s.to_lowercase()).collect();
        self.shapes = Some(Shapes { types: types.cloned(), shown, lower });
    }
}

/// The graph outputs and `value_info` of every graph scope, by scope and name.
fn declared_types<'m>(model: &'m Model, graphs: &[Option<GraphId>]) -> foldhash::HashMap<(u32, &'m Str), &'m Type> {
    let mut declared = foldhash::HashMap::default();
    for (s, g) in graphs.iter().enumerate() {
        let Some(g) = g else { continue };
        let graph = &model.graphs[*g];
        for v in graph.outputs.iter().chain(&graph.value_info) {
            if let (Some(name), Some(ty)) = (&v.name, &v.ty) {
                declared.entry((u32::try_from(s).unwrap_or(u32::MAX), name)).or_insert(ty);
            }
        }
    }
    declared
}

/// The indices of the texts that match `query` (fzf syntax), best first; ties in order.
fn fuzzy<S: AsRef<str>>(query: &str, texts: &[S]) -> Vec<usize> {
    let config = frizbee::Config::default();
    let mut matcher = frizbee::Matcher::from_query(query, &config);
    let mut matches = matcher.match_list(texts);
    matches.sort();
    matches.into_iter().map(|m| m.index as usize).collect()
}

/// Whether `name` holds `term` (lower case), ASCII letters in any case; no allocation, as
/// it is asked of every item on each keystroke.
fn contains_ignoring_case(name: &Str, term: &str) -> bool {
    let (name, term) = (name.as_bytes(), term.as_bytes());
    term.is_empty() || name.windows(term.len()).any(|w| w.eq_ignore_ascii_case(term))
}

/// Whether `needle` occurs in `text` as whole numbers and words: not part of a longer one
/// at either end (`64` in `[1,64,56]`, not in `[1,640]`; `float` in `float[2]`, not in
/// `float16[2]`).
fn whole_match(text: &str, needle: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let (first, last) = (needle.chars().next(), needle.chars().next_back());
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        let splits_start = word(before) && word(first);
        let splits_end = word(after) && word(last);
        !splits_start && !splits_end
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_splits_into_terms_and_fuzzy_text() {
        let q = Query::parse("op:Conv  encoder SHAPE:1,64 name: in:Body 'x");
        assert_eq!(q.ops, ["conv"]);
        assert_eq!(q.shapes, ["1,64"]);
        assert_eq!(q.scopes, ["body"]);
        assert!(q.names.is_empty(), "a prefix without a value narrows nothing yet");
        assert_eq!(q.fuzzy, "encoder 'x");
        assert!(!Query::parse("com.ms:Gelu").narrows(), "other prefixes are fuzzy text");
    }

    #[test]
    fn shapes_match_whole_numbers_and_words() {
        assert!(whole_match("float[1,64,56,56]", "64"));
        assert!(!whole_match("float[1,640]", "64"));
        assert!(whole_match("float[1,3,224,224]", "1,3,224"));
        assert!(!whole_match("float[11,3,224]", "1,3,224"));
        assert!(whole_match("float16[2]", "float16"));
        assert!(!whole_match("float16[2]", "float"));
        assert!(whole_match("float[n,3], int64[n]", "int64"));
        assert!(whole_match("float[1,64]", "[1,"));
    }
}
