//! One side's graph or function body, seen the way the diff compares it: where each value a
//! node reads comes from, and who reads each value.

use std::collections::HashMap;

use crate::ir::{FunctionId, GraphId, Model, NodeId, Str, TensorId};

/// Where a name read in a body is defined.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Source {
    /// An optional input left out (an empty name).
    Empty,
    Input(usize),
    Initializer(usize),
    /// Output `.1` of a node of this body.
    Node(NodeId, usize),
    /// Defined outside the body (a subgraph's read of an enclosing graph's value), or nowhere.
    Outer,
}

/// Who reads a value: a node's input slot, or the body's output list.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Reader {
    Node(NodeId, usize),
    Output(usize),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Holder {
    Graph(GraphId),
    Function(FunctionId),
}

pub(super) struct Body<'m> {
    pub model: &'m Model,
    pub holder: Holder,
    pub nodes: &'m [NodeId],
    pub inputs: Vec<Str>,
    pub outputs: Vec<Str>,
    pub initializers: &'m [TensorId],
    defined: HashMap<Str, Source>,
    readers: HashMap<Str, Vec<Reader>>,
    /// The nodes producers first (ties and anything on a cycle in their listed order).
    pub order: Vec<NodeId>,
}

impl<'m> Body<'m> {
    pub fn graph(model: &'m Model, g: GraphId) -> Body<'m> {
        let graph = &model.graphs[g];
        let names = |list: &[crate::ir::ValueInfo]| list.iter().map(|v| v.name.clone().unwrap_or_default()).collect();
        Body::new(
            model,
            Holder::Graph(g),
            &graph.nodes,
            names(&graph.inputs),
            names(&graph.outputs),
            &graph.initializers,
        )
    }

    pub fn function(model: &'m Model, f: FunctionId) -> Body<'m> {
        let function = &model.function_store[f];
        Body::new(model, Holder::Function(f), &function.nodes, function.inputs.clone(), function.outputs.clone(), &[])
    }

    fn new(
        model: &'m Model,
        holder: Holder,
        nodes: &'m [NodeId],
        inputs: Vec<Str>,
        outputs: Vec<Str>,
        initializers: &'m [TensorId],
    ) -> Body<'m> {
        let mut defined = HashMap::new();
        // First definition wins, inputs before initializers (an IR 3 initializer listed as an
        // input is that input, with a default).
        for (i, name) in inputs.iter().enumerate() {
            defined.entry(name.clone()).or_insert(Source::Input(i));
        }
        for (k, &t) in initializers.iter().enumerate() {
            let name = model.tensors[t].name.clone().unwrap_or_default();
            defined.entry(name).or_insert(Source::Initializer(k));
        }
        for &n in nodes {
            for (j, name) in model.nodes[n].outputs.iter().enumerate() {
                if !name.is_empty() {
                    defined.entry(name.clone()).or_insert(Source::Node(n, j));
                }
            }
        }
        defined.remove(&Str::default());
        let mut readers: HashMap<Str, Vec<Reader>> = HashMap::new();
        for &n in nodes {
            for (slot, name) in model.nodes[n].inputs.iter().enumerate() {
                if !name.is_empty() {
                    readers.entry(name.clone()).or_default().push(Reader::Node(n, slot));
                }
            }
        }
        for (i, name) in outputs.iter().enumerate() {
            readers.entry(name.clone()).or_default().push(Reader::Output(i));
        }
        let mut body =
            Body { model, holder, nodes, inputs, outputs, initializers, defined, readers, order: Vec::new() };
        body.order = body.producers_first();
        body
    }

    pub fn source(&self, name: &Str) -> Source {
        if name.is_empty() {
            return Source::Empty;
        }
        self.defined.get(name).copied().unwrap_or(Source::Outer)
    }

    pub fn readers(&self, name: &Str) -> &[Reader] {
        if name.is_empty() {
            return &[];
        }
        self.readers.get(name).map_or(&[], Vec::as_slice)
    }

    /// The name of a source's value in this body.
    pub fn name_of(&self, source: Source) -> Option<Str> {
        match source {
            Source::Empty | Source::Outer => None,
            Source::Input(i) => self.inputs.get(i).cloned(),
            Source::Initializer(k) => self.model.tensors[self.initializers[k]].name.clone(),
            Source::Node(n, j) => self.model.nodes[n].outputs.get(j).cloned(),
        }
    }

    /// Kahn's order over the producer edges inside the body; nodes left on a cycle (an
    /// invalid model) follow in their listed order.
    fn producers_first(&self) -> Vec<NodeId> {
        let position: HashMap<NodeId, usize> = self.nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let mut waiting = vec![0usize; self.nodes.len()];
        let mut after: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for (i, &n) in self.nodes.iter().enumerate() {
            for name in self.model.nodes[n].inputs.iter() {
                if let Source::Node(p, _) = self.source(name)
                    && let Some(&pi) = position.get(&p)
                    && pi != i
                {
                    waiting[i] += 1;
                    after[pi].push(i);
                }
            }
        }
        let mut ready: std::collections::VecDeque<usize> = (0..self.nodes.len()).filter(|&i| waiting[i] == 0).collect();
        let mut done = vec![false; self.nodes.len()];
        let mut order = Vec::with_capacity(self.nodes.len());
        while let Some(i) = ready.pop_front() {
            done[i] = true;
            order.push(self.nodes[i]);
            for &k in &after[i] {
                waiting[k] -= 1;
                if waiting[k] == 0 {
                    ready.push_back(k);
                }
            }
        }
        order.extend(self.nodes.iter().enumerate().filter(|&(i, _)| !done[i]).map(|(_, &n)| n));
        order
    }
}
