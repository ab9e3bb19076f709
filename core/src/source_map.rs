//! Where each part of a model came from in its text: the link between IR and source that
//! diagnostics, hover, go-to-definition and references use. The IR itself holds no spans.

use la_arena::ArenaMap;

use crate::diagnostic::{Anchor, Span};
use crate::ir::{FunctionId, GraphId, NodeId, TensorId};

#[derive(Debug, Default)]
pub struct SourceMap {
    pub graphs: ArenaMap<GraphId, Span>,
    /// Name ranges of a graph's declared values, index for index with the IR's lists.
    pub graph_values: ArenaMap<GraphId, ValueSpans>,
    pub nodes: ArenaMap<NodeId, NodeSpans>,
    pub functions: ArenaMap<FunctionId, Span>,
    /// Name ranges of a function's inputs and outputs.
    pub function_io: ArenaMap<FunctionId, (Vec<Span>, Vec<Span>)>,
    /// The tensors whose values were read from a list of plain numbers in one go, by where
    /// the list starts: the next version's lowering takes the values of a list the edit did
    /// not touch from here instead of reading them again (see `from_ast::Earlier`).
    pub number_lists: std::collections::HashMap<u32, TensorId>,
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

impl SourceMap {
    /// The text range of an anchor, when the model came from text.
    pub fn resolve(&self, anchor: Anchor) -> Option<Span> {
        let values = |g: GraphId| self.graph_values.get(g);
        let node = |n: NodeId| self.nodes.get(n);
        match anchor {
            Anchor::Text(span) => Some(span),
            Anchor::Model | Anchor::SparseInitializer(..) => None,
            Anchor::Graph(g) => self.graphs.get(g).copied(),
            Anchor::GraphInput(g, i) => values(g)?.inputs.get(i).copied(),
            Anchor::GraphOutput(g, i) => values(g)?.outputs.get(i).copied(),
            Anchor::Initializer(g, i) => values(g)?.initializers.get(i).copied(),
            Anchor::ValueInfo(g, i) => values(g)?.value_info.get(i).copied(),
            Anchor::Node(n) => node(n).map(|s| s.node),
            Anchor::NodeInput(n, i) => node(n)?.inputs.get(i).copied(),
            Anchor::NodeOutput(n, i) => node(n)?.outputs.get(i).copied(),
            Anchor::Attribute(n, i) => node(n)?.attributes.get(i).copied(),
            Anchor::Function(f) => self.functions.get(f).copied(),
            Anchor::FunctionInput(f, i) => self.function_io.get(f)?.0.get(i).copied(),
            Anchor::FunctionOutput(f, i) => self.function_io.get(f)?.1.get(i).copied(),
        }
    }
}
