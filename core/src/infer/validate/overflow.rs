//! Output sizes onnx's inference computes with checked arithmetic (`checkedAdd`,
//! `checkedSubtract`, `checkedMultiply`, `checkedDivide` in `onnx/defs/shape_inference.h`):
//! a size, or a step on the way to it, that leaves int64 fails the node ("Integer overflow
//! while …"). Each function here repeats one operator's computation, in onnx's order, from
//! the values known, and reports the first step that overflows as `dimension-overflow`.

use super::{Violations, int, ints};
use crate::diagnostic::Anchor;
use crate::infer::types::known_dim;
use crate::ir::{AttributeValue, Dimension, Node};

/// Reports that `what`, whose exact value is `exact`, leaves the range of int64.
fn overflows(v: &mut Violations<'_, '_>, at: Anchor, what: String, exact: i128) {
    let op = v.op;
    let side = if exact > 0 { "past 2^63 - 1" } else { "below -2^63" };
    v.error("dimension-overflow", at, format!("{what} of {op} leaves the range of int64 ({side})"));
}

/// `a × b`, reported when it overflows.
pub(super) fn times(v: &mut Violations<'_, '_>, at: Anchor, what: &str, a: i64, b: i64) -> Option<i64> {
    let product = a.checked_mul(b);
    if product.is_none() {
        overflows(v, at, format!("{what} ({a} × {b})"), i128::from(a) * i128::from(b));
    }
    product
}

/// `a + b`, reported when it overflows.
pub(super) fn plus(v: &mut Violations<'_, '_>, at: Anchor, what: &str, a: i64, b: i64) -> Option<i64> {
    let sum = a.checked_add(b);
    if sum.is_none() {
        overflows(v, at, format!("{what} ({a} + {b})"), i128::from(a) + i128::from(b));
    }
    sum
}

/// `a - b`, reported when it overflows.
pub(super) fn minus(v: &mut Violations<'_, '_>, at: Anchor, what: &str, a: i64, b: i64) -> Option<i64> {
    let difference = a.checked_sub(b);
    if difference.is_none() {
        overflows(v, at, format!("{what} ({a} - {b})"), i128::from(a) - i128::from(b));
    }
    difference
}

/// A list attribute, or `default` repeated once per spatial axis.
fn list_or(node: &Node, name: &str, default: i64, axes: usize) -> Vec<i64> {
    ints(node, name).map_or_else(|| vec![default; axes], <[i64]>::to_vec)
}

/// The kernel as dilated: `(k - 1) × d + 1` per axis.
fn effective_kernel(v: &mut Violations<'_, '_>, at: Anchor, kernel: &[i64], dilations: &[i64]) -> Option<Vec<i64>> {
    kernel
        .iter()
        .zip(dilations)
        .map(|(&k, &d)| {
            let span =
                minus(v, at, "the dilated kernel", k, 1).and_then(|k| times(v, at, "the dilated kernel", k, d))?;
            plus(v, at, "the dilated kernel", span, 1)
        })
        .collect()
}

fn auto_pad(node: &Node) -> Option<String> {
    match node.attribute("auto_pad").and_then(|a| a.value()) {
        Some(AttributeValue::String(s)) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        _ => None,
    }
}

/// A convolution's spatial axes, strides and dilated kernel, once the input has a batch,
/// a channel and one axis per kernel value.
struct Dilated {
    at: Anchor,
    axes: usize,
    strides: Vec<i64>,
    effective: Vec<i64>,
}

fn dilated(node: &Node, x: &[Dimension], kernel: &[i64], v: &mut Violations<'_, '_>) -> Option<Dilated> {
    let axes = kernel.len();
    if x.len() != axes + 2 {
        return None;
    }
    let at = Anchor::Node(v.n);
    let (dilations, strides) = (list_or(node, "dilations", 1, axes), list_or(node, "strides", 1, axes));
    let effective = effective_kernel(v, at, kernel, &dilations)?;
    Some(Dilated { at, axes, strides, effective })
}

/// The pads written, else those auto_pad SAME_UPPER or SAME_LOWER spreads from each axis's
/// total (`total(i)`, none for an axis it cannot size), else none.
fn pads_or_auto(node: &Node, axes: usize, total: impl Fn(usize) -> Option<i64>) -> Vec<i64> {
    if let Some(p) = ints(node, "pads") {
        return p.to_vec();
    }
    let mut pads = vec![0; 2 * axes];
    let Some(mode) = auto_pad(node).filter(|m| m == "SAME_UPPER" || m == "SAME_LOWER") else { return pads };
    for i in 0..axes {
        let Some(total) = total(i).map(|t| t.max(0)) else { continue };
        let (small, big) = (total >> 1, total - (total >> 1));
        (pads[i], pads[i + axes]) = if mode == "SAME_UPPER" { (small, big) } else { (big, small) };
    }
    pads
}

/// Conv, ConvInteger, QLinearConv and the pools (convPoolShapeInference), once their lists
/// hold one positive value per spatial axis: the dilated kernel, the padded input and the
/// output size, with the pads auto_pad computes when there are none.
pub(super) fn conv_pool(node: &Node, x: &[Dimension], kernel: &[i64], v: &mut Violations<'_, '_>) {
    let Some(Dilated { at, axes, strides, effective }) = dilated(node, x, kernel, v) else { return };
    // auto_pad's total for an axis: the dilated kernel less the stride, or less the input's
    // remainder by the stride when there is one (an axis of unknown size gets none).
    let pads = pads_or_auto(node, axes, |i| {
        let residual = if strides[i] > 1 { known_dim(&x[2 + i]).map(|d| d % strides[i]) } else { Some(0) };
        let residual = residual.filter(|&r| r >= 0)?;
        effective[i].checked_sub(if residual == 0 { strides[i] } else { residual })
    });
    let ceil = int(node, "ceil_mode").unwrap_or(0) != 0;
    for i in 0..axes {
        let Some(input) = known_dim(&x[2 + i]) else { continue };
        let what = format!("the padded input of spatial axis {i}");
        let Some(padded) = plus(v, at, &what, input, pads[i]).and_then(|p| plus(v, at, &what, p, pads[i + axes]))
        else {
            return;
        };
        let Some(mut numerator) = minus(v, at, &format!("the output size of spatial axis {i}"), padded, effective[i])
        else {
            return;
        };
        if ceil {
            let Some(n) = plus(v, at, &format!("the output size of spatial axis {i}"), numerator, strides[i] - 1)
            else {
                return;
            };
            numerator = n;
        }
        let Some(output) = plus(v, at, &format!("the output size of spatial axis {i}"), numerator / strides[i], 1)
        else {
            return;
        };
        if ceil
            && (minus(v, at, &format!("the last window's start on spatial axis {i}"), output, 1)
                .and_then(|o| times(v, at, &format!("the last window's start on spatial axis {i}"), o, strides[i]))
                .is_none()
                || plus(v, at, &format!("the padded start of spatial axis {i}"), input, pads[i]).is_none())
        {
            return;
        }
    }
}

/// ConvTranspose without output_shape: `strides × (in - 1) + output_padding + dilated kernel
/// - pads` per spatial axis.
pub(super) fn conv_transpose(node: &Node, x: &[Dimension], kernel: &[i64], v: &mut Violations<'_, '_>) {
    let Some(Dilated { at, axes, strides, effective }) = dilated(node, x, kernel, v) else { return };
    if ints(node, "output_shape").is_some() {
        return;
    }
    let pads = pads_or_auto(node, axes, |i| effective[i].checked_sub(strides[i]));
    let output_padding = list_or(node, "output_padding", 0, axes);
    for i in 0..axes {
        let Some(input) = known_dim(&x[2 + i]) else { continue };
        let what = format!("the output size of spatial axis {i}");
        let size = minus(v, at, &what, input, 1)
            .and_then(|s| times(v, at, &what, strides[i], s))
            .and_then(|s| plus(v, at, &what, s, output_padding[i]))
            .and_then(|s| plus(v, at, &what, s, effective[i]))
            .and_then(|s| minus(v, at, &what, s, pads[i]))
            .and_then(|s| minus(v, at, &what, s, pads[i + axes]));
        if size.is_none() {
            return;
        }
    }
}

/// MaxUnpool without output_shape: `strides × (in - 1) + kernel - pads` per spatial axis.
pub(super) fn max_unpool(node: &Node, x: &[Dimension], v: &mut Violations<'_, '_>) {
    let Some(kernel) = ints(node, "kernel_shape") else { return };
    let axes = kernel.len();
    if x.len() != axes + 2 || node.has_input(2) {
        return;
    }
    let at = Anchor::Node(v.n);
    let (strides, pads) = (list_or(node, "strides", 1, axes), list_or(node, "pads", 0, 2 * axes));
    if strides.len() != axes || pads.len() != 2 * axes {
        return;
    }
    for i in 0..axes {
        let Some(input) = known_dim(&x[2 + i]) else { continue };
        let what = format!("the output size of spatial axis {i}");
        let size = minus(v, at, &what, input, 1)
            .and_then(|s| times(v, at, &what, strides[i], s))
            .and_then(|s| plus(v, at, &what, s, kernel[i]))
            .and_then(|s| minus(v, at, &what, s, pads[i]))
            .and_then(|s| minus(v, at, &what, s, pads[i + axes]));
        if size.is_none() {
            return;
        }
    }
}

/// Tile: each known dimension times its repeat.
pub(super) fn tile(x: &[Dimension], repeats: &[i64], v: &mut Violations<'_, '_>) {
    let at = Anchor::NodeInput(v.n, 1);
    for (axis, (d, &r)) in x.iter().zip(repeats).enumerate() {
        if let Some(d) = known_dim(d)
            && times(v, at, &format!("the output's dimension {axis}"), d, r).is_none()
        {
            return;
        }
    }
}

/// Pad: each axis's two pads, then the known dimension plus their sum. `axes` are the
/// padded axes in the order of the pads (every axis when there is no axes input).
pub(super) fn pad(x: &[Dimension], pads: &[i64], axes: &[usize], at: Anchor, v: &mut Violations<'_, '_>) {
    let n = axes.len();
    if pads.len() != 2 * n {
        return;
    }
    for (i, &axis) in axes.iter().enumerate() {
        let what = format!("the padding of axis {axis}");
        let Some(total) = plus(v, at, &what, pads[i], pads[i + n]) else { return };
        if let Some(d) = x.get(axis).and_then(known_dim)
            && plus(v, at, &format!("the output's dimension {axis}"), d, total).is_none()
        {
            return;
        }
    }
}

/// DepthToSpace and SpaceToDepth: the block's area, blocksize².
pub(super) fn block_area(node: &Node, v: &mut Violations<'_, '_>) {
    if let Some(block) = int(node, "blocksize").filter(|&b| b > 0) {
        let at = v.attribute_anchor(node, "blocksize");
        times(v, at, "the block's area", block, block);
    }
}

/// Col2Im: the product of a constant block_shape.
pub(super) fn block_product(block: &[i64], v: &mut Violations<'_, '_>) {
    let at = Anchor::NodeInput(v.n, 2);
    let mut product: i64 = 1;
    for &b in block {
        match times(v, at, "the block's size", product, b) {
            Some(p) => product = p,
            None => return,
        }
    }
}
