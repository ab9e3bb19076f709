//! The text line of a place in a model: in the text it was read from, or, for a binary
//! model, in its text as `onnx convert` prints it (the canonical printing, read back to find
//! where each part went).

use std::collections::HashMap;

use crate::diagnostic::Anchor;
use crate::ir::{FunctionId, GraphId, Model, NodeId};
use crate::source_map::SourceMap;

#[derive(Debug)]
pub struct Lines {
    starts: crate::source_map::LineStarts,
    map: SourceMap,
    /// For a printed model: its ids → the ids of the model read back from the printing.
    ids: Option<Ids>,
}

#[derive(Debug, Default)]
struct Ids {
    graphs: HashMap<GraphId, GraphId>,
    nodes: HashMap<NodeId, NodeId>,
    functions: HashMap<FunctionId, FunctionId>,
}

impl Lines {
    /// Lines of the text a model was read from, with the source map its reading made.
    pub fn of_text(source: &str, map: SourceMap) -> Lines {
        Lines { starts: crate::source_map::LineStarts::new(source), map, ids: None }
    }

    /// Lines of `model` printed whole (every number in the text), as `onnx convert` prints
    /// a model read from stdin.
    pub fn of_printed(model: &Model) -> Lines {
        Lines::read_back(model, crate::print::canonical::model(model))
    }

    /// Lines of the outline of a binary model decoded from `source`, the file `location`:
    /// the text `onnx convert M.onnx M.onnxtxt` writes beside it (big tensors by reference),
    /// which is also far quicker to make than the whole printing.
    pub fn of_outline(model: &Model, source: &bytes::Bytes, location: &str) -> Lines {
        use crate::print::outline::{DEFAULT_THRESHOLD, refer_to_source};
        let mut outline = model.clone();
        let layout = refer_to_source(&mut outline, source, location, DEFAULT_THRESHOLD, false);
        let mut text = Vec::new();
        // Writing into memory cannot fail.
        let _ = crate::print::canonical::write_model_with(&outline, &layout, &mut text);
        Lines::read_back(model, String::from_utf8_lossy(&text).into_owned())
    }

    /// Lines of `text`, a printing of `model`, found by reading it back and pairing the two
    /// models' graphs, nodes and functions in order.
    fn read_back(model: &Model, text: String) -> Lines {
        let read_back = crate::analysis::analyze_text(&text);
        let mut ids = Ids::default();
        if let (Some(g), Some(h)) = (model.graph, read_back.model.graph) {
            ids.walk_graph(model, &read_back.model, g, h);
        }
        for (&f, &h) in model.functions.iter().zip(&read_back.model.functions) {
            ids.functions.insert(f, h);
            let nodes = model.function_store[f].nodes.iter().zip(&read_back.model.function_store[h].nodes);
            for (&n, &m) in nodes {
                ids.walk_node(model, &read_back.model, n, m);
            }
        }
        Lines { starts: crate::source_map::LineStarts::new(&text), map: read_back.source_map, ids: Some(ids) }
    }

    /// The 1-based line of a place, where the text has it.
    pub fn line(&self, anchor: Anchor) -> Option<usize> {
        if anchor == Anchor::Model {
            return Some(1);
        }
        let anchor = match &self.ids {
            None => anchor,
            Some(ids) => ids.translate(anchor)?,
        };
        let span = match anchor {
            // A node's line is that of its statement (where its outputs are named), not of
            // the `#@` notes before it.
            Anchor::Node(n) => {
                let spans = self.map.nodes.get(n)?;
                spans.outputs.first().copied().unwrap_or(spans.op)
            }
            _ => self.map.resolve(anchor)?,
        };
        Some(self.starts.line(span.start as usize))
    }
}

impl Ids {
    fn walk_graph(&mut self, a: &Model, b: &Model, g: GraphId, h: GraphId) {
        self.graphs.insert(g, h);
        for (&n, &m) in a.graphs[g].nodes.iter().zip(&b.graphs[h].nodes) {
            self.walk_node(a, b, n, m);
        }
    }

    fn walk_node(&mut self, a: &Model, b: &Model, n: NodeId, m: NodeId) {
        self.nodes.insert(n, m);
        for (x, y) in a.nodes[n].attributes.iter().zip(&b.nodes[m].attributes) {
            for (g, h) in x.subgraphs().zip(y.subgraphs()) {
                self.walk_graph(a, b, g, h);
            }
        }
    }

    fn translate(&self, anchor: Anchor) -> Option<Anchor> {
        let g = |g: GraphId| self.graphs.get(&g).copied();
        let n = |n: NodeId| self.nodes.get(&n).copied();
        let f = |f: FunctionId| self.functions.get(&f).copied();
        Some(match anchor {
            Anchor::Text(_) => return None,
            Anchor::Model => Anchor::Model,
            Anchor::Graph(x) => Anchor::Graph(g(x)?),
            Anchor::GraphInput(x, i) => Anchor::GraphInput(g(x)?, i),
            Anchor::GraphOutput(x, i) => Anchor::GraphOutput(g(x)?, i),
            Anchor::Initializer(x, i) => Anchor::Initializer(g(x)?, i),
            Anchor::SparseInitializer(x, i) => Anchor::SparseInitializer(g(x)?, i),
            Anchor::ValueInfo(x, i) => Anchor::ValueInfo(g(x)?, i),
            Anchor::Node(x) => Anchor::Node(n(x)?),
            Anchor::NodeInput(x, i) => Anchor::NodeInput(n(x)?, i),
            Anchor::NodeOutput(x, i) => Anchor::NodeOutput(n(x)?, i),
            Anchor::Attribute(x, i) => Anchor::Attribute(n(x)?, i),
            Anchor::Function(x) => Anchor::Function(f(x)?),
            Anchor::FunctionInput(x, i) => Anchor::FunctionInput(f(x)?, i),
            Anchor::FunctionOutput(x, i) => Anchor::FunctionOutput(f(x)?, i),
        })
    }
}
