//! DFT: the transformed axis takes the DFT length (halved plus one when one-sided), and
//! the last axis holds real and imaginary parts (2), or real parts only for a one-sided
//! inverse (1).

use super::{Ctx, Outputs, Rule};
use crate::infer::types::{dim, known_dim, unknown_dim};
use crate::infer::types::{normalize_axis, tensor_of};

pub fn rule(op: &str) -> Option<Rule> {
    (op == "DFT").then_some(dft)
}

/// DFT before opset 20: the axis is an attribute (default 1).
fn dft(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    dft_along(ctx, Some(ctx.int("axis").unwrap_or(1)))
}

/// DFT from opset 20 on: the axis moved to an input (default -2). Registered by version in
/// the operator table ([`super::FROM_VERSION`]).
pub fn dft_from_20(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    dft_along(ctx, if ctx.has_input(2) { ctx.scalar_value(2) } else { Some(-2) })
}

fn dft_along(ctx: &Ctx<'_, '_>, axis: Option<i64>) -> Option<Outputs> {
    let Some(d) = ctx.dims(0).filter(|d| d.len() >= 2) else {
        return Some(Outputs::one(tensor_of(ctx.elem(0), None)));
    };
    let onesided = ctx.int("onesided").unwrap_or(0) != 0;
    let inverse = ctx.int("inverse").unwrap_or(0) != 0;
    let rank = d.len();
    let mut out = d.to_vec();
    out[rank - 1] = dim(if onesided && inverse { 1 } else { 2 });
    let Some(axis) = axis.and_then(|a| normalize_axis(a, rank)).filter(|&a| a < rank - 1) else {
        // Which axis changes is unknown: only the last is certain.
        for x in &mut out[..rank - 1] {
            if onesided || ctx.has_input(1) {
                *x = unknown_dim();
            }
        }
        return Some(Outputs::one(tensor_of(ctx.elem(0), Some(out))));
    };
    let length = if ctx.has_input(1) {
        ctx.scalar_value(1).map(|n| if onesided && !inverse { n / 2 + 1 } else { n })
    } else if onesided {
        known_dim(&d[axis]).and_then(|n| if inverse { n.checked_sub(1)?.checked_mul(2) } else { Some(n / 2 + 1) })
    } else {
        known_dim(&d[axis])
    };
    out[axis] = match length {
        Some(n) => dim(n),
        None if !ctx.has_input(1) && !onesided => d[axis].clone(),
        None => unknown_dim(),
    };
    Some(Outputs::one(tensor_of(ctx.elem(0), Some(out))))
}
