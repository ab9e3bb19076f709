//! Diagnostics: what every stage reports instead of failing. Each has a stable kebab-case
//! code, a severity, a message, a primary anchor and optional secondary labels ("first
//! defined here").
//!
//! Stages that work on the IR anchor to IR places (a node's input slot, a graph's output);
//! [`SourceMap::resolve`](crate::source_map::SourceMap::resolve) turns those into text
//! ranges for text input, and [`ProtoPaths`](crate::proto_path::ProtoPaths) into a path
//! like `graph.node[12].input[1]` for binary input.

pub use onnx_syntax::ast::Span;

use crate::ir::{FunctionId, GraphId, NodeId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// Where a diagnostic points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// A range of the text (syntax and lowering diagnostics).
    Text(Span),
    /// The model header (IR version, opset imports, metadata, the function list).
    Model,
    Graph(GraphId),
    GraphInput(GraphId, usize),
    GraphOutput(GraphId, usize),
    Initializer(GraphId, usize),
    SparseInitializer(GraphId, usize),
    ValueInfo(GraphId, usize),
    Node(NodeId),
    NodeInput(NodeId, usize),
    NodeOutput(NodeId, usize),
    Attribute(NodeId, usize),
    Function(FunctionId),
    FunctionInput(FunctionId, usize),
    FunctionOutput(FunctionId, usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub anchor: Anchor,
    /// Secondary places, each with what it is.
    pub related: Vec<(Anchor, String)>,
    /// How many more findings of this code were left out after this one, because a model
    /// had more than [`MAX_PER_CODE`] of them ([`Sink`]); its message says so too.
    pub folded: usize,
}

impl Anchor {
    /// The node this place is in or on, when it is a node, one of its inputs or outputs, or
    /// one of its attributes.
    pub fn node(&self) -> Option<NodeId> {
        match *self {
            Anchor::Node(n) | Anchor::NodeInput(n, _) | Anchor::NodeOutput(n, _) | Anchor::Attribute(n, _) => Some(n),
            _ => None,
        }
    }
}

impl Diagnostic {
    pub fn error(code: &'static str, anchor: impl Into<Anchor>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            anchor: anchor.into(),
            related: Vec::new(),
            folded: 0,
        }
    }

    pub fn warning(code: &'static str, anchor: impl Into<Anchor>, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, anchor, message) }
    }

    pub fn with_related(mut self, anchor: impl Into<Anchor>, label: impl Into<String>) -> Diagnostic {
        self.related.push((anchor.into(), label.into()));
        self
    }
}

/// Findings of one code kept at most by a [`Sink`]. A hostile model of ten million empty
/// nodes has twenty million findings of two kinds; kept one by one they took gigabytes. Past
/// this many, a report lists nothing a reader would go through anyway.
pub const MAX_PER_CODE: usize = 1000;

/// Where a stage collects its diagnostics: keeps the first [`MAX_PER_CODE`] of each code
/// and folds the rest into the last one kept (counted in `folded`, said in its message), so
/// memory stays bounded by the number of codes, whatever the model.
#[derive(Debug, Default)]
pub struct Sink {
    kept: Vec<Diagnostic>,
    /// Per code: how many were pushed, and where the last kept one is.
    per_code: std::collections::HashMap<&'static str, (usize, usize)>,
    /// Per group of [`Sink::push_grouped`]: the kept finding, how many more came, and what
    /// its message adds about them.
    groups: std::collections::HashMap<String, (usize, usize, String)>,
}

impl Sink {
    pub fn push(&mut self, d: Diagnostic) {
        let entry = self.per_code.entry(d.code).or_insert((0, 0));
        entry.0 += 1;
        if entry.0 <= MAX_PER_CODE {
            entry.1 = self.kept.len();
            self.kept.push(d);
        } else {
            self.kept[entry.1].folded += 1;
        }
    }

    /// Pushes `d` unless a finding of the same `group` was pushed before (one cause, such as
    /// a missing side file, behind many findings): that one then says how many others came
    /// and `more` about them. They are one error, not many, so they are not counted as folded.
    pub fn push_grouped(&mut self, d: Diagnostic, group: String, more: impl FnOnce() -> String) {
        match self.groups.get_mut(&group) {
            Some((_, count, _)) => *count += 1,
            None => {
                self.groups.insert(group, (self.kept.len(), 0, more()));
                self.push(d);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// How many diagnostics of `code` were pushed (kept or folded).
    pub fn count_of(&self, code: &str) -> usize {
        self.per_code.get(code).map_or(0, |&(count, _)| count)
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The kept diagnostics in the order pushed; one that others were folded into says how
    /// many.
    pub fn into_vec(mut self) -> Vec<Diagnostic> {
        for (kept, count, more) in self.groups.values() {
            if *count > 0 {
                let d = &mut self.kept[*kept];
                d.message.push_str(&format!(" ({count} more {more})"));
            }
        }
        for &(count, last) in self.per_code.values() {
            if count > MAX_PER_CODE {
                let d = &mut self.kept[last];
                let more = d.folded;
                d.message.push_str(&format!(
                    " (and {more} more finding{} of this kind, not listed: at most {MAX_PER_CODE} of each are)",
                    if more == 1 { "" } else { "s" }
                ));
            }
        }
        self.kept
    }
}

impl From<Span> for Anchor {
    fn from(span: Span) -> Anchor {
        Anchor::Text(span)
    }
}
