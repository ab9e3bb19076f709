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

/// Where each line of a text starts: byte offsets to 1-based lines and columns (columns in
/// characters, as editors and compilers count them) without scanning the text again for
/// each place, so that placing every diagnostic of a big text stays linear.
#[derive(Debug, Clone, Default)]
pub struct LineStarts {
    starts: Vec<usize>,
}

impl LineStarts {
    pub fn new(text: &str) -> LineStarts {
        LineStarts { starts: std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect() }
    }

    /// The 1-based line holding byte `offset`.
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).max(1)
    }

    /// The 1-based line and column of byte `offset` of `text`, the text these lines are of
    /// (an offset inside a character counts as that character's start).
    pub fn line_column(&self, text: &str, offset: usize) -> (usize, usize) {
        let end = char_start(text, offset);
        let line = self.line(end);
        let start = self.starts.get(line - 1).copied().unwrap_or(0).min(end);
        (line, text[start..end].chars().count() + 1)
    }
}

/// The 1-based line and column of one byte offset (for many, keep a [`LineStarts`]).
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..char_start(text, offset)];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// The start of the character holding byte `offset` (the text's end past it).
fn char_start(text: &str, offset: usize) -> usize {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_characters_from_one() {
        let text = "ab\né€x\n\nz";
        let lines = LineStarts::new(text);
        for (offset, expected) in [
            (0, (1, 1)),
            (2, (1, 3)),
            (3, (2, 1)),
            (5, (2, 2)),
            (6, (2, 2)),
            (8, (2, 3)),
            (10, (3, 1)),
            (11, (4, 1)),
            (99, (4, 2)),
        ] {
            assert_eq!(lines.line_column(text, offset), expected, "offset {offset}");
            assert_eq!(line_column(text, offset), expected, "offset {offset}");
        }
    }
}
