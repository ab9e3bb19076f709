//! The neural-network operators (the family of [`crate::infer::ops`]'s `nn` module): what
//! onnx's inference functions fail them for (`onnx/defs/nn/{defs,old}.cc`,
//! `math/defs.cc`, `reduction/defs.cc`, `quantization/defs.cc`) and what onnxruntime
//! refuses at load: the attribute lists of convolutions and pools one per spatial axis,
//! kernel, stride and dilation sizes, operands that multiply, reduction axes, Pad's pads,
//! BatchNormalization's per-channel inputs and the losses' ranks.

use super::{Judge, Violations, int, ints, overflow, shown, type_name, unify};
use crate::diagnostic::Anchor;
use crate::infer::types::normalize_axis;
use crate::infer::types::{known_dim, tensor_parts};
use crate::ir::{AttributeValue, Dimension, Node};

/// The neural-network operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations = &[
    ("MatMul", 1, matmul),
    ("MatMulInteger", 1, matmul),
    ("QLinearMatMul", 1, qlinear_matmul),
    ("Gemm", 1, gemm),
    ("ArgMax", 1, arg_max_min),
    ("ArgMin", 1, arg_max_min),
    ("BatchNormalization", 14, batch_normalization),
    ("LayerNormalization", 1, layer_normalization),
    ("RMSNormalization", 1, rms_normalization),
    ("ReduceMax", 1, reduce),
    ("ReduceMin", 1, reduce),
    ("ReduceMean", 1, reduce),
    ("ReduceSum", 1, reduce),
    ("ReduceProd", 1, reduce),
    ("ReduceL1", 1, reduce),
    ("ReduceL2", 1, reduce),
    ("ReduceLogSum", 1, reduce),
    ("ReduceLogSumExp", 1, reduce),
    ("ReduceSumSquare", 1, reduce),
    ("QuantizeLinear", 21, quantize_linear),
    ("DequantizeLinear", 1, dequantize_linear),
    ("TopK", 1, top_k),
    ("SoftmaxCrossEntropyLoss", 1, softmax_cross_entropy_loss),
    ("NegativeLogLikelihoodLoss", 1, negative_log_likelihood_loss),
    ("MaxPool", 1, pool),
    ("AveragePool", 1, pool),
    ("LpPool", 1, pool),
    ("Conv", 1, conv),
    ("ConvInteger", 1, conv),
    ("QLinearConv", 1, qlinear_conv),
    ("DeformConv", 1, deform_conv),
    ("ConvTranspose", 1, conv_transpose),
    ("Pad", 1, pad),
];

/// MatMul and MatMulInteger ([`matrix_product`]).
fn matmul(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let dims = |i: usize| judge.dims(i);
    matrix_product(0, 1, &dims, v);
}

/// QLinearMatMul: the quantized A at input 0, B at input 3 ([`matrix_product`]).
fn qlinear_matmul(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let dims = |i: usize| judge.dims(i);
    matrix_product(0, 3, &dims, v);
}

fn gemm(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, since: since_version, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    for i in 0..2 {
        if let Some(d) = dims(i)
            && d.len() != 2
        {
            let message = format!("input {i} of Gemm must have rank 2, it has rank {}", d.len());
            v.error("input-rank", Anchor::NodeInput(n, i), message);
        }
    }
    // From version 13 the inner dimensions must agree (version 11 infers without it).
    if since_version >= 13 && [0, 1].iter().all(|&i| dims(i).is_some_and(|d| d.len() == 2)) {
        let a = if int(node, "transA").unwrap_or(0) != 0 { 0 } else { 1 };
        let b = if int(node, "transB").unwrap_or(0) != 0 { 1 } else { 0 };
        unify::agree(v, "the inner dimension K", &dims, &[(0, a), (1, b)]);
    }
}

/// Only an axis written out is judged.
fn arg_max_min(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    if let (Some(d), Some(_)) = (dims(0), int(node, "axis")) {
        v.axis(node, "axis", 0, d.len(), false);
    }
}

/// BatchNormalization from version 14: scale, bias, mean and variance of rank 1 with one
/// value per channel, and three outputs in training mode, one otherwise.
fn batch_normalization(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = &|i: usize| judge.dims(i);
    let training = int(node, "training_mode").is_some_and(|t| t != 0);
    let (wanted, mode) = if training { (3, "in training mode") } else { (1, "outside training mode") };
    if node.outputs.len() != wanted {
        let plural = if wanted == 1 { "" } else { "s" };
        let message =
            format!("BatchNormalization {mode} needs {wanted} output{plural}; this node has {}", node.outputs.len());
        v.error("output-count", Anchor::Node(v.n), message);
    }
    // The channel count, as input 0 gives it (1 for an input of rank 1 or less), shared by
    // scale, bias, mean and variance.
    let mut channels = unify::SharedSize::new("the channel count C");
    match dims(0) {
        Some(x) if x.len() <= 1 => {
            channels.value(v, 1, "the channel count of a 1-D input".to_owned(), Anchor::NodeInput(v.n, 0));
        }
        x => {
            channels.input(v, 0, x, 1);
        }
    }
    for i in 1..5.min(node.inputs.len()) {
        let Some(d) = dims(i) else { continue };
        if d.len() != 1 {
            let message = format!("input {i} of BatchNormalization must have rank 1, it has rank {}", d.len());
            v.error("input-rank", Anchor::NodeInput(v.n, i), message);
            continue;
        }
        channels.input(v, i, Some(d), 0);
    }
}

fn layer_normalization(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0) {
        v.axis(node, "axis", -1, d.len(), false);
    }
}

/// onnx judges only an axis below -rank (an axis past the rank normalizes nothing).
fn rms_normalization(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    if let (Some(d), Some(axis)) = (dims(0), int(node, "axis"))
        && axis < -(d.len() as i64)
    {
        v.axis(node, "axis", -1, d.len(), false);
    }
}

/// The `axes` attribute (an input from version 13 for ReduceSum, 18 for the rest).
fn reduce(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, since: since_version, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    if node.has_input(1) && node.attribute("axes").is_some() {
        let at = v.attribute_anchor(node, "axes");
        v.error("invalid-attribute-value", at, format!("{op} has axes both as an input and as an attribute"));
    }
    let ranged = crate::infer::ops::nn::reduction_checks_axis_range(op, since_version);
    if let (true, Some(d), Some(axes)) = (ranged, dims(0), ints(node, "axes")) {
        v.axes(node, "axes", axes, d.len());
    }
}

/// QuantizeLinear from version 21: an output_dtype written must be the zero point's type.
fn quantize_linear(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, lookup, .. } = *judge;
    v.element_type(node, "output_dtype", true);
    let zero_point = lookup(2).and_then(tensor_parts).and_then(|(e, _)| e);
    if let (Some(dtype), Some(zero_point)) = (int(node, "output_dtype").filter(|&d| d != 0), zero_point)
        && dtype != i64::from(zero_point)
    {
        let at = v.attribute_anchor(node, "output_dtype");
        let message = format!(
            "output_dtype is {}, the zero point {}: QuantizeLinear's output has the zero point's type",
            type_name(dtype),
            type_name(i64::from(zero_point))
        );
        v.error("invalid-attribute-value", at, message);
    }
}

fn dequantize_linear(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    v.element_type(judge.node, "output_dtype", true);
}

/// TopK: the axis (default -1) within the input's rank; a constant K is one int64 no larger
/// than the axis's known size (version 1: the `k` attribute, positive).
fn top_k(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, .. } = *judge;
    let constant_input = judge.constant;
    let dims = &|i: usize| judge.dims(i);
    let Some(x) = dims(0) else { return };
    let rank = x.len();
    v.axis(node, "axis", -1, rank, false);
    let Some(axis) = normalize_axis(int(node, "axis").unwrap_or(-1), rank) else { return };
    let (k, at) = if since_version < 10 {
        let at = v.attribute_anchor(node, "k");
        if let Some(k) = int(node, "k").filter(|&k| k <= 0) {
            v.error("invalid-attribute-value", at, format!("k = {k}: TopK needs a positive k"));
            return;
        }
        (int(node, "k"), at)
    } else {
        let k = constant_input(1);
        if k.is_some() && dims(1).is_some_and(|d| d.len() != 1 || known_dim(&d[0]).is_some_and(|n| n != 1)) {
            v.error("input-rank", Anchor::NodeInput(v.n, 1), "K of TopK must be a 1-D tensor of one value");
            return;
        }
        (k.and_then(|k| k.first().copied()), Anchor::NodeInput(v.n, 1))
    };
    if let (Some(k), Some(size)) = (k, known_dim(&x[axis]))
        && k > size
    {
        v.error("invalid-input-value", at, format!("TopK asks for k = {k} of the {size} values along axis {axis}"));
    }
}

/// onnx's own inference does not compare the two ranks; onnxruntime infers through the
/// function body, whose NegativeLogLikelihoodLoss does, and refuses the model.
fn softmax_cross_entropy_loss(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let n = judge.n;
    let dims = |i: usize| judge.dims(i);
    if let (Some(scores), Some(labels)) = (dims(0), dims(1))
        && labels.len() + 1 != scores.len()
    {
        let message = format!(
            "the labels of SoftmaxCrossEntropyLoss have rank {}, the scores {}: the labels have one axis less (onnxruntime refuses the model)",
            labels.len(),
            scores.len()
        );
        v.error("input-rank", Anchor::NodeInput(n, 1), message);
    }
}

/// onnx judges nothing of it until the input and the target have shapes; onnxruntime,
/// which infers through its function body, judges the weight's rank once the target has
/// one ([`target_and_weight`]).
fn negative_log_likelihood_loss(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let since_version = judge.since;
    let dims = |i: usize| judge.dims(i);
    if dims(0).is_none() {
        if dims(1).is_some() {
            v.rank_within(2, dims(2), 1, 1, "the weight");
        }
        return;
    }
    if dims(1).is_none() {
        return;
    }
    v.rank_within(0, dims(0), 2, usize::MAX, "the input");
    let before = v.found.len();
    target_and_weight(&dims, v);
    // From version 22 the weight holds one value per class.
    if since_version >= 22 && v.found.len() == before && dims(0).is_some_and(|d| d.len() >= 2) {
        unify::agree(v, "the class count C", &dims, &[(0, 1), (2, 0)]);
    }
}

/// MaxPool, AveragePool and LpPool.
fn pool(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    auto_pad(node, v);
    conv_pool(node, op, None, &dims, v);
    pool_pads(node, v);
}

/// Conv and ConvInteger.
fn conv(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    auto_pad(node, v);
    pads_beside_auto_pad(node, v);
    conv_pool(node, op, Some(1), &dims, v);
}

fn qlinear_conv(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    auto_pad(node, v);
    pads_beside_auto_pad(node, v);
    conv_pool(node, op, Some(3), &dims, v);
}

/// onnx infers DeformConv as Conv (its offset and mask are not read).
fn deform_conv(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    conv_pool(node, op, Some(1), &dims, v);
}

/// ConvTranspose (onnx's `convTransposeShapeInference`): `group` positive, input and weight
/// of rank 3 or more, attribute lists one value per spatial axis (two for `pads`), kernel
/// sizes, strides and dilations positive, no negative pads, output padding or output shape,
/// and no explicit `pads` beside an `auto_pad` other than NOTSET.
fn conv_transpose(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = &|i: usize| judge.dims(i);
    auto_pad(node, v);
    let (Some(x), Some(w)) = (dims(0), dims(1)) else { return };
    if let Some(group) = int(node, "group")
        && group <= 0
    {
        let at = v.attribute_anchor(node, "group");
        v.error("invalid-attribute-value", at, format!("group = {group}: ConvTranspose needs a positive group"));
        return;
    }
    for (i, shape, what) in [(0, x, "input"), (1, w, "weight")] {
        if shape.len() < 3 {
            let message = format!("the {what} of ConvTranspose must have rank 3 or more, it has rank {}", shape.len());
            v.error("input-rank", Anchor::NodeInput(v.n, i), message);
            return;
        }
    }
    let group = int(node, "group").unwrap_or(1);
    if let Some(channels) = known_dim(&x[1])
        && channels % group != 0
    {
        let message = format!("ConvTranspose's input has {channels} channels, which its {group} groups do not divide");
        v.error("incompatible-shapes", Anchor::NodeInput(v.n, 0), message);
        return;
    }
    if ints(node, "kernel_shape").is_none() && w[2..].iter().all(|d| known_dim(d).is_some()) && w.len() != x.len() {
        let message =
            format!("the weight has {} spatial axes, the input {}: they must be the same", w.len() - 2, x.len() - 2);
        v.error("incompatible-shapes", Anchor::NodeInput(v.n, 1), message);
        return;
    }
    let checks: [(&str, usize, Option<bool>); 6] = [
        ("dilations", 1, Some(true)),
        ("strides", 1, Some(true)),
        ("kernel_shape", 1, Some(true)),
        ("pads", 2, Some(false)),
        ("output_shape", 1, Some(false)),
        ("output_padding", 1, Some(false)),
    ];
    for (name, per_axis, positive) in checks {
        let Some(list) = ints(node, name) else { continue };
        if !v.one_per_axis(node, name, list, x.len(), per_axis) || !v.signs(node, name, list, positive == Some(true)) {
            return;
        }
    }
    let before = v.found.len();
    pads_beside_auto_pad(node, v);
    if v.found.len() == before
        && let Some(kernel) = kernel_of(node, w)
    {
        overflow::conv_transpose(node, x, &kernel, v);
    }
}

/// Pad: its mode, and its pads ([`pad_values`]), a 1-D constant from version 11.
fn pad(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, since: since_version, .. } = *judge;
    let constant_input = judge.constant;
    let constant_rank = |i: usize| judge.constant_rank(i);
    let dims = |i: usize| judge.dims(i);
    v.one_of(node, "mode");
    if since_version >= 11
        && dims(0).is_some()
        && let Some(rank) = constant_rank(1).filter(|&r| r != 1)
    {
        let message = format!("the pads of Pad must be a 1-D constant, two per padded axis; it has rank {rank}");
        v.error("input-rank", Anchor::NodeInput(n, 1), message);
    } else {
        pad_values(node, since_version, &dims, &constant_input, v);
    }
}

/// `auto_pad` of the convolutions and pools: one of the spellings onnxruntime reads.
fn auto_pad(node: &Node, v: &mut Violations<'_, '_>) {
    v.one_of(node, "auto_pad");
}

/// `pads` and an `auto_pad` other than NOTSET on one convolution: the operator's definition
/// forbids it; onnx's inference fails ConvTranspose for it, onnxruntime refuses every
/// convolution that has both.
fn pads_beside_auto_pad(node: &Node, v: &mut Violations<'_, '_>) {
    if ints(node, "pads").is_some()
        && let Some(AttributeValue::String(pad)) = node.attribute("auto_pad").and_then(|a| a.value())
        && *pad != "NOTSET"
    {
        let at = v.attribute_anchor(node, "pads");
        v.error("invalid-attribute-value", at, "pads cannot be written beside an auto_pad other than NOTSET");
    }
}

fn conv_pool<'d>(
    node: &Node,
    op: &str,
    weight: Option<usize>,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    v: &mut Violations<'_, '_>,
) {
    let Some(x) = dims(0) else { return };
    // A convolution with its weight's shape unknown is not judged (onnx returns early there).
    let w = match weight {
        Some(i) => match dims(i) {
            Some(w) => Some((i, w)),
            None => return,
        },
        None => None,
    };
    if x.len() < 3 {
        let message =
            format!("the input of {op} must have rank 3 or more (batch, channels, spatial), it has rank {}", x.len());
        v.error("input-rank", Anchor::NodeInput(v.n, 0), message);
        return;
    }
    let spatial = x.len() - 2;
    let before = v.found.len();
    for (name, per_axis) in [("dilations", 1), ("strides", 1), ("kernel_shape", 1), ("pads", 2)] {
        if let Some(list) = ints(node, name) {
            v.one_per_axis(node, name, list, x.len(), per_axis);
        }
    }
    for (name, strictly) in [("dilations", true), ("strides", true), ("kernel_shape", true), ("pads", false)] {
        if let Some(list) = ints(node, name) {
            v.signs(node, name, list, strictly);
        }
    }
    let Some((i, w)) = w else {
        if let Some(kernel) = ints(node, "kernel_shape").filter(|_| v.found.len() == before) {
            overflow::conv_pool(node, x, kernel, v);
        }
        return;
    };
    let weight_spatial = w.get(2..).unwrap_or_default();
    if ints(node, "kernel_shape").is_none() {
        if weight_spatial.iter().all(|d| known_dim(d).is_some()) && weight_spatial.len() != spatial {
            let message = format!(
                "the weight (dims [{}]) has {} spatial axes, the input {spatial}: they must be the same",
                shown(w),
                weight_spatial.len()
            );
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, i), message);
        }
    } else if w.is_empty() {
        let message =
            format!("the weight of {op} must have rank 1 or more (its output channels first), it is a scalar");
        v.error("input-rank", Anchor::NodeInput(v.n, i), message);
    }
    if v.found.len() == before
        && let Some(kernel) = kernel_of(node, w)
    {
        overflow::conv_pool(node, x, &kernel, v);
    }
}

/// A convolution's kernel: its kernel_shape, else its weight's spatial dims when all are known.
fn kernel_of(node: &Node, w: &[Dimension]) -> Option<Vec<i64>> {
    match ints(node, "kernel_shape") {
        Some(k) => Some(k.to_vec()),
        None => w.get(2..)?.iter().map(known_dim).collect(),
    }
}

/// The pools' explicit pads are smaller than the kernel on each side: a window that lies
/// wholly in the padding has nothing to pool. onnxruntime refuses other pads at load.
fn pool_pads(node: &Node, v: &mut Violations<'_, '_>) {
    let (Some(kernel), Some(pads)) = (ints(node, "kernel_shape"), ints(node, "pads")) else { return };
    if pads.len() != 2 * kernel.len() {
        return;
    }
    let (begins, ends) = pads.split_at(kernel.len());
    let too_wide = kernel.iter().zip(begins.iter().zip(ends)).position(|(&k, (&b, &e))| b >= k || e >= k);
    if let Some(axis) = too_wide {
        let at = v.attribute_anchor(node, "pads");
        let op = v.op;
        let message = format!(
            "pads {pads:?} of {op}: spatial axis {axis} is padded by as much as its kernel ({}) or more; each pad must be smaller than the kernel",
            kernel[axis]
        );
        v.error("invalid-attribute-value", at, message);
    }
}

/// MatMul: no 0-D operand; the inner dimensions agree (after 1-D operands are promoted).
/// The matrix product of inputs `left` and `right` (MatMul's 0 and 1, QLinearMatMul's 0 and
/// 3): onnx's `MatMulShapeInference`, which MatMul, MatMulInteger and QLinearMatMul share.
fn matrix_product<'d>(
    left: usize,
    right: usize,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    v: &mut Violations<'_, '_>,
) {
    let (Some(a), Some(b)) = (dims(left), dims(right)) else { return };
    let op = v.op;
    if a.is_empty() || b.is_empty() {
        let i = if a.is_empty() { left } else { right };
        v.error("input-rank", Anchor::NodeInput(v.n, i), format!("{op} does not take 0-D inputs"));
        return;
    }
    let k_a = &a[a.len() - 1];
    let k_b = if b.len() == 1 { &b[0] } else { &b[b.len() - 2] };
    if let (Some(x), Some(y)) = (known_dim(k_a), known_dim(k_b))
        && x != y
    {
        let message = format!("{op} of a [..., {x}] by a [..., {y}, ...]: the inner dimensions must be equal");
        v.error("incompatible-shapes", Anchor::NodeInput(v.n, right), message);
        return;
    }
    // The batch dimensions (all but the last two) broadcast, aligned from the right.
    let batch = |d: &'d [Dimension]| &d[..d.len().saturating_sub(2)];
    let (batch_a, batch_b) = (batch(a), batch(b));
    for back in 1..=batch_a.len().min(batch_b.len()) {
        let (x, y) = (&batch_a[batch_a.len() - back], &batch_b[batch_b.len() - back]);
        if let (Some(x), Some(y)) = (known_dim(x), known_dim(y))
            && x != y
            && x != 1
            && y != 1
        {
            let message = format!(
                "{op} cannot broadcast the batch dimensions [{}] and [{}]: {x} and {y} differ and neither is 1",
                shown(batch_a),
                shown(batch_b)
            );
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, right), message);
            return;
        }
    }
}

/// NegativeLogLikelihoodLoss: a target of one rank less than the input, whose dimensions
/// are the input's without the classes (the second), and a 1-D weight.
fn target_and_weight<'d>(dims: &impl Fn(usize) -> Option<&'d [Dimension]>, v: &mut Violations<'_, '_>) {
    if let (Some(input), Some(target)) = (dims(0), dims(1))
        && input.len() >= 2
    {
        if target.len() + 1 != input.len() {
            let message = format!(
                "the target of NegativeLogLikelihoodLoss has rank {}, the input {}: the target has one axis less",
                target.len(),
                input.len()
            );
            v.error("input-rank", Anchor::NodeInput(v.n, 1), message);
            return;
        }
        // The input is [N, C, d1, …], the target [N, d1, …].
        let input_without_classes = std::iter::once(&input[0]).chain(&input[2..]);
        for (i, (a, b)) in input_without_classes.zip(target).enumerate() {
            if let (Some(a), Some(b)) = (known_dim(a), known_dim(b))
                && a != b
            {
                let message = format!(
                    "dimension {i} of NegativeLogLikelihoodLoss's target is {b}, but the input's matching dimension is {a}"
                );
                v.error("incompatible-shapes", Anchor::NodeInput(v.n, 1), message);
                return;
            }
        }
    }
    v.rank_within(2, dims(2), 1, 1, "the weight");
}

/// Pad: its constant pads are two per padded axis (every axis, or those of the `axes` input
/// from version 18, which must be in range and once); version 2 reads them from the `pads`
/// attribute.
fn pad_values<'d>(
    node: &Node,
    since_version: i64,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    constant_input: &impl Fn(usize) -> Option<Vec<i64>>,
    v: &mut Violations<'_, '_>,
) {
    let Some(x) = dims(0) else { return };
    let mut padded = x.len();
    if since_version >= 18 && node.has_input(3) {
        let Some(axes) = constant_input(3) else { return };
        if !v.axes_once(Anchor::NodeInput(v.n, 3), "axes", &axes, x.len(), true) {
            return;
        }
        padded = axes.len();
    }
    let (pads, at) = if since_version < 11 {
        (ints(node, "pads").map(<[_]>::to_vec), v.attribute_anchor(node, "pads"))
    } else {
        (constant_input(1), Anchor::NodeInput(v.n, 1))
    };
    let Some(pads) = pads else { return };
    if pads.len() != 2 * padded {
        let message =
            format!("Pad has {} pads for {padded} padded axes: it needs two per axis, {}", pads.len(), 2 * padded);
        v.error("attribute-size", at, message);
        return;
    }
    let axes: Vec<usize> = match constant_input(3).filter(|_| since_version >= 18 && node.has_input(3)) {
        Some(axes) => axes.iter().filter_map(|&a| normalize_axis(a, x.len())).collect(),
        None => (0..x.len()).collect(),
    };
    overflow::pad(x, &pads, &axes, at, v);
}
