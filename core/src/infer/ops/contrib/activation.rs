//! Element-wise activations with an optional bias (FastGelu, BiasGelu, QuickGelu, …): the
//! output has the type and shape of input 0.

use super::super::{Ctx, Outputs, Rule};

#[allow(clippy::match_single_binding)] // the first operator comes with the next commit
pub fn rule(op: &str) -> Option<Rule> {
    match op {
        _ => None,
    }
}

/// The type of input 0.
#[allow(dead_code)]
fn like_input(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    Some(Outputs::one(ctx.input_type(0)?.clone()))
}
