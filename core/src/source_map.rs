//! Where each part of a model came from in its text: the link between IR and source that
//! diagnostics, hover, go-to-definition and references use. The IR itself holds no spans.

use la_arena::ArenaMap;

use crate::diagnostic::Span;
use crate::ir::{FunctionId, GraphId, NodeId};

#[derive(Debug, Default)]
pub struct SourceMap {
    pub graphs: ArenaMap<GraphId, Span>,
    /// Name ranges of a graph's declared values, index for index with the IR's lists.
    pub graph_values: ArenaMap<GraphId, ValueSpans>,
    pub nodes: ArenaMap<NodeId, NodeSpans>,
    pub functions: ArenaMap<FunctionId, Span>,
}

#[derive(Debug, Default, Clone)]
pub struct ValueSpans {
    pub inputs: Vec<Span>,
    pub outputs: Vec<Span>,
    pub value_info: Vec<Span>,
    pub initializers: Vec<Span>,
}

/// A node's ranges: the whole node, its operator, and each output, input and attribute.
#[derive(Debug, Default, Clone)]
pub struct NodeSpans {
    pub node: Span,
    pub op: Span,
    pub outputs: Vec<Span>,
    pub inputs: Vec<Span>,
    pub attributes: Vec<Span>,
}
