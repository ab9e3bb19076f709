//! Where an IR place sits in the protobuf message, spelled as a field path
//! (`graph.node[3].attribute[0].g.node[1].input[2]`): how diagnostics on binary models say
//! where they point, since there is no text to underline.

use std::collections::HashMap;

use crate::diagnostic::Anchor;
use crate::ir::{FunctionId, GraphId, Model, NodeId};

/// The path of every graph, node and function of one model, computed once.
#[derive(Debug, Default)]
pub struct ProtoPaths {
    graphs: HashMap<GraphId, String>,
    nodes: HashMap<NodeId, String>,
    functions: HashMap<FunctionId, String>,
}

impl ProtoPaths {
    pub fn new(model: &Model) -> ProtoPaths {
        let mut paths = ProtoPaths::default();
        if let Some(g) = model.graph {
            paths.graph(model, g, "graph".to_owned());
        }
        for (i, t) in model.training_info.iter().enumerate() {
            if let Some(g) = t.initialization {
                paths.graph(model, g, format!("training_info[{i}].initialization"));
            }
            if let Some(g) = t.algorithm {
                paths.graph(model, g, format!("training_info[{i}].algorithm"));
            }
        }
        for (i, &f) in model.functions.iter().enumerate() {
            let prefix = format!("functions[{i}]");
            for (j, &n) in model.function_store[f].nodes.iter().enumerate() {
                paths.node(model, n, format!("{prefix}.node[{j}]"));
            }
            paths.functions.insert(f, prefix);
        }
        paths
    }

    fn graph(&mut self, model: &Model, id: GraphId, path: String) {
        for (j, &n) in model.graphs[id].nodes.iter().enumerate() {
            self.node(model, n, format!("{path}.node[{j}]"));
        }
        self.graphs.insert(id, path);
    }

    fn node(&mut self, model: &Model, id: NodeId, path: String) {
        for (k, a) in model.nodes[id].attributes.iter().enumerate() {
            if let Some(g) = a.g {
                self.graph(model, g, format!("{path}.attribute[{k}].g"));
            }
            for (m, &g) in a.graphs.iter().enumerate() {
                self.graph(model, g, format!("{path}.attribute[{k}].graphs[{m}]"));
            }
        }
        self.nodes.insert(id, path);
    }

    /// The field path of an anchor followed by what a person recognises it by: the node's
    /// name and operator (`graph.node[101] Reshape_101 (Reshape)`, `… .input[1] of
    /// Reshape_101 (Reshape)`), a graph value's name (`graph.output[0] 'logits'`).
    pub fn described(&self, model: &Model, anchor: Anchor) -> String {
        let path = self.path(anchor);
        // `Reshape_101 (Reshape)`, or the operator alone for a node without a name.
        let node_label = |n: NodeId, bare: bool| {
            let node = &model.nodes[n];
            let op = node.op_type.as_ref().map_or_else(|| "?".to_owned(), |o| o.escaped());
            match node.name.as_ref().filter(|name| !name.is_empty()) {
                Some(name) => format!("{} ({op})", name.escaped()),
                None if bare => op,
                None => format!("({op})"),
            }
        };
        let value = |name: Option<&crate::ir::Str>| name.map_or_else(String::new, |n| format!(" '{}'", n.escaped()));
        match anchor {
            Anchor::Node(n) => format!("{path} {}", node_label(n, false)),
            Anchor::NodeInput(n, _) | Anchor::NodeOutput(n, _) | Anchor::Attribute(n, _) => {
                format!("{path} of {}", node_label(n, true))
            }
            Anchor::GraphInput(g, i) => {
                format!("{path}{}", value(model.graphs[g].inputs.get(i).and_then(|v| v.name.as_ref())))
            }
            Anchor::GraphOutput(g, i) => {
                format!("{path}{}", value(model.graphs[g].outputs.get(i).and_then(|v| v.name.as_ref())))
            }
            Anchor::ValueInfo(g, i) => {
                format!("{path}{}", value(model.graphs[g].value_info.get(i).and_then(|v| v.name.as_ref())))
            }
            Anchor::Initializer(g, i) => format!(
                "{path}{}",
                value(model.graphs[g].initializers.get(i).and_then(|&t| model.tensors[t].name.as_ref()))
            ),
            _ => path,
        }
    }

    /// The field path of an anchor (`""` for the model itself).
    pub fn path(&self, anchor: Anchor) -> String {
        let graph = |g: GraphId| self.graphs.get(&g).cloned().unwrap_or_else(|| "graph".to_owned());
        let node = |n: NodeId| self.nodes.get(&n).cloned().unwrap_or_else(|| "node".to_owned());
        let function = |f: FunctionId| self.functions.get(&f).cloned().unwrap_or_else(|| "functions".to_owned());
        match anchor {
            Anchor::Text(_) | Anchor::Model => String::new(),
            Anchor::Graph(g) => graph(g),
            Anchor::GraphInput(g, i) => format!("{}.input[{i}]", graph(g)),
            Anchor::GraphOutput(g, i) => format!("{}.output[{i}]", graph(g)),
            Anchor::Initializer(g, i) => format!("{}.initializer[{i}]", graph(g)),
            Anchor::SparseInitializer(g, i) => format!("{}.sparse_initializer[{i}]", graph(g)),
            Anchor::ValueInfo(g, i) => format!("{}.value_info[{i}]", graph(g)),
            Anchor::Node(n) => node(n),
            Anchor::NodeInput(n, i) => format!("{}.input[{i}]", node(n)),
            Anchor::NodeOutput(n, i) => format!("{}.output[{i}]", node(n)),
            Anchor::Attribute(n, i) => format!("{}.attribute[{i}]", node(n)),
            Anchor::Function(f) => function(f),
            Anchor::FunctionInput(f, i) => format!("{}.input[{i}]", function(f)),
            Anchor::FunctionOutput(f, i) => format!("{}.output[{i}]", function(f)),
        }
    }
}
