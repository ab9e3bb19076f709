//! onnxruntime's fused forms of default-domain operators (FusedMatMul, FusedGemm,
//! FusedConv: the product or convolution, then an activation), its channels-last Conv
//! (NhwcConv) and its own versions of Trilu, Range and GatherND: the shapes of the
//! operators they extend.

use super::super::{Ctx, Outputs, Rule};
use crate::infer::broadcast::broadcast;
use crate::infer::types::{Known, dim, unknown_dim};
use crate::infer::types::{narrow, tensor_of};
use crate::ir::Dimension;

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "FusedMatMul" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(0), fused_matmul(ctx)))),
        "FusedGemm" => |ctx| {
            let matrix = |i: usize| ctx.dims(i).filter(|d| d.len() == 2);
            let pick = |i: usize, attr: &str, plain: usize| {
                matrix(i).map_or_else(unknown_dim, |d| {
                    if ctx.int(attr).unwrap_or(0) != 0 { d[1 - plain].clone() } else { d[plain].clone() }
                })
            };
            Some(Outputs::one(tensor_of(ctx.elem(0), Some(vec![pick(0, "transA", 0), pick(1, "transB", 1)]))))
        },
        // The convolution's shape (the activation and the sum input keep it).
        "FusedConv" => super::super::nn::rule("Conv")?,
        "NhwcConv" => nhwc_conv,
        "QLinearConv" => qlinear_conv,
        "Trilu" => |ctx| Some(Outputs::one(ctx.input_type(0)?.clone())),
        "GatherND" => super::super::select::rule("GatherND")?,
        "Range" => range,
        _ => return None,
    };
    Some(rule)
}

/// An operand's dims as the product reads them: `transBatch` moves the first axis of a
/// tensor of rank 3 or more to just before the last, then `trans` swaps the last two.
fn operand(d: &[Dimension], trans: bool, trans_batch: bool) -> Vec<Dimension> {
    let mut d = d.to_vec();
    let r = d.len();
    if trans_batch && r >= 3 {
        let first = d.remove(0);
        d.insert(r - 2, first);
    }
    if trans && r >= 2 {
        d.swap(r - 2, r - 1);
    }
    d
}

/// numpy's matmul of the operands as [`operand`] reads them.
fn fused_matmul(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let flag = |name: &str| ctx.int(name).unwrap_or(0) != 0;
    let a = operand(ctx.dims(0)?, flag("transA"), flag("transBatchA"));
    let b = operand(ctx.dims(1)?, flag("transB"), flag("transBatchB"));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let a2: Vec<Dimension> = if a.len() == 1 { vec![dim(1), a[0].clone()] } else { a.clone() };
    let b2: Vec<Dimension> = if b.len() == 1 { vec![b[0].clone(), dim(1)] } else { b.clone() };
    let mut out = broadcast(&[&a2[..a2.len() - 2], &b2[..b2.len() - 2]])?;
    if a.len() > 1 {
        out.push(a2[a2.len() - 2].clone());
    }
    if b.len() > 1 {
        out.push(b2[b2.len() - 1].clone());
    }
    Some(out)
}

/// One axis of `ceil((limit − start) / delta)` elements (at least none), its length known
/// when the three integer inputs are; `delta` is 1 when omitted.
fn range(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let scalar = |i: usize| ctx.value(i).and_then(Known::ints).filter(|v| v.len() == 1).map(|v| i128::from(v[0]));
    let delta = if ctx.has_input(2) { scalar(2) } else { Some(1) };
    let len = match (scalar(0), scalar(1), delta) {
        (Some(s), Some(l), Some(d)) if d != 0 => narrow(((l - s + d - d.signum()) / d).max(0)).map(dim),
        _ => None,
    };
    Some(Outputs::one(tensor_of(ctx.elem(0), Some(vec![len.unwrap_or_default()]))))
}

/// NhwcConv: Conv's shape with the channels last in the input `[N, spatial…, C]`, the
/// weights `[M, k…, C/group]` and the output `[N, spatial…, M]` (as onnxruntime's
/// `symbolic_shape_infer.py` reads them).
fn nhwc_conv(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let dims = ctx.dims(0).filter(|x| x.len() >= 3).and_then(|x| {
        let w = ctx.dims(1).filter(|w| w.len() == x.len()).map(channels_first);
        let mut out = super::super::nn::window_dims(ctx, true, &channels_first(x), w.as_deref())?;
        let channels = out.remove(1);
        out.push(channels);
        Some(out)
    });
    Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
}

/// com.microsoft QLinearConv: ai.onnx's QLinearConv, or with `channels_last` X and Y
/// `[N, spatial…, C]` (the weights stay `[M, C/group, k…]`); Y of y_zero_point's type.
fn qlinear_conv(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let last = ctx.int("channels_last").unwrap_or(0) != 0;
    let dims = ctx.dims(0).filter(|x| x.len() >= 3).and_then(|x| {
        let x = if last { channels_first(x) } else { x.to_vec() };
        let mut out = super::super::nn::window_dims(ctx, true, &x, ctx.dims(3))?;
        if last {
            let channels = out.remove(1);
            out.push(channels);
        }
        Some(out)
    });
    Some(Outputs::one(tensor_of(ctx.elem(7), dims)))
}

/// Dims with the last one moved to position 1: `[N, spatial…, C]` as `[N, C, spatial…]`.
fn channels_first(d: &[Dimension]) -> Vec<Dimension> {
    let mut d = d.to_vec();
    if let Some(last) = d.pop() {
        d.insert(1.min(d.len()), last);
    }
    d
}
