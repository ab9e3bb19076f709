//! The elementwise operators (the family of [`crate::infer::ops`]'s `elementwise` module):
//! what onnx's inference functions fail them for (`onnx/defs/math/defs.cc`,
//! `nn/defs.cc`, `tensor/defs.cc`): inputs that cannot broadcast, the axis of the softmaxes,
//! ranks of Trilu, ReverseSequence and Dropout's scalars, LRN's size; and PRelu's slope,
//! which only running the model fails.

use super::{Judge, Violations, int};
use crate::diagnostic::Anchor;
use crate::infer::types::known_dim;
use crate::ir::{Dimension, Node};

/// The elementwise operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]). The
/// broadcasting operators from version 7 on (earlier ones had a `broadcast` flag): the
/// first version of each at or after it.
pub(super) const VALIDATORS: super::Registrations = &[
    ("Add", 7, broadcast),
    ("Sub", 7, broadcast),
    ("Mul", 7, broadcast),
    ("Div", 7, broadcast),
    ("Pow", 7, broadcast),
    ("Mod", 10, broadcast),
    ("BitShift", 11, broadcast),
    ("And", 7, broadcast),
    ("Or", 7, broadcast),
    ("Xor", 7, broadcast),
    ("Equal", 7, broadcast),
    ("Greater", 7, broadcast),
    ("Less", 7, broadcast),
    ("GreaterOrEqual", 12, broadcast),
    ("LessOrEqual", 12, broadcast),
    ("Where", 9, broadcast),
    ("Max", 8, broadcast),
    ("Min", 8, broadcast),
    ("Sum", 8, broadcast),
    ("Mean", 8, broadcast),
    ("PRelu", 7, prelu),
    ("Softmax", 11, softmax),
    ("LogSoftmax", 11, softmax),
    ("Hardmax", 11, softmax),
    ("Trilu", 1, trilu),
    ("ReverseSequence", 1, reverse_sequence),
    ("Dropout", 12, dropout),
    ("LRN", 1, lrn),
];

/// The broadcasting operators ([`broadcast_shapes`]).
fn broadcast(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    broadcast_shapes(node, &dims, v);
}

/// PRelu from version 7 ([`slope`]).
fn prelu(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let dims = |i: usize| judge.dims(i);
    slope(&dims, v);
}

/// Softmax, LogSoftmax and Hardmax from version 11 (version 1 checks nothing); only an axis
/// written out: the default changed (1, then -1 from version 13).
fn softmax(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    v.rank_within(0, dims(0), 1, usize::MAX, "the input");
    if let (Some(d), Some(_)) = (dims(0), int(node, "axis")) {
        v.axis(node, "axis", 0, d.len(), false);
    }
}

/// An input of at least rank 2 (a matrix, or a batch of them).
fn trilu(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let dims = |i: usize| judge.dims(i);
    v.rank_within(0, dims(0), 2, usize::MAX, "the input");
}

/// Judged once both inputs have shapes, as onnx does.
fn reverse_sequence(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let dims = |i: usize| judge.dims(i);
    if dims(0).is_none() || dims(1).is_none() {
        return;
    }
    v.rank_within(0, dims(0), 2, usize::MAX, "the input");
    v.rank_within(1, dims(1), 1, 1, "sequence_lens");
}

/// The ratio and the training flag are scalars (version 12 on, where they are inputs).
fn dropout(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let dims = |i: usize| judge.dims(i);
    v.rank_within(1, dims(1), 0, 0, "ratio");
    v.rank_within(2, dims(2), 0, 0, "training_mode");
}

fn lrn(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    v.positive_int(node, "size");
    if int(node, "size").is_some_and(|size| size > 0 && size % 2 == 0) {
        let at = v.attribute_anchor(node, "size");
        v.unsupported(at, "LRN with an even size");
    }
}

/// Multidirectional broadcasting: aligned from the last axis, known dims must be equal or 1.
fn broadcast_shapes<'d>(node: &Node, dims: &impl Fn(usize) -> Option<&'d [Dimension]>, v: &mut Violations<'_, '_>) {
    let shapes: Vec<(usize, &[Dimension])> =
        (0..node.inputs.len()).filter(|&i| !node.inputs[i].is_empty()).filter_map(|i| Some((i, dims(i)?))).collect();
    let rank = shapes.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    for axis in 0..rank {
        let mut size: Option<(usize, i64)> = None;
        for &(i, shape) in &shapes {
            let Some(at) = (axis + shape.len()).checked_sub(rank) else { continue };
            let Some(d) = known_dim(&shape[at]).filter(|&d| d != 1) else { continue };
            match size {
                None => size = Some((i, d)),
                Some((first, s)) if s != d => {
                    let op = v.op;
                    let message = format!(
                        "{op} cannot broadcast input {first} ({s} on axis {axis} from the right-aligned shapes) with input {i} ({d})"
                    );
                    v.error("incompatible-shapes", Anchor::NodeInput(v.n, i), message);
                    return;
                }
                Some(_) => {}
            }
        }
    }
}

/// PRelu's slope must broadcast to X one way (each of its dims, right-aligned, 1 or X's).
/// onnx's inference does not check it and onnxruntime loads the model; the run fails.
fn slope<'d>(dims: &impl Fn(usize) -> Option<&'d [Dimension]>, v: &mut Violations<'_, '_>) {
    let (Some(x), Some(slope)) = (dims(0), dims(1)) else { return };
    let at = Anchor::NodeInput(v.n, 1);
    if slope.len() > x.len() {
        let message =
            format!("PRelu's slope has rank {}, more than X's {}: it cannot broadcast to X", slope.len(), x.len());
        v.warning("incompatible-shapes", at, message);
        return;
    }
    let offset = x.len() - slope.len();
    for (k, s) in slope.iter().enumerate() {
        if let (Some(s), Some(d)) = (known_dim(s), known_dim(&x[offset + k]))
            && s != 1
            && s != d
        {
            let axis = offset + k;
            let message = format!(
                "PRelu's slope is {s} on axis {axis} (right-aligned), where X is {d}: it cannot broadcast to X \
                 (onnx and onnxruntime load the model; running it fails)"
            );
            v.warning("incompatible-shapes", at, message);
            return;
        }
    }
}
