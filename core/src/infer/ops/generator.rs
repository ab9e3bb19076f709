//! Operators that make new tensors: random tensors shaped like an input, identity-like
//! matrices, and the signal windows whose length is an input value.

use super::{Outputs, Rule};
use crate::infer::types::tensor_of;
use crate::infer::types::{dim, unknown_dim};
use crate::ir::DataType;

const FLOAT: i32 = DataType::Float as i32;

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        // Shape of the input; element type from `dtype`, else the input's (else float for
        // the random generators, whose input may be of any type).
        "EyeLike" | "Bernoulli" | "RandomUniformLike" | "RandomNormalLike" => |ctx| {
            let elem = ctx.int("dtype").and_then(|t| i32::try_from(t).ok()).or_else(|| ctx.elem(0));
            Some(Outputs::one(tensor_of(elem, ctx.dims_vec(0))))
        },
        "RandomUniform" | "RandomNormal" => |ctx| {
            let elem = ctx.int("dtype").and_then(|t| i32::try_from(t).ok()).unwrap_or(FLOAT);
            let dims = ctx.ints("shape").map(|s| s.iter().map(|&d| dim(d)).collect());
            Some(Outputs::one(tensor_of(Some(elem), dims)))
        },
        // A 1-D window of `size` samples.
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => |ctx| {
            let elem = ctx.int("output_datatype").and_then(|t| i32::try_from(t).ok()).unwrap_or(FLOAT);
            let length = ctx.scalar_value(0).map_or_else(unknown_dim, dim);
            Some(Outputs::one(tensor_of(Some(elem), Some(vec![length]))))
        },
        // [dft_length / 2 + 1, num_mel_bins].
        "MelWeightMatrix" => |ctx| {
            let elem = ctx.int("output_datatype").and_then(|t| i32::try_from(t).ok()).unwrap_or(FLOAT);
            let bins = ctx.scalar_value(0).map_or_else(unknown_dim, dim);
            let frequencies = ctx.scalar_value(1).map_or_else(unknown_dim, |n| dim(n / 2 + 1));
            Some(Outputs::one(tensor_of(Some(elem), Some(vec![frequencies, bins]))))
        },
        _ => return None,
    };
    Some(rule)
}
