//! Element-wise activations with an optional bias (FastGelu, BiasGelu, Gelu, QuickGelu,
//! BiasAdd): the output has the type and shape of input 0. BiasSplitGelu halves the last
//! axis.

use super::super::{Ctx, Outputs, Rule};
use crate::infer::types::{dim, known_dim, tensor_of, unknown_dim};

pub fn rule(op: &str) -> Option<Rule> {
    match op {
        "FastGelu" | "BiasGelu" | "Gelu" | "QuickGelu" | "BiasAdd" => Some(like_input),
        "BiasSplitGelu" => Some(split_in_half),
        _ => None,
    }
}

/// The type of input 0.
fn like_input(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    Some(Outputs::one(ctx.input_type(0)?.clone()))
}

/// BiasSplitGelu: `[N, S, D]` gives `[N, S, D/2]` (an odd or unknown D, an unknown half).
fn split_in_half(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let dims = ctx.dims(0).map(|d| {
        let mut d = d.to_vec();
        if let Some(last) = d.last_mut() {
            *last = known_dim(last).filter(|n| n % 2 == 0).map_or_else(unknown_dim, |n| dim(n / 2));
        }
        d
    });
    Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
}
