//! Nodes that pass their input on, removed: readers of the output read the input instead.

use std::collections::HashSet;

use super::{graph_outputs, rename_reads, subgraph_reads};
use crate::infer::GraphTypes;
use crate::ir::{AttributeValue, DimValue, GraphId, Model, NodeId, Str, TypeValue};

/// Whether node `n` only passes its first input on: an Identity; a Dropout in inference
/// mode (no training flag, or a constant false one) whose mask nobody reads; a Transpose
/// that keeps the order, a Cast to the type the value has, a Concat of one input; a
/// Reshape, Flatten, Squeeze, Unsqueeze, Expand or Tile whose input and output have the
/// same fixed shape.
fn passes_input_on(model: &Model, g: GraphId, n: NodeId, read: &HashSet<Str>, types: &GraphTypes) -> bool {
    let node = &model.nodes[n];
    if node.schema_domain() != Some("") || node.inputs.first().is_none_or(|i| i.is_empty()) {
        return false;
    }
    match node.op_type.as_ref().map(Str::as_bytes) {
        Some(b"Identity") => node.outputs.len() == 1,
        Some(b"Dropout") => {
            let mask_unread = node.outputs.get(1).is_none_or(|m| m.is_empty() || !read.contains(m));
            let training = node.inputs.get(2).filter(|t| !t.is_empty());
            let inference = match training {
                None => true,
                Some(name) => constant_false(model, g, name),
            };
            mask_unread && inference
        }
        // A Transpose that keeps the order.
        Some(b"Transpose") => match node.attribute("perm").and_then(|a| a.value()) {
            Some(AttributeValue::Ints(perm)) => perm.iter().enumerate().all(|(i, &p)| p == i as i64),
            _ => static_shape(types, &node.inputs[0]).is_some_and(|s| s.len() <= 1),
        },
        // A Cast to the type the value has.
        Some(b"Cast") => {
            let to = node.attribute("to").and_then(|a| a.value());
            matches!(to, Some(AttributeValue::Int(t)) if elem_type(types, &node.inputs[0]) == Some(t as i32))
        }
        Some(b"Concat") => node.inputs.len() == 1 && node.outputs.len() == 1,
        // Operators that only reshape or repeat, asked for the shape the value has: the same
        // elements in the same order.
        Some(b"Reshape" | b"Flatten" | b"Squeeze" | b"Unsqueeze" | b"Expand" | b"Tile") => {
            let before = static_shape(types, &node.inputs[0]);
            before.is_some() && node.outputs.len() == 1 && before == static_shape(types, &node.outputs[0])
        }
        _ => false,
    }
}

/// The shape inference found for `name`, when every size is a number.
fn static_shape(types: &GraphTypes, name: &Str) -> Option<Vec<i64>> {
    let Some(TypeValue::Tensor(t)) = &types.types.get(name)?.value else { return None };
    t.shape
        .as_ref()?
        .dims
        .iter()
        .map(|d| match d.value {
            Some(DimValue::Value(v)) if v >= 0 => Some(v),
            _ => None,
        })
        .collect()
}

fn elem_type(types: &GraphTypes, name: &Str) -> Option<i32> {
    let Some(TypeValue::Tensor(t)) = &types.types.get(name)?.value else { return None };
    t.elem_type
}

/// Whether `name` is an initializer of graph `g` holding a single false (0).
fn constant_false(model: &Model, g: GraphId, name: &Str) -> bool {
    model.graphs[g].initializers.iter().any(|&t| {
        let t = &model.tensors[t];
        t.name.as_ref() == Some(name)
            && crate::ir::tensor_data::int_values(t).is_some_and(|v| v.len() == 1 && v[0] == 0)
    })
}

/// Removes identities (see [`passes_input_on`]): readers of the output read the input; an
/// output that is a graph output takes the input's place instead, when the input is made by
/// a node of this graph and is neither a graph input nor output.
pub(super) fn remove_nops(model: &mut Model, g: GraphId, types: &GraphTypes) -> usize {
    let outputs = graph_outputs(model, g);
    let inputs: HashSet<Str> = model.graphs[g].inputs.iter().filter_map(|v| v.name.clone()).collect();
    // What is read, for a Dropout's mask (renaming identities' values does not change it).
    let mut read: HashSet<Str> = subgraph_reads(model, g);
    for &m in &model.graphs[g].nodes {
        read.extend(model.nodes[m].inputs.iter().cloned());
    }
    let mut removed = 0;
    let mut i = 0;
    while i < model.graphs[g].nodes.len() {
        let n = model.graphs[g].nodes[i];
        if !passes_input_on(model, g, n, &read, types) {
            i += 1;
            continue;
        }
        let x = model.nodes[n].inputs[0].clone();
        let y = model.nodes[n].outputs[0].clone();
        if !outputs.contains(&y) {
            rename_reads(model, g, &y, &x);
        } else {
            let producer = model.graphs[g].nodes.iter().copied().find(|&m| model.nodes[m].outputs.contains(&x));
            let Some(p) = producer.filter(|_| !inputs.contains(&x) && !outputs.contains(&x)) else {
                i += 1;
                continue;
            };
            for o in model.nodes[p].outputs.iter_mut() {
                if *o == x {
                    *o = y.clone();
                }
            }
            rename_reads(model, g, &x, &y);
        }
        model.graphs[g].nodes.remove(i);
        removed += 1;
    }
    removed
}
