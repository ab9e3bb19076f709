//! The generators (the family of [`crate::infer::ops`]'s `generator` module): what onnx's
//! inference functions fail them for (`onnx/defs/generator/defs.cc`, `math/defs.cc`): an
//! element type attribute that names one, a shape with no negative size, the windows' size
//! and MelWeightMatrix's scalars; and Multinomial's input and output type.

use super::{Judge, Violations, int, ints, signal};
use crate::diagnostic::Anchor;

/// The generators' rules, under their keys ([`super::DEFAULT_DOMAIN`]).
pub(super) const VALIDATORS: super::Registrations = &[
    ("EyeLike", 1, eye_like),
    ("Bernoulli", 1, random_like),
    ("RandomUniformLike", 1, random_like),
    ("RandomNormalLike", 1, random_like),
    ("RandomUniform", 1, random),
    ("RandomNormal", 1, random),
    ("Multinomial", 1, multinomial),
    ("HannWindow", 1, window),
    ("HammingWindow", 1, window),
    ("BlackmanWindow", 1, window),
    ("MelWeightMatrix", 1, mel_weight_matrix),
];

fn eye_like(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    v.rank_within(0, dims(0), 2, 2, "the input");
    v.element_type(node, "dtype", false);
}

/// RandomNormalLike, RandomUniformLike and Bernoulli.
fn random_like(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    v.element_type(judge.node, "dtype", false);
}

/// RandomNormal and RandomUniform: onnx's propagateShapeFromAttributeToOutput, no negative
/// size.
fn random(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    v.element_type(node, "dtype", false);
    if let Some(shape) = ints(node, "shape") {
        v.signs(node, "shape", shape, false);
    }
}

fn multinomial(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let node = judge.node;
    let dims = |i: usize| judge.dims(i);
    v.rank_within(0, dims(0), 2, 2, "the input");
    if let Some(dtype) = int(node, "dtype")
        && dtype != crate::ir::DataType::Int32 as i64
        && dtype != crate::ir::DataType::Int64 as i64
    {
        let at = v.attribute_anchor(node, "dtype");
        v.error(
            "invalid-attribute-value",
            at,
            format!("dtype = {dtype}: Multinomial's output is int32 (6) or int64 (7)"),
        );
    }
}

/// HannWindow, HammingWindow and BlackmanWindow.
fn window(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { n, node, op, .. } = *judge;
    let constant_input = judge.constant;
    let dims = |i: usize| judge.dims(i);
    v.element_type(node, "output_datatype", false);
    if let Some(size) = constant_input(0) {
        v.rank_within(0, dims(0), 0, 0, "size");
        if size.first().is_some_and(|&s| s <= 0) {
            let message = format!("the size of {op} is {}: it must be greater than 0", size[0]);
            v.error("invalid-input-value", Anchor::NodeInput(n, 0), message);
        }
    }
}

/// MelWeightMatrix: its output type, and its scalars ([`signal::signal_rules`]).
fn mel_weight_matrix(judge: &Judge<'_>, v: &mut Violations<'_, '_>) {
    let Judge { node, op, since: since_version, .. } = *judge;
    let constant_input = judge.constant;
    let constant_rank = |i: usize| judge.constant_rank(i);
    let dims = |i: usize| judge.dims(i);
    v.element_type(node, "output_datatype", false);
    let known = signal::Inputs { dims: &dims, constant: &constant_input, constant_rank: &constant_rank };
    signal::signal_rules(node, op, since_version, known, v);
}
