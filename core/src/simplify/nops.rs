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
    if node.schema_domain() != Some("")
        || node.inputs.first().is_none_or(|i| i.is_empty())
        || node.outputs.first().is_none_or(|o| o.is_empty())
    {
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
            let same = before.is_some() && node.outputs.len() == 1 && before == static_shape(types, &node.outputs[0]);
            same || reshape_to_own_shape(model, g, n, types)
        }
        _ => false,
    }
}

/// Drops the inputs of Concat nodes that inference shows add nothing: those of size 0 along
/// the concatenated axis (a padding made for a batch of zero rows; PyTorch's exports make
/// such tensors with ConstantOfShape). At least one input stays; a Concat left with one is an
/// identity, which [`remove_nops`] removes. Returns how many inputs were dropped.
pub(super) fn drop_empty_concat_inputs(model: &mut Model, g: GraphId, types: &GraphTypes) -> usize {
    let mut dropped = 0;
    for k in 0..model.graphs[g].nodes.len() {
        let n = model.graphs[g].nodes[k];
        let node = &model.nodes[n];
        let is_concat = node.schema_domain() == Some("") && node.op_type.as_ref().is_some_and(|o| o == "Concat");
        if !is_concat || node.inputs.len() < 2 || node.inputs.iter().any(Str::is_empty) {
            continue;
        }
        let Some(AttributeValue::Int(axis)) = node.attribute("axis").and_then(|a| a.value()) else { continue };
        let empty = |name: &Str| -> bool {
            let Some(TypeValue::Tensor(t)) = types.types.get(name).and_then(|t| t.value.as_ref()) else { return false };
            let Some(shape) = t.shape.as_ref() else { return false };
            let rank = shape.dims.len() as i64;
            let at = if axis < 0 { axis.saturating_add(rank) } else { axis };
            let dim = usize::try_from(at).ok().and_then(|a| shape.dims.get(a));
            matches!(dim.and_then(|d| d.value.as_ref()), Some(DimValue::Value(0)))
        };
        let keep: Vec<bool> = node.inputs.iter().map(|i| !empty(i)).collect();
        let kept = keep.iter().filter(|&&k| k).count();
        if kept == node.inputs.len() {
            continue;
        }
        let node = &mut model.nodes[n];
        if kept == 0 {
            dropped += node.inputs.len() - 1;
            node.inputs.truncate(1);
        } else {
            dropped += node.inputs.len() - kept;
            let mut k = 0;
            node.inputs.retain(|_| {
                k += 1;
                keep[k - 1]
            });
        }
    }
    dropped
}

/// Whether Reshape `n` asks, by a constant shape, for the shape its input has: the same rank,
/// every size but one the input's known size, and that one `-1` (standing for a size
/// inference leaves symbolic, such as a batch). Not with a 0 (a copied size).
fn reshape_to_own_shape(model: &Model, g: GraphId, n: NodeId, types: &GraphTypes) -> bool {
    let node = &model.nodes[n];
    if node.op_type.as_ref().is_none_or(|o| o != "Reshape") || node.inputs.len() != 2 || node.outputs.len() != 1 {
        return false;
    }
    let Some(target) = graph_constant_ints(model, g, &node.inputs[1]) else { return false };
    let Some(TypeValue::Tensor(t)) = types.types.get(&node.inputs[0]).and_then(|t| t.value.as_ref()) else {
        return false;
    };
    let Some(shape) = t.shape.as_ref() else { return false };
    if shape.dims.len() != target.len() || target.contains(&0) || target.iter().filter(|&&d| d == -1).count() > 1 {
        return false;
    }
    shape.dims.iter().zip(&target).all(|(d, &want)| match &d.value {
        Some(DimValue::Value(v)) => *v == want || (want == -1 && target.iter().all(|&w| w != 0)),
        _ => want == -1,
    }) && target.iter().all(|&w| w == -1 || w > 0)
}

/// The integers of initializer `name` of graph `g`, when it is one a caller cannot replace.
fn graph_constant_ints(model: &Model, g: GraphId, name: &Str) -> Option<Vec<i64>> {
    let graph = &model.graphs[g];
    if model.ir_version.is_none_or(|v| v >= 4) && graph.inputs.iter().any(|v| v.name.as_ref() == Some(name)) {
        return None;
    }
    let t = graph.initializers.iter().map(|&t| &model.tensors[t]).find(|t| t.name.as_ref() == Some(name))?;
    crate::ir::tensor_data::int_values(t)
}

/// A Reshape reading what a Reshape, Flatten, Squeeze or Unsqueeze made reads that node's
/// input instead, when its own shape is a constant copying no size from its input (none of
/// them changes the elements' order). The earlier node stays for its other readers (a graph
/// output, say) or goes as dead; the Reshape may then ask for its new input's own shape, an
/// identity. Returns how many Reshapes were rewired.
pub(super) fn bypass_reshape_chains(model: &mut Model, g: GraphId) -> usize {
    let producers: std::collections::HashMap<Str, NodeId> = model.graphs[g]
        .nodes
        .iter()
        .flat_map(|&n| model.nodes[n].outputs.iter().map(move |o| (o.clone(), n)))
        .collect();
    let mut rewired = 0;
    for k in 0..model.graphs[g].nodes.len() {
        let c = model.graphs[g].nodes[k];
        let node = &model.nodes[c];
        let reshape = node.schema_domain() == Some("") && node.op_type.as_ref().is_some_and(|o| o == "Reshape");
        if !reshape || node.inputs.len() != 2 {
            continue;
        }
        let Some(&p) = producers.get(&node.inputs[0]) else { continue };
        let producer = &model.nodes[p];
        let reshaping = producer.schema_domain() == Some("")
            && producer
                .op_type
                .as_ref()
                .and_then(Str::as_str)
                .is_some_and(|o| matches!(o, "Reshape" | "Flatten" | "Squeeze" | "Unsqueeze"))
            && producer.outputs.len() == 1;
        let Some(source) = producer.inputs.first().filter(|i| !i.is_empty()).cloned() else { continue };
        let Some(shape) = graph_constant_ints(model, g, &node.inputs[1]) else { continue };
        let allow_zero = matches!(node.attribute("allowzero").and_then(|a| a.value()), Some(AttributeValue::Int(1)));
        if !reshaping || (!allow_zero && shape.contains(&0)) {
            continue;
        }
        model.nodes[c].inputs[0] = source;
        rewired += 1;
    }
    rewired
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
