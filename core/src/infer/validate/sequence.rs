//! The sequence and optional operators: what onnx's inference functions fail them for
//! (`onnx/defs/sequence/{defs,utils}.cc`, `optional/defs.cc`) beyond their type
//! constraints: SequenceEmpty's `dtype` naming an element type, a tensor inserted into a
//! sequence of its own element type, ConcatFromSequence's and SplitToSequence's axes, the
//! split sizes of SplitToSequence, and an Optional that says what it holds.

use super::{Judge, Violations, int, type_name};
use crate::diagnostic::Anchor;
use crate::infer::ops::sequence::element;
use crate::infer::types::normalize_axis;
use crate::infer::types::{known_dim, tensor_parts};
use crate::ir::{Dimension, Node, Type};

/// The sequence and optional operators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations = &[
    ("SequenceEmpty", 1, sequences),
    ("SequenceInsert", 1, sequences),
    ("ConcatFromSequence", 1, sequences),
    ("SplitToSequence", 1, sequences),
    ("Optional", 1, sequences),
];

fn sequences(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    sequence_rules(judge.node, judge.op, &judge.lookup, &|i| judge.dims(i), &judge.constant, v);
}

/// Checks sequence or optional node `node` (`op`) from its input types `lookup`, their dims
/// `dims` and the small integer constants among its inputs `constant`.
pub(super) fn sequence_rules<'t, 'd>(
    node: &Node,
    op: &str,
    lookup: &impl Fn(usize) -> Option<&'t Type>,
    dims: &impl Fn(usize) -> Option<&'d [Dimension]>,
    constant: &impl Fn(usize) -> Option<Vec<i64>>,
    v: &mut Violations<'_, '_>,
) {
    match op {
        "SequenceEmpty" => v.element_type(node, "dtype", false),
        "SequenceInsert" => {
            let held = lookup(0).and_then(element).and_then(tensor_parts).and_then(|(e, _)| e);
            let inserted = lookup(1).and_then(tensor_parts).and_then(|(e, _)| e);
            if let (Some(held), Some(inserted)) = (held, inserted)
                && held != inserted
            {
                let message = format!(
                    "SequenceInsert puts a tensor of {} into a sequence of {} tensors: they must be of one element type",
                    type_name(inserted.into()),
                    type_name(held.into())
                );
                v.error("type-parameter-mismatch", Anchor::NodeInput(v.n, 1), message);
            }
        }
        "ConcatFromSequence" => {
            let rank = lookup(0).and_then(element).and_then(tensor_parts).and_then(|(_, d)| d).map(<[_]>::len);
            if let Some(rank) = rank {
                concat_from_sequence(node, rank, v);
            }
        }
        "SplitToSequence" => {
            if let Some(d) = dims(0) {
                split_to_sequence(node, d, dims(1), constant(1), v);
            }
        }
        "Optional" if node.inputs.is_empty() && node.attribute("type").is_none() => {
            let message = "an Optional without an input needs the type attribute, to say what it may hold";
            v.error("missing-required-attribute", Anchor::Node(v.n), message);
        }
        _ => {}
    }
}

/// ConcatFromSequence over elements of rank `rank`: `new_axis` 0 or 1, and `axis` in
/// `[-rank, rank-1]`, or `[-rank-1, rank]` with a new axis.
fn concat_from_sequence(node: &Node, rank: usize, v: &mut Violations<'_, '_>) {
    let new_axis = int(node, "new_axis").unwrap_or(0);
    if new_axis != 0 && new_axis != 1 {
        let at = v.attribute_anchor(node, "new_axis");
        v.error("invalid-attribute-value", at, format!("new_axis = {new_axis} of ConcatFromSequence must be 0 or 1"));
        return;
    }
    let Some(axis) = int(node, "axis") else { return };
    let r = rank as i64;
    let (low, high) = if new_axis == 1 { (-r - 1, r) } else { (-r, r - 1) };
    if axis < low || axis > high {
        let at = v.attribute_anchor(node, "axis");
        let with = if new_axis == 1 { " with a new axis" } else { "" };
        let message = format!(
            "axis = {axis} is out of range for ConcatFromSequence of rank-{rank} tensors{with}: it must be in [{low}, {high}]"
        );
        v.error("invalid-axis", at, message);
    }
}

/// SplitToSequence of an input of dims `input`: `axis` in range, and constant split sizes
/// that are not empty, a positive scalar, or a list summing to the axis's known size.
fn split_to_sequence(
    node: &Node,
    input: &[Dimension],
    split_dims: Option<&[Dimension]>,
    split: Option<Vec<i64>>,
    v: &mut Violations<'_, '_>,
) {
    let Some(axis) = normalize_axis(int(node, "axis").unwrap_or(0), input.len()) else {
        v.axis(node, "axis", 0, input.len(), false);
        return;
    };
    let (Some(split), Some(split_dims)) = (split, split_dims) else { return };
    let at = Anchor::NodeInput(v.n, 1);
    if split.is_empty() {
        v.error("invalid-input-value", at, "the split of SplitToSequence is empty: it needs one size or more");
        return;
    }
    let Some(size) = known_dim(&input[axis]) else { return };
    if split_dims.is_empty() {
        if split[0] <= 0 {
            let message = format!("the split of SplitToSequence is {}: a scalar split must be positive", split[0]);
            v.error("invalid-input-value", at, message);
        }
    } else {
        let sum = split.iter().try_fold(0i64, |a, &b| a.checked_add(b));
        if sum != Some(size) {
            let message = format!(
                "the split sizes {split:?} of SplitToSequence do not sum to {size}, the size of axis {axis} of its input"
            );
            v.error("invalid-input-value", at, message);
        }
    }
}
