//! Which node of one body is which node of the other.
//!
//! A node is known by what it computes from (its operator, attributes and, recursively, its
//! inputs' producers: the *upward* hash) and by what is computed from it (its operator,
//! attributes and its readers, recursively: the *downward* hash). One change breaks only
//! the upward hashes below it and the downward hashes above it, so every other node is still
//! found by one of the two; the changed node itself is then found through its neighbours.
//! Names help only when they are asked to: with `ignore_names`, inputs count by position,
//! initializers by type and shape, and a consistent renaming is invisible.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use crate::ir::{Attribute, GraphId, Model, NodeId, TensorId};

use super::body::{Body, Reader, Source};

pub(super) fn hash_of<T: Hash>(value: T) -> u64 {
    foldhash::quality::FixedState::with_seed(0x6f6e_6e78_6469_6666).hash_one(value)
}

/// What was paired: nodes both ways, and inputs, outputs and initializers by index.
#[derive(Default, Debug)]
pub(super) struct Alignment {
    pub nodes: HashMap<NodeId, NodeId>,
    pub nodes_back: HashMap<NodeId, NodeId>,
    pub inputs: HashMap<usize, usize>,
    pub inputs_back: HashMap<usize, usize>,
    pub outputs: HashMap<usize, usize>,
    pub outputs_back: HashMap<usize, usize>,
    pub initializers: HashMap<usize, usize>,
    pub initializers_back: HashMap<usize, usize>,
}

impl Alignment {
    fn pair_nodes(&mut self, a: NodeId, b: NodeId) {
        self.nodes.insert(a, b);
        self.nodes_back.insert(b, a);
    }

    /// The other body's source for one of the first body's, where it is paired.
    pub fn counterpart(&self, source: Source) -> Option<Source> {
        Some(match source {
            Source::Empty => Source::Empty,
            Source::Outer => Source::Outer,
            Source::Input(i) => Source::Input(*self.inputs.get(&i)?),
            Source::Initializer(k) => Source::Initializer(*self.initializers.get(&k)?),
            Source::Node(n, j) => Source::Node(*self.nodes.get(&n)?, j),
        })
    }

    /// Pairs initializers that are also listed as inputs (IR 3 and older: an input with a
    /// default) through the inputs' pairing.
    fn pair_listed_initializers(&mut self, a: &Body, b: &Body) {
        let by_name = |body: &Body| -> HashMap<crate::ir::Str, usize> {
            let names = body.initializers.iter().map(|&t| body.model.tensors[t].name.clone().unwrap_or_default());
            names.enumerate().map(|(k, name)| (name, k)).collect()
        };
        let (in_a, in_b) = (by_name(a), by_name(b));
        for (&i, &j) in &self.inputs {
            if let (Some(&ka), Some(&kb)) = (in_a.get(&a.inputs[i]), in_b.get(&b.inputs[j]))
                && !self.initializers.contains_key(&ka)
                && !self.initializers_back.contains_key(&kb)
            {
                self.initializers.insert(ka, kb);
                self.initializers_back.insert(kb, ka);
            }
        }
    }

    /// Pairs what is left (initializers no paired node reads) in order, where type and shape
    /// agree.
    fn pair_remaining_initializers(&mut self, a: &Body, b: &Body) {
        let mut left_b: HashMap<(Option<i32>, &[i64]), std::collections::VecDeque<usize>> = HashMap::new();
        for l in (0..b.initializers.len()).filter(|l| !self.initializers_back.contains_key(l)) {
            let y = &b.model.tensors[b.initializers[l]];
            left_b.entry((y.data_type, &y.dims[..])).or_default().push_back(l);
        }
        for k in 0..a.initializers.len() {
            if self.initializers.contains_key(&k) {
                continue;
            }
            let x = &a.model.tensors[a.initializers[k]];
            if let Some(l) = left_b.get_mut(&(x.data_type, &x.dims[..])).and_then(std::collections::VecDeque::pop_front)
            {
                self.initializers.insert(k, l);
                self.initializers_back.insert(l, k);
            }
        }
    }

    /// Pairs the initializers read at the same input slot of paired nodes, where neither is
    /// paired yet (renamed, or every initializer when names are ignored).
    fn pair_initializers_by_readers(&mut self, a: &Body, b: &Body) {
        for &na in a.nodes {
            let Some(&nb) = self.nodes.get(&na) else { continue };
            for (ia, ib) in a.model.nodes[na].inputs.iter().zip(b.model.nodes[nb].inputs.iter()) {
                if let (Source::Initializer(ka), Source::Initializer(kb)) = (a.source(ia), b.source(ib))
                    && !self.initializers.contains_key(&ka)
                    && !self.initializers_back.contains_key(&kb)
                {
                    self.initializers.insert(ka, kb);
                    self.initializers_back.insert(kb, ka);
                }
            }
        }
    }
}

pub(super) fn align(a: &Body, b: &Body, ignore_names: bool) -> Alignment {
    let mut al = Alignment::default();
    pair_lists(&a.inputs, &b.inputs, ignore_names, &mut al.inputs, &mut al.inputs_back);
    pair_lists(&a.outputs, &b.outputs, ignore_names, &mut al.outputs, &mut al.outputs_back);
    if !ignore_names {
        let names = |body: &Body| -> HashMap<crate::ir::Str, usize> {
            let mut map = HashMap::new();
            for (k, &t) in body.initializers.iter().enumerate() {
                map.entry(body.model.tensors[t].name.clone().unwrap_or_default()).or_insert(k);
            }
            map
        };
        let in_b = names(b);
        for (name, ka) in names(a) {
            if let Some(&kb) = in_b.get(&name) {
                al.initializers.insert(ka, kb);
                al.initializers_back.insert(kb, ka);
            }
        }
    }
    al.pair_listed_initializers(a, b);
    let (keys_a, keys_b) = (node_keys(a), node_keys(b));
    let (up_a, up_b) = (upward(a, &keys_a, ignore_names), upward(b, &keys_b, ignore_names));
    let (down_a, down_b) = (downward(a, &keys_a, ignore_names), downward(b, &keys_b, ignore_names));
    if !ignore_names {
        // Names first where they agree with the operator: of two structurally equal places
        // (an Identity put before another), the one named as before is the same node.
        let op_and = |body: &Body, n: NodeId, name: &crate::ir::Str| {
            let node = &body.model.nodes[n];
            hash_of((node.domain_str(), node.op_type.as_ref().map(|o| o.as_bytes()), name.as_bytes()))
        };
        let by_name = |body: &Body| -> HashMap<NodeId, u64> {
            let named = body.nodes.iter().filter_map(|&n| Some((n, body.model.nodes[n].name.as_ref()?)));
            named.filter(|(_, name)| !name.is_empty()).map(|(n, name)| (n, op_and(body, n, name))).collect()
        };
        pair_by_key(&mut al, a, b, &by_name(a), &by_name(b));
        let by_output = |body: &Body| -> HashMap<NodeId, u64> {
            let first = body
                .nodes
                .iter()
                .filter_map(|&n| Some((n, body.model.nodes[n].outputs.iter().find(|o| !o.is_empty())?)));
            first.map(|(n, name)| (n, op_and(body, n, name))).collect()
        };
        pair_by_key(&mut al, a, b, &by_output(a), &by_output(b));
    }
    let both = |up: &HashMap<NodeId, u64>, down: &HashMap<NodeId, u64>| {
        up.iter().map(|(&n, &u)| (n, hash_of((u, down[&n])))).collect::<HashMap<_, _>>()
    };
    pair_by_key(&mut al, a, b, &both(&up_a, &down_a), &both(&up_b, &down_b));
    pair_by_key(&mut al, a, b, &up_a, &up_b);
    pair_by_key(&mut al, a, b, &down_a, &down_b);
    al.pair_initializers_by_readers(a, b);
    // Forward passes pair chains from their producers, backward ones from their readers;
    // a bounded number of passes keeps a pathological model from costing its size squared.
    for pass in 0..MAX_NEIGHBOUR_PASSES {
        if !pair_by_neighbours(&mut al, a, b, pass % 2 == 1) {
            break;
        }
        al.pair_initializers_by_readers(a, b);
    }
    al.pair_initializers_by_readers(a, b);
    al.pair_remaining_initializers(a, b);
    al
}

/// Inputs or outputs: by name, the rest by position (renamed ones), or by position only.
fn pair_lists(
    a: &[crate::ir::Str],
    b: &[crate::ir::Str],
    ignore_names: bool,
    there: &mut HashMap<usize, usize>,
    back: &mut HashMap<usize, usize>,
) {
    if !ignore_names {
        let mut in_b: HashMap<&crate::ir::Str, usize> = HashMap::with_capacity(b.len());
        for (j, name) in b.iter().enumerate() {
            in_b.entry(name).or_insert(j);
        }
        for (i, name) in a.iter().enumerate() {
            if let Some(&j) = in_b.get(name)
                && !back.contains_key(&j)
            {
                there.insert(i, j);
                back.insert(j, i);
            }
        }
    }
    for i in 0..a.len().min(b.len()) {
        if !there.contains_key(&i) && !back.contains_key(&i) {
            there.insert(i, i);
            back.insert(i, i);
        }
    }
}

/// Pairs the unpaired nodes whose keys are equal, where a key is held by as many nodes on
/// each side (then in their order); a key held unequally is ambiguous and left to later steps.
fn pair_by_key(al: &mut Alignment, a: &Body, b: &Body, keys_a: &HashMap<NodeId, u64>, keys_b: &HashMap<NodeId, u64>) {
    let group = |body: &Body, keys: &HashMap<NodeId, u64>, paired: &HashMap<NodeId, NodeId>| {
        let mut groups: HashMap<u64, Vec<NodeId>> = HashMap::new();
        for &n in &body.order {
            if let Some(&k) = keys.get(&n)
                && !paired.contains_key(&n)
            {
                groups.entry(k).or_default().push(n);
            }
        }
        groups
    };
    let groups_b = group(b, keys_b, &al.nodes_back);
    let mut groups_a: Vec<(u64, Vec<NodeId>)> = group(a, keys_a, &al.nodes).into_iter().collect();
    let rank: HashMap<NodeId, usize> = a.order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    groups_a.sort_by_key(|(_, nodes)| rank[&nodes[0]]);
    for (key, nodes_a) in groups_a {
        if let Some(nodes_b) = groups_b.get(&key)
            && nodes_b.len() == nodes_a.len()
        {
            for (&na, &nb) in nodes_a.iter().zip(nodes_b) {
                al.pair_nodes(na, nb);
            }
        }
    }
}

/// How many passes of [`pair_by_neighbours`] at most.
const MAX_NEIGHBOUR_PASSES: usize = 16;

/// One pass pairing unpaired nodes through paired neighbours: the reader at the same slot of
/// a paired producer's output, the producer of a paired reader's input. A candidate of the
/// same operator needs one such neighbour, one of another operator two (a changed operator
/// between two paired nodes). Whether anything was paired.
fn pair_by_neighbours(al: &mut Alignment, a: &Body, b: &Body, backward: bool) -> bool {
    let mut paired_any = false;
    let order: Box<dyn Iterator<Item = &NodeId>> =
        if backward { Box::new(a.order.iter().rev()) } else { Box::new(a.order.iter()) };
    for &na in order {
        if al.nodes.contains_key(&na) {
            continue;
        }
        let node = &a.model.nodes[na];
        // In first-seen order, so that ties go the same way on every run.
        let mut votes: Vec<(NodeId, usize)> = Vec::new();
        let mut seen: HashMap<NodeId, usize> = HashMap::new();
        let mut vote = |nb: NodeId| match seen.get(&nb) {
            Some(&i) => votes[i].1 += 1,
            None => {
                seen.insert(nb, votes.len());
                votes.push((nb, 1));
            }
        };
        for (slot, name) in node.inputs.iter().enumerate() {
            let Some(there) = al.counterpart(a.source(name)) else { continue };
            let Some(name_b) = b.name_of(there) else { continue };
            for reader in b.readers(&name_b) {
                if let Reader::Node(nb, s) = *reader
                    && s == slot
                    && !al.nodes_back.contains_key(&nb)
                {
                    vote(nb);
                }
            }
        }
        for (j, name) in node.outputs.iter().enumerate() {
            for reader in a.readers(name) {
                let source_b = match *reader {
                    Reader::Node(ra, slot) => {
                        let Some(&rb) = al.nodes.get(&ra) else { continue };
                        let Some(input) = b.model.nodes[rb].inputs.get(slot) else { continue };
                        b.source(input)
                    }
                    Reader::Output(i) => {
                        let Some(&ib) = al.outputs.get(&i) else { continue };
                        b.source(&b.outputs[ib])
                    }
                };
                if let Source::Node(nb, jb) = source_b
                    && jb == j
                    && !al.nodes_back.contains_key(&nb)
                {
                    vote(nb);
                }
            }
        }
        let same_op = |nb: NodeId| {
            let other = &b.model.nodes[nb];
            other.op_type == node.op_type && other.domain_str() == node.domain_str()
        };
        let best = votes
            .iter()
            .copied()
            .filter(|&(nb, count)| count >= 2 || same_op(nb))
            .max_by_key(|&(nb, count)| (same_op(nb), count));
        if let Some((nb, _)) = best {
            al.pair_nodes(na, nb);
            paired_any = true;
        }
    }
    paired_any
}

/// What a node is on its own: domain, operator and attributes (subgraphs by their shape).
fn node_keys(body: &Body) -> HashMap<NodeId, u64> {
    body.nodes
        .iter()
        .map(|&n| {
            let node = &body.model.nodes[n];
            let attributes: Vec<u64> = node.attributes.iter().map(|at| attribute_key(body.model, at)).collect();
            (n, hash_of((node.domain_str(), node.op_type.as_ref().map(|o| o.as_bytes()), attributes)))
        })
        .collect()
}

pub(super) fn attribute_key(model: &Model, at: &Attribute) -> u64 {
    let tensors: Vec<u64> = at.t.iter().chain(&at.tensors).map(|&t| tensor_key(model, t)).collect();
    let graphs: Vec<u64> = at.g.iter().chain(&at.graphs).map(|&g| graph_key(model, g)).collect();
    hash_of((
        at.name.as_ref().map(|n| n.as_bytes()),
        at.ref_attr_name.as_ref().map(|n| n.as_bytes()),
        at.ty,
        at.f.map(f32::to_bits),
        at.i,
        at.s.as_ref().map(|s| s.as_bytes()),
        at.floats.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        &at.ints,
        at.strings.iter().map(|s| s.as_bytes()).collect::<Vec<_>>(),
        tensors,
        graphs,
    ))
}

/// A tensor's type, shape and (for small ones) bytes: enough to tell constants apart.
fn tensor_key(model: &Model, t: TensorId) -> u64 {
    let tensor = &model.tensors[t];
    let bytes = crate::print::digest::bytes_in_file(tensor).filter(|b| b.len() <= 4096);
    hash_of((tensor.data_type, &tensor.dims, bytes.map(|b| &b[..]), &tensor.int64_data, &tensor.int32_data))
}

/// A subgraph's operators in order: a change inside it changes its holder's key, and the
/// holder is then paired through its neighbours and its subgraphs compared.
fn graph_key(model: &Model, g: GraphId) -> u64 {
    let graph = &model.graphs[g];
    let ops: Vec<Option<&[u8]>> =
        graph.nodes.iter().map(|&n| model.nodes[n].op_type.as_ref().map(|o| o.as_bytes())).collect();
    hash_of((graph.inputs.len(), graph.outputs.len(), ops))
}

fn source_key(body: &Body, name: &crate::ir::Str, up: &HashMap<NodeId, u64>, ignore_names: bool) -> u64 {
    let named = |tag: u8| hash_of((tag, name.as_bytes()));
    match body.source(name) {
        Source::Empty => 0,
        Source::Input(i) if ignore_names => hash_of((1u8, i)),
        Source::Input(_) => named(1),
        Source::Initializer(k) if ignore_names => {
            let t = &body.model.tensors[body.initializers[k]];
            hash_of((2u8, t.data_type, &t.dims))
        }
        Source::Initializer(_) => named(2),
        Source::Node(n, j) => hash_of((3u8, up.get(&n).copied().unwrap_or(0), j)),
        Source::Outer if ignore_names => hash_of(4u8),
        Source::Outer => named(4),
    }
}

fn upward(body: &Body, keys: &HashMap<NodeId, u64>, ignore_names: bool) -> HashMap<NodeId, u64> {
    let mut up = HashMap::with_capacity(body.nodes.len());
    for &n in &body.order {
        let inputs: Vec<u64> =
            body.model.nodes[n].inputs.iter().map(|name| source_key(body, name, &up, ignore_names)).collect();
        up.insert(n, hash_of((keys[&n], inputs)));
    }
    up
}

fn downward(body: &Body, keys: &HashMap<NodeId, u64>, ignore_names: bool) -> HashMap<NodeId, u64> {
    let mut down: HashMap<NodeId, u64> = HashMap::with_capacity(body.nodes.len());
    for &n in body.order.iter().rev() {
        let outputs: Vec<Vec<u64>> = body.model.nodes[n]
            .outputs
            .iter()
            .map(|name| {
                let mut readers: Vec<u64> = body
                    .readers(name)
                    .iter()
                    .map(|r| match *r {
                        Reader::Node(c, slot) => hash_of((down.get(&c).copied().unwrap_or(0), slot)),
                        Reader::Output(i) if ignore_names => hash_of((9u8, i)),
                        Reader::Output(_) => hash_of((9u8, name.as_bytes())),
                    })
                    .collect();
                readers.sort_unstable();
                readers
            })
            .collect();
        down.insert(n, hash_of((keys[&n], outputs)));
    }
    down
}
