//! Two nodes made one where the first's output is read by the second alone (not by another
//! node, a subgraph or the graph's outputs), with constant float32 weights:
//!
//! - a Conv and the BatchNormalization after it (inference mode): the weights of output
//!   channel `m` scaled by `s[m] = scale[m] / sqrt(var[m] + epsilon)`, the bias
//!   `(bias - mean)·s + B` (in float32, as onnxruntime computes them when it fuses the pair);
//! - a Conv and an Add of one value per output channel (or one for all): the Conv's bias;
//! - a Conv and a Mul by one value per output channel (or one for all): its weights and bias
//!   scaled (in float32, as onnxruntime fuses the pair);
//! - a MatMul of a matrix by a constant matrix and an Add of a bias row: a Gemm;
//! - a Reshape (or Flatten, Squeeze, Unsqueeze) and a Reshape to a constant shape that copies
//!   no size (`0`) from the first's result: the second alone; and two such reshaping nodes
//!   whose result has a fixed shape: one Reshape to it;
//! - a Concat of a Concat along the same axis: one Concat.
//!
//! The second node's output name is kept, so what reads it is unchanged.
//!
//! Also here: a recurrent layer's all-zero initial state dropped (`drop_zero_states`).

use std::collections::HashMap;

use super::{graph_outputs, subgraph_reads};
use crate::infer::GraphTypes;
use crate::ir::tensor_data::{float_values, int_values};
use crate::ir::{AttributeValue, DataType, GraphId, Model, NodeId, Str, Tensor, TypeValue};

/// The fusions of graph `g`, repeated while one applies; how many pairs were fused.
pub(super) fn fuse(model: &mut Model, g: GraphId, types: &GraphTypes) -> usize {
    let mut fused = 0;
    loop {
        let readers = reader_counts(model, g);
        let producers: HashMap<Str, NodeId> = model.graphs[g]
            .nodes
            .iter()
            .flat_map(|&n| model.nodes[n].outputs.iter().filter(|o| !o.is_empty()).map(move |o| (o.clone(), n)))
            .collect();
        // Every pair found in one scan whose nodes no other pair of the scan has.
        let cx = Cx::new(model, g);
        let mut found = Vec::new();
        let mut involved = std::collections::HashSet::new();
        for &c in &model.graphs[g].nodes {
            if involved.contains(&c) {
                continue;
            }
            // Each input made by a node only this one reads, until one pairs (a Concat's
            // first input may be a Concat along another axis and its second one along its own).
            let only_here =
                model.nodes[c].inputs.iter().filter(|i| producers.contains_key(*i) && readers.get(*i) == Some(&1));
            for x in only_here {
                let p = producers[x];
                if involved.contains(&p) {
                    continue;
                }
                if let Some(rewrite) = pair(&cx, p, c, types) {
                    involved.extend([p, c]);
                    found.push((p, c, rewrite));
                    break;
                }
            }
        }
        if found.is_empty() {
            return fused;
        }
        for (p, c, rewrite) in found {
            apply(model, g, p, c, rewrite);
            fused += 1;
        }
    }
}

/// How many times each name is read: by the graph's nodes (once per input), its subgraphs
/// and its outputs (which count as readers that cannot be fused away).
fn reader_counts(model: &Model, g: GraphId) -> HashMap<Str, usize> {
    let mut counts: HashMap<Str, usize> = HashMap::new();
    for &n in &model.graphs[g].nodes {
        for i in model.nodes[n].inputs.iter().filter(|i| !i.is_empty()) {
            *counts.entry(i.clone()).or_insert(0) += 1;
        }
    }
    for name in subgraph_reads(model, g).into_iter().chain(graph_outputs(model, g)) {
        *counts.entry(name).or_insert(0) += 2;
    }
    counts
}

/// What a fusion makes of the first node: its new inputs (new constants named there), its
/// operator when it changes.
struct Rewrite {
    inputs: Vec<Input>,
    op: Option<&'static str>,
}

enum Input {
    Keep(Str),
    New(Box<Tensor>),
}

/// The fusion of producer `p` into consumer `c`, if one applies.
fn pair(cx: &Cx, p: NodeId, c: NodeId, types: &GraphTypes) -> Option<Rewrite> {
    let model = cx.model;
    let (producer, consumer) = (&model.nodes[p], &model.nodes[c]);
    if producer.schema_domain() != Some("") || consumer.schema_domain() != Some("") || producer.outputs.len() != 1 {
        return None;
    }
    let op = |n: &crate::ir::Node| n.op_type.as_ref().and_then(Str::as_str).unwrap_or("").to_owned();
    match (op(producer).as_str(), op(consumer).as_str()) {
        ("Conv", "BatchNormalization") => conv_batch_norm(cx, p, c),
        ("Conv", "Add") => conv_bias(cx, p, c),
        ("Conv", "Mul") => conv_scale(cx, p, c),
        ("MatMul", "Add") => matmul_bias(cx, p, c, types),
        ("Reshape" | "Flatten" | "Squeeze" | "Unsqueeze", "Reshape") => reshapes(cx, p, c),
        ("Concat", "Concat") => concats(cx, p, c),
        ("Mul", "Mul") => scalar_products(cx, p, c),
        ("Reshape" | "Flatten" | "Squeeze" | "Unsqueeze", "Flatten" | "Squeeze" | "Unsqueeze") => {
            to_fixed_shape(cx, p, c, types)
        }
        _ => None,
    }
}

/// A graph and its constants by name (initializers no graph input can replace), looked up
/// once per scan rather than searched for each pair.
struct Cx<'m> {
    model: &'m Model,
    constants: HashMap<&'m Str, &'m Tensor>,
}

impl<'m> Cx<'m> {
    fn new(model: &'m Model, g: GraphId) -> Cx<'m> {
        let graph = &model.graphs[g];
        let replaceable: std::collections::HashSet<&Str> = if model.ir_version.is_none_or(|v| v >= 4) {
            graph.inputs.iter().filter_map(|v| v.name.as_ref()).collect()
        } else {
            Default::default()
        };
        let constants = graph
            .initializers
            .iter()
            .map(|&t| &model.tensors[t])
            .filter_map(|t| Some((t.name.as_ref()?, t)))
            .filter(|(name, _)| !replaceable.contains(name))
            .collect();
        Cx { model, constants }
    }
}

/// The constant initializer `name` of the graph.
fn constant<'m>(cx: &Cx<'m>, name: &Str) -> Option<&'m Tensor> {
    cx.constants.get(name).copied()
}

fn floats(cx: &Cx, name: &Str) -> Option<(Vec<i64>, Vec<f32>)> {
    let t = constant(cx, name)?;
    let values = float_values(t)?;
    (t.element_count()? as usize == values.len()).then(|| (t.dims.clone(), values))
}

/// A float32 tensor with its values as raw bytes (what exporters write, and what is copied
/// out whole when the model is written).
fn float_tensor(dims: Vec<i64>, values: Vec<f32>) -> Tensor {
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor { dims, data_type: Some(DataType::Float.code()), raw_data: Some(raw.into()), ..Tensor::default() }
}

/// A Conv's weight `[M, C/group, k…]` and bias (zeros when it has none), both constant.
fn conv_weights(cx: &Cx, p: NodeId) -> Option<(Vec<i64>, Vec<f32>, Vec<f32>)> {
    let model = cx.model;
    let conv = &model.nodes[p];
    if conv.inputs.len() < 2 || conv.inputs.len() > 3 {
        return None;
    }
    let (dims, w) = floats(cx, &conv.inputs[1])?;
    let m = usize::try_from(*dims.first()?).ok()?;
    if dims.len() < 3 || m == 0 {
        return None;
    }
    let bias = match conv.inputs.get(2).filter(|b| !b.is_empty()) {
        Some(b) => floats(cx, b).map(|(_, v)| v).filter(|v| v.len() == m)?,
        None => vec![0.0; m],
    };
    Some((dims, w, bias))
}

fn conv_batch_norm(cx: &Cx, p: NodeId, c: NodeId) -> Option<Rewrite> {
    let model = cx.model;
    let bn = &model.nodes[c];
    let training =
        matches!(bn.attribute("training_mode").and_then(|a| a.value()), Some(AttributeValue::Int(t)) if t != 0);
    if training
        || bn.inputs.len() != 5
        || bn.outputs.iter().skip(1).any(|o| !o.is_empty())
        || bn.inputs[0] != model.nodes[p].outputs[0]
    {
        return None;
    }
    let epsilon = match bn.attribute("epsilon").and_then(|a| a.value()) {
        Some(AttributeValue::Float(e)) => e,
        _ => 1e-5,
    };
    let (dims, mut w, bias) = conv_weights(cx, p)?;
    let m = bias.len();
    let param = |i: usize| floats(cx, &bn.inputs[i]).map(|(_, v)| v).filter(|v| v.len() == m);
    let (scale, shift, mean, var) = (param(1)?, param(2)?, param(3)?, param(4)?);
    let per_channel = w.len() / m;
    let mut new_bias = Vec::with_capacity(m);
    // In float32, operation by operation as onnxruntime fuses the pair when it loads a
    // model: the fused model then computes what onnxruntime computes for the original.
    for k in 0..m {
        let s = scale[k] / (var[k] + epsilon).sqrt();
        for v in &mut w[k * per_channel..(k + 1) * per_channel] {
            *v *= s;
        }
        new_bias.push((bias[k] - mean[k]) * s + shift[k]);
    }
    let conv = &model.nodes[p];
    Some(Rewrite {
        inputs: vec![
            Input::Keep(conv.inputs[0].clone()),
            Input::New(Box::new(float_tensor(dims, w))),
            Input::New(Box::new(float_tensor(vec![m as i64], new_bias))),
        ],
        op: None,
    })
}

/// The constant the Add or Mul `c` combines with producer `p`'s output, as one value per
/// output channel of `m`: `[M, 1, …]` (rank − 1 dims), `[1, M, 1, …]` (the output's rank), or
/// one value for all (any rank up to the output's, every size 1).
fn per_channel(cx: &Cx, p: NodeId, c: NodeId, m: usize, rank: usize) -> Option<Vec<f32>> {
    let model = cx.model;
    let y = &model.nodes[p].outputs[0];
    let other = match model.nodes[c].inputs.as_slice() {
        [a, b] if a == y => b,
        [a, b] if b == y => a,
        _ => return None,
    };
    let (dims, values) = floats(cx, other)?;
    let ones = |d: &[i64]| d.iter().all(|&x| x == 1);
    if values.len() == 1 && dims.len() <= rank && ones(&dims) {
        return Some(vec![values[0]; m]);
    }
    let channels = (dims.len() == rank - 1 && dims[0] == m as i64 && ones(&dims[1..]))
        || (dims.len() == rank && dims[0] == 1 && dims[1] == m as i64 && ones(&dims[2..]));
    (channels && values.len() == m).then_some(values)
}

/// `Conv(x, W, b) + a` as `Conv(x, W, b + a)`.
fn conv_bias(cx: &Cx, p: NodeId, c: NodeId) -> Option<Rewrite> {
    let model = cx.model;
    let (weight_dims, _, bias) = conv_weights(cx, p)?;
    let added = per_channel(cx, p, c, bias.len(), weight_dims.len())?;
    let summed: Vec<f32> = bias.iter().zip(&added).map(|(a, b)| a + b).collect();
    let conv = &model.nodes[p];
    Some(Rewrite {
        inputs: vec![
            Input::Keep(conv.inputs[0].clone()),
            Input::Keep(conv.inputs[1].clone()),
            Input::New(Box::new(float_tensor(vec![summed.len() as i64], summed))),
        ],
        op: None,
    })
}

/// `Conv(x, W, b) · s` as `Conv(x, W·s, b·s)` (in float32, as onnxruntime fuses the pair).
fn conv_scale(cx: &Cx, p: NodeId, c: NodeId) -> Option<Rewrite> {
    let model = cx.model;
    let (dims, mut w, mut bias) = conv_weights(cx, p)?;
    let m = bias.len();
    let scale = per_channel(cx, p, c, m, dims.len())?;
    let per_output = w.len() / m;
    for k in 0..m {
        for v in &mut w[k * per_output..(k + 1) * per_output] {
            *v *= scale[k];
        }
        bias[k] *= scale[k];
    }
    let conv = &model.nodes[p];
    let has_bias = conv.inputs.get(2).is_some_and(|b| !b.is_empty());
    let mut inputs = vec![Input::Keep(conv.inputs[0].clone()), Input::New(Box::new(float_tensor(dims, w)))];
    if has_bias {
        inputs.push(Input::New(Box::new(float_tensor(vec![m as i64], bias))));
    }
    Some(Rewrite { inputs, op: None })
}

/// `MatMul(A, B) + C` as `Gemm(A, B, C)`: A a float32 matrix (rank 2 by inference), B a
/// constant `[K, N]`, C a constant `[N]` or `[1, N]`.
fn matmul_bias(cx: &Cx, p: NodeId, c: NodeId, types: &GraphTypes) -> Option<Rewrite> {
    let model = cx.model;
    let matmul = &model.nodes[p];
    let add = &model.nodes[c];
    let y = &matmul.outputs[0];
    let bias = match add.inputs.as_slice() {
        [a, b] if a == y => b,
        [a, b] if b == y => a,
        _ => return None,
    };
    // Gemm broadcasts C from version 7 on.
    if model.opset_version("").is_none_or(|v| v < 7) {
        return None;
    }
    let a = matmul.inputs.first()?;
    let Some(TypeValue::Tensor(t)) = &types.types.get(a)?.value else { return None };
    if t.elem_type != Some(DataType::Float.code()) || t.shape.as_ref()?.dims.len() != 2 {
        return None;
    }
    let (b_dims, _) = floats(cx, matmul.inputs.get(1)?)?;
    let (c_dims, _) = floats(cx, bias)?;
    let n = *b_dims.get(1)?;
    let row = c_dims == [n] || c_dims == [1, n];
    if b_dims.len() != 2 || !row {
        return None;
    }
    Some(Rewrite {
        inputs: vec![Input::Keep(a.clone()), Input::Keep(matmul.inputs[1].clone()), Input::Keep(bias.clone())],
        op: Some("Gemm"),
    })
}

/// `Reshape(Reshape(x, s1), s2)` as `Reshape(x, s2)` when `s2` is a constant that copies no
/// size from its input (no `0`, or `allowzero`); the same for a Flatten, Squeeze or
/// Unsqueeze before it (none of which changes the elements' order).
fn reshapes(cx: &Cx, p: NodeId, c: NodeId) -> Option<Rewrite> {
    let model = cx.model;
    let second = &model.nodes[c];
    if second.inputs.len() != 2 || second.inputs[0] != model.nodes[p].outputs[0] {
        return None;
    }
    let shape = int_values(constant(cx, &second.inputs[1])?)?;
    let allow_zero = matches!(second.attribute("allowzero").and_then(|a| a.value()), Some(AttributeValue::Int(1)));
    if !allow_zero && shape.contains(&0) {
        return None;
    }
    let first = &model.nodes[p];
    Some(Rewrite {
        inputs: vec![Input::Keep(first.inputs.first()?.clone()), Input::Keep(second.inputs[1].clone())],
        op: Some("Reshape"),
    })
}

/// `Concat(…, Concat(a, b), …)` along one axis as `Concat(…, a, b, …)`. Negative axes are
/// compared as written (the same rank on both sides makes equal spellings equal axes).
fn concats(cx: &Cx, p: NodeId, c: NodeId) -> Option<Rewrite> {
    let (inner, outer) = (&cx.model.nodes[p], &cx.model.nodes[c]);
    let axis = |n: &crate::ir::Node| match n.attribute("axis").and_then(|a| a.value()) {
        Some(AttributeValue::Int(a)) => Some(a),
        _ => None,
    };
    if axis(inner)? != axis(outer)? {
        return None;
    }
    let mut inputs = Vec::with_capacity(inner.inputs.len() + outer.inputs.len());
    for name in &outer.inputs {
        if *name == inner.outputs[0] {
            inputs.extend(inner.inputs.iter().cloned().map(Input::Keep));
        } else {
            inputs.push(Input::Keep(name.clone()));
        }
    }
    Some(Rewrite { inputs, op: Some("Concat") })
}

/// `(x · a) · b` with `a` and `b` constant single float32 values, as `x · (a·b)` (tf2onnx's
/// scalings of a logarithm, one after another). The product's dims broadcast as the two
/// did, so the result's shape is the same.
fn scalar_products(cx: &Cx, p: NodeId, c: NodeId) -> Option<Rewrite> {
    let (inner, outer) = (&cx.model.nodes[p], &cx.model.nodes[c]);
    let single = |name: &Str| floats(cx, name).filter(|(_, v)| v.len() == 1);
    let (x, (a_dims, a)) = match (inner.inputs.first()?, inner.inputs.get(1)?) {
        (x, a) if single(a).is_some() => (x.clone(), single(a)?),
        (a, x) if single(a).is_some() => (x.clone(), single(a)?),
        _ => return None,
    };
    let made = &inner.outputs[0];
    let b = match (outer.inputs.first()?, outer.inputs.get(1)?) {
        (m, b) if m == made && b != made => single(b)?,
        (b, m) if m == made && b != made => single(b)?,
        _ => return None,
    };
    let (b_dims, b) = b;
    // Broadcast dims of two single-element tensors: the longer list of ones.
    let dims = if a_dims.len() >= b_dims.len() { a_dims } else { b_dims };
    let product = float_tensor(dims, vec![a[0] * b[0]]);
    Some(Rewrite { inputs: vec![Input::Keep(x), Input::New(Box::new(product))], op: Some("Mul") })
}

/// Two reshaping nodes (Reshape, Flatten, Squeeze, Unsqueeze: none changes the elements'
/// order) whose result's shape inference knows but for at most one size, as one Reshape to
/// that shape (`-1` for the unknown size; an exporter's `Reshape → Squeeze → Unsqueeze`).
/// Not when a size is 0, which a Reshape reads as "copy".
fn to_fixed_shape(cx: &Cx, p: NodeId, c: NodeId, types: &GraphTypes) -> Option<Rewrite> {
    let model = cx.model;
    let (first, second) = (&model.nodes[p], &model.nodes[c]);
    if second.inputs.first() != Some(&first.outputs[0]) || second.outputs.len() != 1 {
        return None;
    }
    let Some(TypeValue::Tensor(t)) = &types.types.get(&second.outputs[0])?.value else { return None };
    // Every size fixed and positive but at most one, which Reshape computes as `-1` from the
    // element count (a symbolic batch).
    let dims = &t.shape.as_ref()?.dims;
    let shape: Vec<i64> = dims
        .iter()
        .map(|d| match d.value {
            Some(crate::ir::DimValue::Value(v)) => v,
            _ => -1,
        })
        .collect();
    if shape.iter().filter(|&&v| v == -1).count() > 1 || shape.iter().any(|&v| v == 0 || v < -1) {
        return None;
    }
    let target = super::integer_tensor(DataType::Int64.code(), vec![shape.len() as i64], &shape)?;
    Some(Rewrite {
        inputs: vec![Input::Keep(first.inputs.first()?.clone()), Input::New(Box::new(target))],
        op: Some("Reshape"),
    })
}

/// Makes producer `p` the fused node: its new inputs (new constants added as initializers
/// with names no value has), its new operator (a Gemm, or the second Reshape, whose
/// attributes it takes), the consumer's output; removes the consumer.
fn apply(model: &mut Model, g: GraphId, p: NodeId, c: NodeId, rewrite: Rewrite) {
    let base = model.nodes[c].outputs[0].escaped();
    let mut inputs = Vec::with_capacity(rewrite.inputs.len());
    for (i, input) in rewrite.inputs.into_iter().enumerate() {
        match input {
            Input::Keep(name) => inputs.push(name),
            Input::New(tensor) => {
                let name = fresh_name(model, g, &format!("{base}/fused_{i}"));
                super::add_initializer(model, g, name.clone(), *tensor);
                inputs.push(name);
            }
        }
    }
    let output = model.nodes[c].outputs[0].clone();
    if let Some(op) = rewrite.op {
        let consumer_attributes = model.nodes[c].attributes.clone();
        // The fused node keeps the consumer's attributes when it is of the consumer's
        // operator (a Reshape's allowzero, a Concat's axis); otherwise it has none.
        let same_op = model.nodes[c].op_type.as_ref().is_some_and(|o| o.as_bytes() == op.as_bytes());
        let node = &mut model.nodes[p];
        node.attributes = if same_op { consumer_attributes } else { Vec::new() };
        node.op_type = Some(Str::from(op));
    }
    let node = &mut model.nodes[p];
    node.inputs = inputs.into_iter().collect();
    node.outputs[0] = output;
    model.graphs[g].nodes.retain(|&n| n != c);
}

/// `base`, or `base_2`, `base_3`, … : a name no initializer, input or node output of graph
/// `g` has.
pub(super) fn fresh_name(model: &Model, g: GraphId, base: &str) -> Str {
    let graph = &model.graphs[g];
    let taken = |name: &str| {
        graph.initializers.iter().any(|&t| model.tensors[t].name.as_ref().is_some_and(|n| n == name))
            || graph.inputs.iter().any(|v| v.name.as_ref().is_some_and(|n| n == name))
            || graph.nodes.iter().any(|&n| model.nodes[n].outputs.iter().any(|o| o == name))
    };
    let mut candidate = base.to_owned();
    let mut k = 2;
    while taken(&candidate) {
        candidate = format!("{base}_{k}");
        k += 1;
    }
    Str::from(candidate.as_str())
}

/// A recurrent layer's initial state that is all zeros (a ConstantOfShape of 0, sliced,
/// reshaped or concatenated; an initializer of zeros) is what the layer starts from when it
/// is given none: the input is dropped, and what made it is left to the dead-node pass.
/// Returns how many inputs were dropped.
pub(super) fn drop_zero_states(model: &mut Model, g: GraphId) -> usize {
    let zeros = zero_values(model, g);
    let mut dropped = 0;
    for i in 0..model.graphs[g].nodes.len() {
        let n = model.graphs[g].nodes[i];
        let node = &model.nodes[n];
        let op = node.op_type.as_ref().map(Str::as_bytes);
        // The initial states: RNN and GRU's initial_h (5); LSTM's initial_h and initial_c
        // (5, 6).
        let states: &[usize] = match (node.schema_domain(), op) {
            (Some(""), Some(b"RNN" | b"GRU")) => &[5],
            (Some(""), Some(b"LSTM")) => &[5, 6],
            _ => continue,
        };
        let zero: Vec<usize> =
            states.iter().copied().filter(|&k| node.inputs.get(k).is_some_and(|v| zeros.contains(v))).collect();
        let node = &mut model.nodes[n];
        for k in zero {
            node.inputs[k] = Str::default();
            dropped += 1;
        }
        while node.inputs.last().is_some_and(|v| v.is_empty()) {
            node.inputs.pop();
        }
    }
    dropped
}

/// The values of graph `g` known to be all zeros.
fn zero_values(model: &Model, g: GraphId) -> std::collections::HashSet<Str> {
    let graph = &model.graphs[g];
    let constants = Cx::new(model, g);
    let mut zeros: std::collections::HashSet<Str> = std::collections::HashSet::new();
    for &t in &graph.initializers {
        let tensor = &model.tensors[t];
        let Some(name) = tensor.name.as_ref() else { continue };
        let all_zero = tensor.element_count().is_some_and(|c| c <= 1 << 16)
            && (float_values(tensor).is_some_and(|v| v.iter().all(|&x| x == 0.0))
                || int_values(tensor).is_some_and(|v| v.iter().all(|&x| x == 0)));
        if all_zero && constants.constants.contains_key(name) {
            zeros.insert(name.clone());
        }
    }
    for &n in &graph.nodes {
        let node = &model.nodes[n];
        if node.schema_domain() != Some("") || node.outputs.len() != 1 {
            continue;
        }
        let data_is_zero = node.inputs.first().is_some_and(|i| zeros.contains(i));
        let zero = match node.op_type.as_ref().map(Str::as_bytes) {
            Some(b"ConstantOfShape") => match node.attribute("value").and_then(|a| a.value()) {
                None => true,
                Some(AttributeValue::Tensor(t)) => {
                    let t = &model.tensors[t];
                    float_values(t).is_some_and(|v| v.iter().all(|&x| x == 0.0))
                        || int_values(t).is_some_and(|v| v.iter().all(|&x| x == 0))
                }
                _ => false,
            },
            // What only moves, repeats or picks elements of zeros is zeros.
            Some(
                b"Slice" | b"Reshape" | b"Squeeze" | b"Unsqueeze" | b"Transpose" | b"Expand" | b"Identity" | b"Tile"
                | b"Flatten" | b"Gather" | b"Cast",
            ) => data_is_zero,
            Some(b"Concat") => node.inputs.iter().all(|i| zeros.contains(i)),
            _ => false,
        };
        if zero {
            zeros.insert(node.outputs[0].clone());
        }
    }
    zeros
}
