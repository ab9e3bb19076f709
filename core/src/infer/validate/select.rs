//! The selecting operators (the family of [`crate::infer::ops`]'s `select` module): what
//! onnx's inference functions fail them for (`onnx/defs/tensor/defs.cc`, `math/defs.cc`):
//! OneHot's inputs and axis, the axes of Compress and Unique, GatherND's index depth,
//! DepthToSpace's block size and mode, square matrices for Det, and BitCast's widths.

use super::{Judge, Violations, int, overflow, type_name};
use crate::diagnostic::Anchor;
use crate::infer::types::{known_dim, tensor_parts};
use crate::ir::{Dimension, Node};

/// The selecting operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations = &[
    ("OneHot", 1, one_hot),
    ("Compress", 1, compress),
    ("BitCast", 1, bit_cast),
    ("Unique", 1, unique),
    ("GatherND", 1, gather_nd),
    ("SpaceToDepth", 1, depth_to_space),
    ("DepthToSpace", 1, depth_to_space),
    ("Det", 1, det),
];

/// OneHot: indices of rank 1 or more, a depth of at most one value, two values (off, on),
/// and an axis within the output's rank ([`one_hot_shapes`]); and its constant inputs
/// ([`one_hot_values`]).
fn one_hot(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, since: since_version, .. } = *judge;
    let constant_input = judge.constant;
    let dims = |i: usize| judge.dims(i);
    one_hot_shapes(node, &dims, v);
    one_hot_values(since_version, &dims, &constant_input, v);
}

fn compress(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0) {
        if d.is_empty() {
            v.error("input-rank", Anchor::NodeInput(n, 0), "the input of Compress must have rank 1 or more");
        } else if int(node, "axis").is_some() {
            v.axis(node, "axis", 0, d.len(), false);
        }
    }
}

fn bit_cast(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, lookup, .. } = *judge;
    v.element_type(node, "to", false);
    let bits = |code: i64| i32::try_from(code).ok().and_then(crate::ir::DataType::from_code).map_or(0, |t| t.bits());
    if let (Some(from), Some(to)) = (lookup(0).and_then(tensor_parts).and_then(|(e, _)| e), int(node, "to"))
        && bits(from.into()) != 0
        && bits(to) != 0
        && bits(from.into()) != bits(to)
    {
        let at = v.attribute_anchor(node, "to");
        let message = format!(
            "BitCast from {} ({} bits) to {} ({} bits): both element types must have the same width",
            type_name(from.into()),
            bits(from.into()),
            type_name(to),
            bits(to)
        );
        v.error("invalid-attribute-value", at, message);
    }
}

fn unique(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    if let Some(d) = dims(0)
        && int(node, "axis").is_some()
    {
        v.axis(node, "axis", 0, d.len(), false);
    }
}

/// Judged once both inputs have shapes, as onnx does.
fn gather_nd(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    if dims(0).is_none() || dims(1).is_none() {
        return;
    }
    v.rank_within(0, dims(0), 1, usize::MAX, "the data");
    v.rank_within(1, dims(1), 1, usize::MAX, "the indices");
    // The indexed axes follow the batch_dims batch axes (onnx adds them, checked).
    if let (Some(data), Some(indices)) = (dims(0), dims(1))
        && let Some(last) = indices.last().and_then(known_dim)
    {
        let batch = int(node, "batch_dims").unwrap_or(0);
        let at = Anchor::NodeInput(n, 1);
        if let Some(reach) = overflow::plus(v, at, "the indexed axes after the batch axes", last, batch)
            && reach > data.len() as i64
        {
            let message = format!(
                "the indices of GatherND index {last} axes (their last dimension) after {batch} batch axes, more than the data's rank {}",
                data.len()
            );
            v.error("incompatible-shapes", at, message);
        }
    }
}

/// DepthToSpace and SpaceToDepth.
fn depth_to_space(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, .. } = *judge;
    let dims = |i: usize| judge.dims(i);
    v.positive_int(node, "blocksize");
    overflow::block_area(node, v);
    if op == "DepthToSpace" {
        v.one_of(node, "mode");
    }
    v.rank_within(0, dims(0), 4, 4, "the input");
}

fn det(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let n = judge.n;
    let dims = |i: usize| judge.dims(i);
    v.rank_within(0, dims(0), 2, usize::MAX, "the input");
    if let Some(d) = dims(0)
        && let [.., rows, cols] = d
        && let (Some(rows), Some(cols)) = (known_dim(rows), known_dim(cols))
        && rows != cols
    {
        let message = format!("Det of {rows}×{cols} matrices: they must be square");
        v.error("incompatible-shapes", Anchor::NodeInput(n, 0), message);
    }
}

/// OneHot: indices of rank 1 or more, a depth of at most one value, two values (off, on),
/// and an axis within the output's rank.
/// OneHot's constant inputs: a depth below 0, or (before version 11) negative indices.
fn one_hot_values<'d>(
    since_version: i64,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    constant_input: &impl Fn(usize) -> Option<Vec<i64>>,
    v: &mut Violations<'_, '_>,
) {
    if since_version < 11
        && let Some(&index) = constant_input(0).as_ref().and_then(|i| i.iter().find(|&&i| i < 0))
    {
        let message = format!("OneHot before version 11 takes no negative index, and its indices hold {index}");
        v.error("invalid-input-value", Anchor::NodeInput(v.n, 0), message);
    }
    if dims(1).is_some()
        && let Some(&depth) = constant_input(1).as_ref().and_then(|d| d.first())
        && depth < 0
    {
        v.error(
            "invalid-input-value",
            Anchor::NodeInput(v.n, 1),
            format!("the depth of OneHot is {depth}: it must be 0 or more"),
        );
    }
}

fn one_hot_shapes<'d>(node: &Node, dims: &impl Fn(usize) -> Option<&'d [Dimension]>, v: &mut Violations<'_, '_>) {
    if let Some(depth) = dims(1) {
        v.rank_within(1, Some(depth), 0, 1, "the depth");
        if let [d] = depth
            && known_dim(d).is_some_and(|n| n > 1)
        {
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, 1), "the depth of OneHot must be one value");
        }
    }
    if let Some(values) = dims(2) {
        v.rank_within(2, Some(values), 1, 1, "the values");
        if let [d] = values
            && known_dim(d).is_some_and(|n| n != 2)
        {
            let message = "the values of OneHot are two: the off value, then the on value";
            v.error("incompatible-shapes", Anchor::NodeInput(v.n, 2), message);
        }
    }
    if let Some(indices) = dims(0) {
        v.rank_within(0, Some(indices), 1, usize::MAX, "the indices");
        // The output has one axis more than the indices.
        let (axis, r) = (int(node, "axis").unwrap_or(-1), indices.len() as i64 + 1);
        if !indices.is_empty() && (axis < -r || axis >= r) {
            let at = v.attribute_anchor(node, "axis");
            let message = format!(
                "axis = {axis} is out of range for OneHot on indices of rank {}: it must be in [{}, {}]",
                r - 1,
                -r,
                r - 1
            );
            v.error("invalid-axis", at, message);
        }
    }
}
