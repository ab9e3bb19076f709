//! If, Loop and Scan: their outputs come from inferring their bodies, which see outer values.

use super::env::Env;
use super::infer_subgraph;
use super::lattice::union;
use super::types::{Outputs, tensor, tensor_parts};
use crate::ir::{AttributeValue, DataType, Dimension, GraphId, Model, Node, Type, TypeValue};
use crate::resolve::Places;

pub(crate) fn graph_attr(node: &Node, name: &str) -> Option<GraphId> {
    match node.attribute(name)?.value()? {
        AttributeValue::Graph(g) => Some(g),
        _ => None,
    }
}

/// `inputs` are the numbers of the values the node's inputs refer to.
pub fn infer<'m>(op: &str, model: &'m Model, node: &Node, inputs: Places<'_>, env: &mut Env<'m>) -> Option<Outputs> {
    match op {
        "If" => {
            let then_types = infer_subgraph(model, graph_attr(node, "then_branch")?, env, &[]);
            let else_types = infer_subgraph(model, graph_attr(node, "else_branch")?, env, &[]);
            let types = then_types
                .into_iter()
                .zip(else_types)
                .map(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) => union(&a, &b),
                    _ => None,
                })
                .collect();
            Some(Outputs { types, values: Vec::new() })
        }
        "Loop" => loop_outputs(model, node, inputs, env),
        "Scan" if env.opset >= 9 => scan(model, node, inputs, env),
        "Scan" => scan_batched(model, node, inputs, env),
        "SequenceMap" => sequence_map(model, node, inputs, env),
        _ => None,
    }
}

/// SequenceMap: the body sees one element of each sequence input (other inputs whole);
/// each output is the sequence of what the body gives.
fn sequence_map<'m>(model: &'m Model, node: &Node, inputs: Places<'_>, env: &mut Env<'m>) -> Option<Outputs> {
    let body = graph_attr(node, "body")?;
    let inputs: Vec<Option<Type>> = inputs
        .iter()
        .map(|v| {
            let t = env.ty(v)?;
            match &t.value {
                Some(TypeValue::Sequence(e)) => e.as_deref().cloned(),
                _ => Some(t.clone()),
            }
        })
        .collect();
    let outputs = infer_subgraph(model, body, env, &inputs);
    let types = outputs.into_iter().map(|t| t.map(super::types::sequence_of)).collect();
    Some(Outputs { types, values: Vec::new() })
}

/// How many times a Loop body is inferred again while its loop-carried types still change.
const LOOP_ROUNDS: usize = 3;

/// Loop: the body sees the iteration number, the condition and the loop-carried values.
/// A carried value whose type the body changes (a growing shape) is inferred again with the
/// union of both types, so the types found hold in every iteration; if they have not
/// settled after a few rounds only element types are kept. Each scan output stacks the
/// body's per-iteration values along a new first axis of unknown size.
fn loop_outputs<'m>(model: &'m Model, node: &Node, inputs: Places<'_>, env: &mut Env<'m>) -> Option<Outputs> {
    let body = graph_attr(node, "body")?;
    let scalar = |elem: DataType| Some(tensor(elem.code(), Some(Vec::new())));
    let carried = node.inputs.len().saturating_sub(2);
    // A carried value of no type, or of a type of no kind, is unknown.
    let mut state: Vec<Option<Type>> =
        inputs.iter().skip(2).map(|v| env.ty(v).filter(|t| t.value.is_some()).cloned()).collect();
    // A carried value whose type changes kind in the body (an optional that becomes a
    // sequence) has no union: from then on the body sees the type it declares. So does an
    // unknown one the body gives back of another kind than it declares for it.
    let mut no_union = vec![false; state.len()];
    let kind = |t: &Type| t.value.as_ref().map(std::mem::discriminant);
    let body_declares = |k: usize| model.graphs[body].inputs.get(2 + k).and_then(|v| v.ty.as_ref()).and_then(kind);
    let mut round = 0;
    let body_outputs = loop {
        let mut inputs = vec![scalar(DataType::Int64), scalar(DataType::Bool)];
        inputs.extend(state.iter().cloned());
        let outputs = infer_subgraph(model, body, env, &inputs);
        let next: Vec<Option<Type>> = state
            .iter()
            .zip(outputs.iter().skip(1).chain(std::iter::repeat(&None)))
            .zip(no_union.iter_mut())
            .enumerate()
            .map(|(k, ((before, after), no_union))| match (before, after) {
                _ if *no_union => None,
                (Some(b), Some(a)) => {
                    let joined = union(b, a);
                    *no_union = joined.is_none();
                    joined
                }
                (None, Some(a)) if body_declares(k).is_some_and(|declared| kind(a) != Some(declared)) => {
                    *no_union = true;
                    None
                }
                (None, after) => after.clone(),
                (before, None) => before.clone(),
            })
            .collect();
        round += 1;
        if next == state {
            // Carried values without a union come out as the body gives them.
            let carried_out = outputs.iter().skip(1);
            state = state.into_iter().zip(carried_out).map(|(s, o)| s.or_else(|| o.clone())).collect();
            break outputs;
        }
        if round == LOOP_ROUNDS {
            state = next.iter().map(|t| t.as_ref().map(without_shapes)).collect();
            break outputs;
        }
        state = next;
    };
    let mut types = state;
    for scan in body_outputs.iter().skip(1 + carried) {
        types.push(scan.as_ref().and_then(|t| {
            let (elem, dims) = tensor_parts(t)?;
            let dims = dims.map(|d| std::iter::once(Dimension::default()).chain(d.iter().cloned()).collect());
            Some(tensor(elem?, dims))
        }));
    }
    Some(Outputs { types: types.into(), values: Vec::new() })
}

/// The type with every tensor shape in it forgotten (element types kept).
pub(crate) fn without_shapes(t: &Type) -> Type {
    let value = match &t.value {
        Some(TypeValue::Tensor(x)) => {
            Some(TypeValue::Tensor(crate::ir::TensorType { elem_type: x.elem_type, shape: None }))
        }
        Some(TypeValue::Sequence(Some(e))) => Some(TypeValue::Sequence(Some(Box::new(without_shapes(e))))),
        Some(TypeValue::Optional(Some(e))) => Some(TypeValue::Optional(Some(Box::new(without_shapes(e))))),
        other => other.clone(),
    };
    Type { value, denotation: t.denotation.clone() }
}

/// Scan (opset 9 on): states pass through the body unchanged in type; each scan input is
/// cut along its scan axis into slices the body sees without that axis; each scan output
/// stacks the body's per-iteration values along its output axis, as many as the sequence.
fn scan<'m>(model: &'m Model, node: &Node, inputs: Places<'_>, env: &mut Env<'m>) -> Option<Outputs> {
    let body = graph_attr(node, "body")?;
    let ints = |name: &str| match node.attribute(name).and_then(|a| a.value()) {
        Some(AttributeValue::Ints(v)) => Some(v.to_vec()),
        _ => None,
    };
    let scan_inputs = match node.attribute("num_scan_inputs")?.value()? {
        AttributeValue::Int(m) => usize::try_from(m).ok()?,
        _ => return None,
    };
    let states = inputs.len().checked_sub(scan_inputs)?;
    let input_axes = ints("scan_input_axes").unwrap_or_default();
    let output_axes = ints("scan_output_axes").unwrap_or_default();
    let mut body_inputs: Vec<Option<Type>> = inputs.first_n(states).iter().map(|v| env.ty(v).cloned()).collect();
    let mut sequence = Dimension::default();
    for (k, value) in inputs.from(states)?.iter().enumerate() {
        let slice = env.ty(value).and_then(|t| {
            let (elem, dims) = tensor_parts(t)?;
            let dims = match dims {
                Some(d) => {
                    let axis = normalize(input_axes.get(k).copied().unwrap_or(0), d.len())?;
                    if k == 0 {
                        sequence = d[axis].clone();
                    }
                    Some(d.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, x)| x.clone()).collect())
                }
                None => None,
            };
            Some(tensor(elem?, dims))
        });
        body_inputs.push(slice);
    }
    let body_outputs = infer_subgraph(model, body, env, &body_inputs);
    let mut types: Vec<Option<Type>> = body_outputs.iter().take(states).cloned().collect();
    for (k, out) in body_outputs.iter().skip(states).enumerate() {
        types.push(out.as_ref().and_then(|t| {
            let (elem, dims) = tensor_parts(t)?;
            let dims = match dims {
                Some(d) => {
                    let axis = normalize(output_axes.get(k).copied().unwrap_or(0), d.len() + 1)?;
                    let mut stacked = d.to_vec();
                    stacked.insert(axis, sequence.clone());
                    Some(stacked)
                }
                None => None,
            };
            Some(tensor(elem?, dims))
        }));
    }
    Some(Outputs { types: types.into(), values: Vec::new() })
}

/// Scan-8: every input carries a leading batch axis (scan inputs then the sequence axis),
/// after an optional `sequence_lens`; the body sees one batch entry (one step), and the
/// outputs get the batch axis back (scan outputs also the sequence axis).
fn scan_batched<'m>(model: &'m Model, node: &Node, inputs: Places<'_>, env: &mut Env<'m>) -> Option<Outputs> {
    let body = graph_attr(node, "body")?;
    let scan_inputs = match node.attribute("num_scan_inputs")?.value()? {
        AttributeValue::Int(m) => usize::try_from(m).ok()?,
        _ => return None,
    };
    let inputs = inputs.from(1)?;
    let states = inputs.len().checked_sub(scan_inputs)?;
    let mut batch = Dimension::default();
    let mut sequence = Dimension::default();
    let drop_leading = |t: &Type, count: usize, batch: &mut Dimension, sequence: &mut Dimension| {
        let (elem, dims) = tensor_parts(t)?;
        let dims = match dims {
            Some(d) if d.len() >= count => {
                if batch.value.is_none() {
                    *batch = d[0].clone();
                }
                if count == 2 && sequence.value.is_none() {
                    *sequence = d[1].clone();
                }
                Some(d[count..].to_vec())
            }
            // As onnx (`RemoveDimensionsFromShape`): an input with fewer axes than the
            // body drops leaves the body a scalar, which its declaration then contradicts.
            Some(_) => Some(Vec::new()),
            None => None,
        };
        Some(tensor(elem?, dims))
    };
    let body_inputs: Vec<Option<Type>> = inputs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            env.ty(v).and_then(|t| drop_leading(t, if i < states { 1 } else { 2 }, &mut batch, &mut sequence))
        })
        .collect();
    let body_outputs = infer_subgraph(model, body, env, &body_inputs);
    let types = body_outputs
        .iter()
        .enumerate()
        .map(|(i, out)| {
            let (elem, dims) = tensor_parts(out.as_ref()?)?;
            let lead = if i < states { vec![batch.clone()] } else { vec![batch.clone(), sequence.clone()] };
            Some(tensor(elem?, dims.map(|d| lead.into_iter().chain(d.iter().cloned()).collect())))
        })
        .collect();
    Some(Outputs { types, values: Vec::new() })
}

/// An axis in `[-rank, rank)` as an index.
fn normalize(axis: i64, rank: usize) -> Option<usize> {
    let rank = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + rank } else { axis };
    (0..rank).contains(&a).then_some(a as usize)
}
