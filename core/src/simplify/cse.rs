//! The same value computed twice, computed once: two nodes of one operator with the same
//! inputs and attributes (an exporter's repeated `Shape` of one value, the Gather and Concat
//! after each), and initializers with the same type, shape and bytes. The later one's readers
//! read the earlier one's value; a value that is a graph output is never merged away.

use std::collections::HashMap;

use super::{graph_outputs, rename_reads};
use crate::ir::{GraphId, Model, NodeId, Str, Tensor};

/// Merges duplicate nodes and initializers of graph `g`; how many were merged.
pub(super) fn merge_duplicates(model: &mut Model, g: GraphId) -> usize {
    merge_initializers(model, g) + merge_nodes(model, g)
}

/// What two nodes must share to be the same computation, before their attributes are
/// compared: domain, operator and inputs.
type NodeKey = (Option<Str>, Option<Str>, Vec<Str>);

fn merge_nodes(model: &mut Model, g: GraphId) -> usize {
    let outputs = graph_outputs(model, g);
    let table = crate::infer::operator_table();
    // Nodes seen, by operator and inputs; a match needs equal attributes too.
    let mut seen: HashMap<NodeKey, Vec<NodeId>> = HashMap::new();
    let mut merged = Vec::new();
    for &n in &model.graphs[g].nodes {
        let node = &model.nodes[n];
        let random = node
            .schema_domain()
            .zip(node.op_type.as_ref().and_then(Str::as_str))
            .and_then(|(d, o)| table.get(d, o))
            .is_none_or(|op| op.traits().random || op.traits().control);
        let holds_graphs = node.attributes.iter().any(|a| a.subgraphs().next().is_some());
        // Only operators with a schema (a custom one may have effects), none random, no
        // subgraphs, no output the graph gives out.
        if random || holds_graphs || node.outputs.iter().any(|o| outputs.contains(o)) {
            continue;
        }
        let key = (node.domain.clone(), node.op_type.clone(), node.inputs.to_vec());
        let same = seen.entry(key).or_default();
        let twin = same.iter().copied().find(|&m| {
            let other = &model.nodes[m];
            other.attributes == node.attributes && other.outputs.len() == node.outputs.len()
        });
        match twin {
            Some(first) => merged.push((n, first)),
            None => same.push(n),
        }
    }
    for &(later, first) in &merged {
        let pairs: Vec<(Str, Str)> = model.nodes[later]
            .outputs
            .iter()
            .cloned()
            .zip(model.nodes[first].outputs.iter().cloned())
            .filter(|(a, _)| !a.is_empty())
            .collect();
        for (from, to) in pairs {
            rename_reads(model, g, &from, &to);
        }
    }
    let gone: std::collections::HashSet<NodeId> = merged.iter().map(|(n, _)| *n).collect();
    model.graphs[g].nodes.retain(|n| !gone.contains(n));
    merged.len()
}

/// A tensor's identity for merging: element type, shape and little-endian bytes (`None` for
/// one whose bytes are elsewhere, or of a type kept in typed fields only, such as strings).
fn content(t: &Tensor) -> Option<(i32, Vec<i64>, bytes::Bytes)> {
    if t.is_external() {
        return None;
    }
    let raw = match t.raw_data.as_ref().filter(|r| !r.is_empty()) {
        Some(raw) => raw.clone(),
        // Typed values are compared as bytes too; a big typed tensor (rare: exporters write
        // raw bytes) is not copied for that.
        None if t.element_count()? > 1 << 20 => return None,
        None => {
            let mut copy = t.clone();
            crate::ir::tensor_data::typed_to_raw(&mut copy).ok()?;
            copy.raw_data?
        }
    };
    Some((t.data_type?, t.dims.clone(), raw))
}

/// How many of a tensor's first bytes sort initializers before any is compared whole.
const COMPARED_FIRST: usize = 4096;

fn merge_initializers(model: &mut Model, g: GraphId) -> usize {
    let graph = &model.graphs[g];
    // An initializer a graph input can replace is not a constant: never merged.
    let listed: std::collections::HashSet<&Str> = graph.inputs.iter().filter_map(|v| v.name.as_ref()).collect();
    let outputs = graph_outputs(model, g);
    // Only initializers of one type and shape can be the same: their bytes are read (and
    // compared) only where a type and shape is shared.
    let mut by_shape: foldhash::HashMap<(Option<i32>, &[i64]), Vec<&Tensor>> = foldhash::HashMap::default();
    for &t in &graph.initializers {
        let tensor = &model.tensors[t];
        let Some(name) = tensor.name.as_ref() else { continue };
        if !listed.contains(name) && !outputs.contains(name) {
            by_shape.entry((tensor.data_type, tensor.dims.as_slice())).or_default().push(tensor);
        }
    }
    let mut renames = Vec::new();
    for group in by_shape.values().filter(|g| g.len() > 1) {
        // Tensors by their first bytes, then compared whole within one bucket: weights
        // that differ (nearly all) are told apart by a page each, so a model's gigabytes
        // in side files are not all read to find none the same.
        let mut firsts: foldhash::HashMap<bytes::Bytes, Vec<(bytes::Bytes, &Str)>> = foldhash::HashMap::default();
        for tensor in group {
            let (Some(name), Some((_, _, bytes))) = (tensor.name.as_ref(), content(tensor)) else { continue };
            let bucket = firsts.entry(bytes.slice(..bytes.len().min(COMPARED_FIRST))).or_default();
            match bucket.iter().find(|(other, _)| *other == bytes) {
                Some((_, first)) => renames.push((name.clone(), (*first).clone())),
                None => bucket.push((bytes, name)),
            }
        }
    }
    for (from, to) in &renames {
        rename_reads(model, g, from, to);
    }
    // The merged-away initializers are unread now; the dead-node pass removes them.
    renames.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Initializers of 8 KiB: two the same merge; one that differs only past the first
    /// 4 KiB (the bytes they are bucketed by) does not.
    #[test]
    fn initializers_merge_when_every_byte_is_the_same() {
        let values = |last: &str| {
            let mut v = vec!["0.5"; 2048];
            v[2047] = last;
            v.join(", ")
        };
        let text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\n\
             g (float[2048] x) => (float[2048] y3)\n\
             <float[2048] w1 = {{{}}}, float[2048] w2 = {{{}}}, float[2048] w3 = {{{}}}>\n\
             {{\n  y1 = Add(x, w1)\n  y2 = Add(y1, w2)\n  y3 = Add(y2, w3)\n}}\n",
            values("1.0"),
            values("2.0"),
            values("1.0"),
        );
        let mut model = crate::analysis::analyze_text(&text).model;
        let g = model.graph.unwrap();
        assert_eq!(merge_initializers(&mut model, g), 1);
        let reads: Vec<String> = model.graphs[g].nodes.iter().map(|&n| model.nodes[n].inputs[1].to_string()).collect();
        assert_eq!(reads, ["w1", "w2", "w1"]);
    }
}
