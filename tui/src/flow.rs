//! The neighbourhood of a node as a small drawn graph, as `git log --graph` draws history:
//! the nodes a few steps up (producers) and down (consumers) of a centre node, one row each
//! in model order (which is topological), with the edges between them drawn in lanes to
//! the left: `●` a node, `│` an edge passing by, `├─┐` a value read by several nodes (a
//! branch), `●─┘` a node reading several (a merge). Not a layout of the whole graph: a
//! view of where one node's inputs come from and where its outputs go.
//!
//! [`neighbourhood`] picks the nodes, [`draw`] the lanes; both are pure, so the drawing is
//! tested on its own.

use std::collections::{BTreeSet, HashMap, HashSet};

use onnx_core::ir::{Model, NodeId};

use crate::index::{Def, Index};

/// At most this many consumers of one node are followed (a Constant read by 500 nodes
/// would bury the rest); the node says how many more there are.
pub const MAX_FANOUT: usize = 6;

/// The nodes around a centre, and the edges between them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Neighbourhood {
    /// In model order (rows of the scope).
    pub nodes: Vec<NodeId>,
    /// Producer → consumer, both in `nodes`, one per pair.
    pub edges: Vec<(NodeId, NodeId)>,
    /// Per node: producers left out (beyond the depth, or past the fan-out), and consumers.
    pub hidden_above: HashMap<NodeId, usize>,
    pub hidden_below: HashMap<NodeId, usize>,
}

/// The producers of `n` in `scope` (nodes of that scope that make its inputs), in row order.
fn producers(model: &Model, index: &Index, scope: usize, n: NodeId) -> Vec<NodeId> {
    let mut found = BTreeSet::new();
    for name in model.nodes[n].inputs.iter().filter(|i| !i.is_empty()) {
        if let Some((at, Def::Node(p, _))) = index.def(scope, name)
            && at == scope
        {
            found.insert((index.node_at.get(&p).map_or(0, |&(_, row)| row), p));
        }
    }
    found.into_iter().map(|(_, p)| p).collect()
}

/// The consumers of `n` in `scope`, in row order.
fn consumers(model: &Model, index: &Index, scope: usize, n: NodeId) -> Vec<NodeId> {
    let mut found = BTreeSet::new();
    for name in model.nodes[n].outputs.iter().filter(|o| !o.is_empty()) {
        for &(c, _) in index.consumers(scope, name) {
            if index.node_at.get(&c).is_some_and(|&(s, _)| s == scope) {
                found.insert((index.node_at.get(&c).map_or(0, |&(_, row)| row), c));
            }
        }
    }
    found.into_iter().map(|(_, c)| c).collect()
}

/// The nodes within `depth` steps up and down of `centre` in its scope, and their edges.
pub fn neighbourhood(model: &Model, index: &Index, centre: NodeId, depth: usize) -> Neighbourhood {
    let Some(&(scope, _)) = index.node_at.get(&centre) else { return Neighbourhood::default() };
    let mut chosen: HashSet<NodeId> = HashSet::from([centre]);
    let mut hidden_above = HashMap::new();
    let mut hidden_below = HashMap::new();
    // Up through producers, down through consumers, each direction on its own.
    for upward in [true, false] {
        let mut frontier = vec![centre];
        for level in 0..=depth {
            let mut next = Vec::new();
            for &n in &frontier {
                let around = if upward { producers(model, index, scope, n) } else { consumers(model, index, scope, n) };
                let (followed, left) = if level == depth {
                    (&around[..0], around.len())
                } else {
                    let kept = around.len().min(MAX_FANOUT);
                    (&around[..kept], around.len() - kept)
                };
                if left > 0 {
                    let hidden = if upward { &mut hidden_above } else { &mut hidden_below };
                    *hidden.entry(n).or_insert(0) += left;
                }
                for &m in followed {
                    if chosen.insert(m) {
                        next.push(m);
                    }
                }
            }
            frontier = next;
        }
    }
    let mut nodes: Vec<NodeId> = chosen.iter().copied().collect();
    nodes.sort_by_key(|n| index.node_at.get(n).map_or(0, |&(_, row)| row));
    let mut edges = Vec::new();
    for &n in &nodes {
        for c in consumers(model, index, scope, n) {
            if chosen.contains(&c) {
                edges.push((n, c));
            }
        }
    }
    // A node shown whose other producers or consumers are not: say so beside it.
    for &n in &nodes {
        let up = producers(model, index, scope, n).iter().filter(|p| !chosen.contains(p)).count();
        let down = consumers(model, index, scope, n).iter().filter(|c| !chosen.contains(c)).count();
        if up > 0 {
            hidden_above.insert(n, up);
        }
        if down > 0 {
            hidden_below.insert(n, down);
        }
    }
    Neighbourhood { nodes, edges, hidden_above, hidden_below }
}

/// One drawn row: the lanes' characters, and the node it shows (`None` for a row that only
/// branches edges out).
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    pub lanes: String,
    pub node: Option<NodeId>,
}

/// Draws the lanes of `nodes` (in order) and `edges` (producer before consumer).
pub fn draw(nodes: &[NodeId], edges: &[(NodeId, NodeId)]) -> Vec<Row> {
    // Each lane carries an edge down to the consumer waiting for it.
    let mut lanes: Vec<Option<NodeId>> = Vec::new();
    let mut rows = Vec::new();
    for &n in nodes {
        let incoming: Vec<usize> = (0..lanes.len()).filter(|&i| lanes[i] == Some(n)).collect();
        let col = match incoming.first() {
            Some(&c) => c,
            None => match lanes.iter().position(Option::is_none) {
                Some(free) => free,
                None => {
                    lanes.push(None);
                    lanes.len() - 1
                }
            },
        };
        // The node's row: merges come in from the right along `─` to `┘`.
        let cells = lane_cells(&lanes, col, &incoming, '●', '┘', '┴');
        rows.push(Row { lanes: cells, node: Some(n) });
        for &i in &incoming {
            lanes[i] = None;
        }
        // Its edges out: the first stays in its lane, the others take lanes to the right.
        let outgoing: Vec<NodeId> = edges.iter().filter(|(p, _)| *p == n).map(|(_, c)| *c).collect();
        let mut taken = Vec::new();
        for (k, &c) in outgoing.iter().enumerate() {
            let lane = if k == 0 {
                col
            } else {
                match (col + 1..lanes.len()).find(|&i| lanes[i].is_none()) {
                    Some(free) => free,
                    None => {
                        lanes.push(None);
                        lanes.len() - 1
                    }
                }
            };
            lanes[lane] = Some(c);
            taken.push(lane);
        }
        if taken.len() > 1 {
            rows.push(Row { lanes: lane_cells(&lanes, col, &taken, '├', '┐', '┬'), node: None });
        }
        while lanes.last().is_some_and(Option::is_none) {
            lanes.pop();
        }
    }
    // The lanes drawn to one width, so the text after them lines up.
    let width = rows.iter().map(|r| r.lanes.chars().count()).max().unwrap_or(0);
    for r in &mut rows {
        let pad = width - r.lanes.chars().count();
        r.lanes.extend(std::iter::repeat_n(' ', pad));
    }
    rows
}

/// One row of lanes: `own` at lane `col`, and the lanes in `joined` (besides `col`) joined
/// to it along `─`, the farthest drawn `end` and the others `middle`; other lanes in use
/// pass by as `│` (`┼` where the join crosses them). Each lane is two cells wide.
fn lane_cells(lanes: &[Option<NodeId>], col: usize, joined: &[usize], own: char, end: char, middle: char) -> String {
    let last = joined.iter().copied().max().unwrap_or(col).max(col);
    let mut cells = String::new();
    for (i, lane) in lanes.iter().enumerate() {
        let between = i > col && i < last;
        let symbol = if i == col {
            own
        } else if joined.contains(&i) {
            if i == last { end } else { middle }
        } else if lane.is_some() {
            if between { '┼' } else { '│' }
        } else if between {
            '─'
        } else {
            ' '
        };
        cells.push(symbol);
        cells.push(if i >= col && i < last { '─' } else { ' ' });
    }
    cells.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<NodeId> {
        let mut model = Model::default();
        (0..n).map(|_| model.nodes.alloc(onnx_core::ir::Node::default())).collect()
    }

    fn lanes(rows: &[Row]) -> Vec<String> {
        rows.iter().map(|r| r.lanes.trim_end().to_owned()).collect()
    }

    #[test]
    fn a_chain_is_one_lane() {
        let n = ids(3);
        let rows = draw(&n, &[(n[0], n[1]), (n[1], n[2])]);
        assert_eq!(lanes(&rows), ["●", "●", "●"]);
    }

    /// A value read by two nodes branches; the node reading both of their results merges.
    #[test]
    fn a_branch_and_a_merge_are_drawn() {
        let n = ids(4);
        let edges = [(n[0], n[1]), (n[0], n[2]), (n[1], n[3]), (n[2], n[3])];
        let rows = draw(&n, &edges);
        assert_eq!(lanes(&rows), ["●", "├─┐", "● │", "│ ●", "●─┘"]);
        assert_eq!(rows.iter().filter(|r| r.node.is_some()).count(), 4);
        assert_eq!(rows[1].node, None);
    }

    /// An edge passing a node on its way down keeps its lane.
    #[test]
    fn an_edge_passes_by_in_its_lane() {
        let n = ids(3);
        let rows = draw(&n, &[(n[0], n[1]), (n[0], n[2]), (n[1], n[2])]);
        assert_eq!(lanes(&rows), ["●", "├─┐", "● │", "●─┘"]);
    }

    /// Two roots side by side, merging into one node.
    #[test]
    fn unrelated_inputs_start_their_own_lanes() {
        let n = ids(3);
        let rows = draw(&n, &[(n[0], n[2]), (n[1], n[2])]);
        assert_eq!(lanes(&rows), ["●", "│ ●", "●─┘"]);
    }
}
