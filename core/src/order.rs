//! Node order: onnx requires each graph's nodes in a topological order (a value defined
//! before it is read) and its checker refuses a graph that is not; onnxruntime sorts the
//! nodes at load and runs the model, and some tools write such graphs (onnxruntime's own
//! float16 converter). The runner and the browser run them as onnxruntime does, in a
//! topological order, saying so once; `check` keeps onnx's verdict.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use foldhash::{HashMap, HashSet};

use crate::ir::{GraphId, Model, NodeId};

/// What [`sort_nodes`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reordered {
    /// Graphs whose nodes were out of order and are now sorted.
    pub sorted: usize,
    /// Graphs out of order that no order fixes (a cycle, or a value read and never
    /// defined): left as they are, for the runner to report.
    pub unsortable: usize,
}

/// Sorts the nodes of every graph of `model` that is not in a topological order, keeping
/// the written order wherever the dependencies allow (a stable sort).
pub fn sort_nodes(model: &mut Model) -> Reordered {
    let mut done = Reordered::default();
    let graphs: Vec<GraphId> = model.graphs.iter().map(|(g, _)| g).collect();
    for g in graphs {
        match sorted_order(model, g) {
            Ok(None) => {}
            Ok(Some(order)) => {
                model.graphs[g].nodes = order;
                done.sorted += 1;
            }
            Err(()) => done.unsortable += 1,
        }
    }
    done
}

/// The nodes of graph `g` in a topological order, `None` when they are in one already,
/// `Err` when there is none.
#[allow(clippy::result_unit_err)]
pub fn sorted_order(model: &Model, g: GraphId) -> Result<Option<Vec<NodeId>>, ()> {
    let nodes = &model.graphs[g].nodes;
    let mut producer: HashMap<&[u8], usize> = HashMap::default();
    for (i, &n) in nodes.iter().enumerate() {
        for output in model.nodes[n].outputs.iter().filter(|o| !o.as_bytes().is_empty()) {
            producer.entry(output.as_bytes()).or_insert(i);
        }
    }
    // Each node's producers in this graph: of its inputs, and of the names its subgraphs
    // read from this scope (a superset: a name a subgraph defines itself adds an edge to a
    // same-named value here, which only orders more).
    let deps: Vec<Vec<usize>> = nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let mut read = Vec::new();
            reads(model, n, &mut read);
            let mut found: Vec<usize> =
                read.iter().filter_map(|name| producer.get(name).copied()).filter(|&p| p != i).collect();
            found.sort_unstable();
            found.dedup();
            found
        })
        .collect();
    if deps.iter().enumerate().all(|(i, d)| d.iter().all(|&p| p < i)) {
        return Ok(None);
    }
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, d) in deps.iter().enumerate() {
        for &p in d {
            readers[p].push(i);
        }
    }
    // Kahn's algorithm, always taking the earliest written node that is ready.
    let mut ready: BinaryHeap<Reverse<usize>> = (0..nodes.len()).filter(|&i| waiting[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(nodes[i]);
        for &r in &readers[i] {
            waiting[r] -= 1;
            if waiting[r] == 0 {
                ready.push(Reverse(r));
            }
        }
    }
    if order.len() == nodes.len() { Ok(Some(order)) } else { Err(()) }
}

/// Every value name node `n` reads: its inputs, and those of the nodes of its subgraphs,
/// at any depth.
fn reads<'m>(model: &'m Model, n: NodeId, out: &mut Vec<&'m [u8]>) {
    let node = &model.nodes[n];
    out.extend(node.inputs.iter().map(|i| i.as_bytes()).filter(|i| !i.is_empty()));
    let mut seen = HashSet::default();
    for g in node.attributes.iter().flat_map(|a| a.subgraphs()) {
        if seen.insert(g) {
            for &inner in &model.graphs[g].nodes {
                reads(model, inner, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Graph, Node};

    /// A graph of `Relu` nodes, each `(input, output)`, in the order given.
    fn chain(edges: &[(&str, &str)]) -> (Model, GraphId) {
        let mut m = Model::default();
        let nodes = edges
            .iter()
            .map(|(i, o)| {
                m.nodes.alloc(Node {
                    inputs: smallvec::smallvec![(*i).into()],
                    outputs: smallvec::smallvec![(*o).into()],
                    op_type: Some("Relu".into()),
                    ..Node::default()
                })
            })
            .collect();
        let g = m.graphs.alloc(Graph { nodes, ..Graph::default() });
        m.graph = Some(g);
        (m, g)
    }

    fn outputs(m: &Model, g: GraphId) -> Vec<String> {
        m.graphs[g].nodes.iter().map(|&n| m.nodes[n].outputs[0].to_string()).collect()
    }

    #[test]
    fn an_ordered_graph_is_left_alone() {
        let (mut m, g) = chain(&[("x", "a"), ("a", "b"), ("x", "c")]);
        assert_eq!(sort_nodes(&mut m), Reordered::default());
        assert_eq!(outputs(&m, g), ["a", "b", "c"]);
    }

    #[test]
    fn out_of_order_nodes_are_sorted_stably() {
        // c reads b, b reads a; d is independent and keeps its place among the ready ones.
        let (mut m, g) = chain(&[("b", "c"), ("x", "d"), ("a", "b"), ("x", "a")]);
        assert_eq!(sort_nodes(&mut m), Reordered { sorted: 1, unsortable: 0 });
        assert_eq!(outputs(&m, g), ["d", "a", "b", "c"]);
    }

    #[test]
    fn a_cycle_is_left_for_the_runner_to_report() {
        let (mut m, g) = chain(&[("b", "a"), ("a", "b")]);
        assert_eq!(sort_nodes(&mut m), Reordered { sorted: 0, unsortable: 1 });
        assert_eq!(outputs(&m, g), ["a", "b"]);
    }
}
