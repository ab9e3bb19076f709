//! Element-wise activations with an optional bias (FastGelu, BiasGelu, Gelu, QuickGelu,
//! BiasAdd): the output has the type and shape of input 0.

use super::super::{Ctx, Outputs, Rule};

pub fn rule(op: &str) -> Option<Rule> {
    match op {
        "FastGelu" | "BiasGelu" | "Gelu" | "QuickGelu" | "BiasAdd" => Some(like_input),
        _ => None,
    }
}

/// The type of input 0.
fn like_input(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    Some(Outputs::one(ctx.input_type(0)?.clone()))
}
