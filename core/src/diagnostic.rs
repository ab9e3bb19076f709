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
}

impl Diagnostic {
    pub fn error(code: &'static str, anchor: impl Into<Anchor>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            anchor: anchor.into(),
            related: Vec::new(),
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

impl From<Span> for Anchor {
    fn from(span: Span) -> Anchor {
        Anchor::Text(span)
    }
}
