//! Linear algebra, reductions, normalizations, convolutions and pooling.

use super::{Ctx, Outputs, Rule};
use crate::infer::broadcast::broadcast;
use crate::infer::types::{Known, dim, known_dim, unknown_dim};
use crate::infer::types::{narrow, normalize_axis, tensor_of};
use crate::ir::{DataType, Dimension};

const REDUCE: &[&str] = &[
    "ReduceMax",
    "ReduceMin",
    "ReduceMean",
    "ReduceSum",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
];

pub fn rule(op: &str) -> Option<Rule> {
    if REDUCE.contains(&op) {
        return Some(|ctx| Some(reduce(ctx.op(), ctx)));
    }
    let rule: Rule = match op {
        "MatMul" | "MatMulInteger" => |ctx| {
            let elem = if ctx.op() == "MatMul" { ctx.elem(0) } else { Some(DataType::Int32 as i32) };
            Some(Outputs::one(tensor_of(elem, matmul(ctx.dims(0), ctx.dims(1)))))
        },
        "Gemm" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(0), gemm(ctx)))),
        "ArgMax" | "ArgMin" => |ctx| {
            let dims = ctx.dims(0).map(|d| {
                // As onnx: the axis names no dimension of a scalar (the default 0 included),
                // and version 1 does not judge its range, so such an axis reduces nothing
                // (from 11 on an axis written out of range fails the node: validate/nn.rs).
                let axis = ctx.int("axis").unwrap_or(0);
                let axis = if axis < 0 { axis + d.len() as i64 } else { axis };
                let axes: Vec<usize> = usize::try_from(axis).ok().filter(|&a| a < d.len()).into_iter().collect();
                // Only 1 keeps the axis (any other value drops it).
                let keep = ctx.int("keepdims").unwrap_or(1) == 1;
                reduced(d, &axes, keep)
            });
            Some(Outputs::one(tensor_of(Some(DataType::Int64 as i32), dims)))
        },
        // SimplifiedLayerNormalization: onnxruntime's RMS norm in onnx's domain (its
        // optimizer writes it), with an optional inverse deviation output.
        "BatchNormalization"
        | "LayerNormalization"
        | "RMSNormalization"
        | "GroupNormalization"
        | "SimplifiedLayerNormalization" => |ctx| {
            let mut out = Outputs::one(ctx.input_type(0)?.clone());
            // Training mode also gives the updated running mean and variance.
            if ctx.op() == "BatchNormalization" {
                for i in 1..ctx.node.outputs.len().min(3) {
                    out.types.push(ctx.input_type(i + 2).cloned());
                }
            }
            if matches!(ctx.op(), "LayerNormalization" | "SimplifiedLayerNormalization") && ctx.node.outputs.len() > 1 {
                let stash =
                    if ctx.int("stash_type").unwrap_or(1) == 1 { Some(DataType::Float as i32) } else { ctx.elem(0) };
                let dims = ctx.dims(0).and_then(|d| {
                    let axis = normalize_axis(ctx.int("axis").unwrap_or(-1), d.len())?;
                    let mut out = d[..axis].to_vec();
                    out.extend(std::iter::repeat_n(dim(1), d.len() - axis));
                    Some(out)
                });
                for _ in 1..ctx.node.outputs.len() {
                    out.types.push(Some(tensor_of(stash, dims.clone())));
                }
            }
            Some(out)
        },
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => |ctx| {
            let dims = ctx.dims(0).filter(|d| d.len() >= 2).map(|d| {
                let mut out = d[..2].to_vec();
                out.extend(std::iter::repeat_n(dim(1), d.len() - 2));
                out
            });
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        "GatherElements" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(0), ctx.dims(1).map(<[_]>::to_vec)))),
        "QuantizeLinear" => |ctx| {
            let elem = match ctx.int("output_dtype").filter(|&t| t != 0) {
                Some(t) => i32::try_from(t).ok(),
                None if ctx.has_input(2) => ctx.elem(2),
                None => Some(DataType::Uint8 as i32),
            };
            Some(Outputs::one(tensor_of(elem, ctx.dims(0).map(<[_]>::to_vec))))
        },
        "DequantizeLinear" => |ctx| {
            let elem = match ctx.int("output_dtype").filter(|&t| t != 0) {
                Some(t) => i32::try_from(t).ok(),
                None if ctx.opset >= 19 => ctx.elem(1),
                None => Some(DataType::Float as i32),
            };
            Some(Outputs::one(tensor_of(elem, ctx.dims(0).map(<[_]>::to_vec))))
        },
        "TopK" => |ctx| {
            let dims = ctx.dims(0).and_then(|d| {
                let axis = normalize_axis(ctx.int("axis").unwrap_or(-1), d.len())?;
                let k = if ctx.opset >= 10 {
                    ctx.value(1).and_then(Known::ints).and_then(|k| k.first().copied())
                } else {
                    ctx.int("k")
                };
                let mut out = d.to_vec();
                out[axis] = k.map_or_else(unknown_dim, dim);
                Some(out)
            });
            let mut out = Outputs::one(tensor_of(ctx.elem(0), dims.clone()));
            out.types.push(Some(tensor_of(Some(DataType::Int64 as i32), dims)));
            Some(out)
        },
        "SoftmaxCrossEntropyLoss" | "NegativeLogLikelihoodLoss" => |ctx| {
            let none = ctx.node.attribute("reduction").and_then(|a| a.s.as_ref()).is_some_and(|s| s == "none");
            let loss = if none { ctx.dims(1).map(<[_]>::to_vec) } else { Some(Vec::new()) };
            let mut out = Outputs::one(tensor_of(ctx.elem(0), loss));
            if ctx.node.outputs.len() > 1 {
                out.types.push(ctx.input_type(0).cloned());
            }
            Some(out)
        },
        "Conv" | "MaxPool" | "AveragePool" | "LpPool" | "ConvInteger" | "QLinearConv" | "DeformConv" => {
            |ctx| Some(window(ctx.op(), ctx))
        }
        "ConvTranspose" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(0), conv_transpose(ctx)))),
        // Quantized A at input 0, B at input 3; the result's type is its zero point's.
        "QLinearMatMul" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(7), matmul(ctx.dims(0), ctx.dims(3))))),
        "Pad" => |ctx| {
            let pads =
                if ctx.opset >= 11 { ctx.value(1).and_then(Known::ints) } else { ctx.ints("pads").map(<[_]>::to_vec) };
            // onnx's inference gives no shape at all (not even the rank) beside an axes
            // input of known shape whose values it cannot read.
            if ctx.as_onnx() && ctx.has_input(3) && ctx.dims(3).is_some() && ctx.value(3).is_none() {
                return Some(Outputs::one(tensor_of(ctx.elem(0), None)));
            }
            let dims = ctx.dims(0).map(|d| match &pads {
                Some(p) if p.len() == 2 * d.len() && !ctx.has_input(3) => d
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let sum = known_dim(x)
                            .and_then(|v| narrow(i128::from(v) + i128::from(p[i]) + i128::from(p[i + d.len()])));
                        sum.map_or_else(unknown_dim, dim)
                    })
                    .collect(),
                _ => vec![unknown_dim(); d.len()],
            });
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        _ => return None,
    };
    Some(rule)
}

pub(super) fn matmul(a: Option<&[Dimension]>, b: Option<&[Dimension]>) -> Option<Vec<Dimension>> {
    let (a, b) = (a?, b?);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let a2: Vec<Dimension> = if a.len() == 1 { vec![dim(1), a[0].clone()] } else { a.to_vec() };
    let b2: Vec<Dimension> = if b.len() == 1 { vec![b[0].clone(), dim(1)] } else { b.to_vec() };
    let batch = broadcast(&[&a2[..a2.len() - 2], &b2[..b2.len() - 2]])?;
    let mut out = batch;
    if a.len() > 1 {
        out.push(a2[a2.len() - 2].clone());
    }
    if b.len() > 1 {
        out.push(b2[b2.len() - 1].clone());
    }
    Some(out)
}

/// Gemm's output `[M, N]`, as each version of onnx's inference gives it: from version 13
/// always of rank 2, M read from A and N from B wherever either has its shape; versions 7
/// to 11 only with both shapes; version 6 with both, or else C's shape when C is not
/// broadcast; version 1 infers no shape.
fn gemm(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let matrix = |i: usize| ctx.dims(i).filter(|d| d.len() == 2);
    let (a, b) = (matrix(0), matrix(1));
    let m = a.map(|a| if ctx.int("transA").unwrap_or(0) != 0 { a[1].clone() } else { a[0].clone() });
    let n = b.map(|b| if ctx.int("transB").unwrap_or(0) != 0 { b[0].clone() } else { b[1].clone() });
    match ctx.opset {
        13.. => Some(vec![m.unwrap_or_else(unknown_dim), n.unwrap_or_else(unknown_dim)]),
        7.. => Some(vec![m?, n?]),
        6 if ctx.dims(0).is_some() && ctx.dims(1).is_some() => Some(vec![m?, n?]),
        6 if ctx.int("broadcast").unwrap_or(0) == 0 => ctx.dims(2).map(<[_]>::to_vec),
        _ => None,
    }
}

fn reduced(d: &[Dimension], axes: &[usize], keep: bool) -> Vec<Dimension> {
    d.iter()
        .enumerate()
        .filter_map(|(i, x)| if axes.contains(&i) { keep.then(|| dim(1)) } else { Some(x.clone()) })
        .collect()
}

/// Whether onnx's reduction `op` at `version` (its schema version, or the opset that
/// selects it: both give the same answer) checks its axes attribute's range. Version 1 of
/// each, and ReduceMax-11 and ReduceMin-11 (written like version 1), do not: onnx and
/// onnxruntime's loader accept any axes there.
pub(in crate::infer) fn reduction_checks_axis_range(op: &str, version: i64) -> bool {
    version > 11 || (version == 11 && !matches!(op, "ReduceMax" | "ReduceMin"))
}

fn reduce(op: &str, ctx: &Ctx<'_, '_>) -> Outputs {
    // As onnx: only 1 keeps the axes (any other value drops them).
    let keep = ctx.int("keepdims").unwrap_or(1) == 1;
    let axes_from_input = (op == "ReduceSum" && ctx.opset >= 13) || ctx.opset >= 18;
    let unranged = !reduction_checks_axis_range(op, ctx.opset);
    let axes: Option<Option<Vec<i64>>> = if axes_from_input {
        if ctx.has_input(1) { ctx.value(1).and_then(Known::ints).map(Some) } else { Some(None) }
    } else {
        Some(ctx.ints("axes").map(<[_]>::to_vec))
    };
    let dims = ctx.dims(0).and_then(|d| match axes? {
        // Version 1, ReduceMax-11 and ReduceMin-11 reduce the axes in range and pass over the
        // rest (as onnx; validate/nn.rs judges no range there); later versions need every one.
        Some(axes) if !axes.is_empty() && unranged => {
            let axes: Vec<usize> = axes.iter().filter_map(|&a| normalize_axis(a, d.len())).collect();
            Some(reduced(d, &axes, keep))
        }
        Some(axes) if !axes.is_empty() => {
            let axes: Vec<usize> = axes.iter().map(|&a| normalize_axis(a, d.len())).collect::<Option<_>>()?;
            Some(reduced(d, &axes, keep))
        }
        _ if ctx.int("noop_with_empty_axes").unwrap_or(0) != 0 => Some(d.to_vec()),
        _ => Some(reduced(d, &(0..d.len()).collect::<Vec<_>>(), keep)),
    });
    Outputs::one(tensor_of(ctx.elem(0), dims))
}

/// Convolution and pooling: spatial dims from kernel, strides, pads, dilations, auto_pad.
fn window(op: &str, ctx: &Ctx<'_, '_>) -> Outputs {
    let elem = match op {
        "ConvInteger" => Some(DataType::Int32 as i32),
        "QLinearConv" => ctx.elem(7),
        _ => ctx.elem(0),
    };
    let is_conv = !op.ends_with("Pool");
    let w = if is_conv { ctx.dims(if op == "QLinearConv" { 3 } else { 1 }) } else { None };
    let dims = ctx.dims(0).and_then(|x| window_dims(ctx, is_conv, x, w));
    let mut out = Outputs::one(tensor_of(elem, dims.clone()));
    if op == "MaxPool" && ctx.node.outputs.len() > 1 {
        out.types.push(Some(tensor_of(Some(DataType::Int64 as i32), dims)));
    }
    out
}

/// The output dims of a convolution (`is_conv`, weights `w` `[M, C/group, k…]`) or pooling
/// of an input `x` `[N, C, spatial…]` (channels first), from the node's kernel, strides,
/// pads, dilations and auto_pad.
pub(in crate::infer) fn window_dims(
    ctx: &Ctx<'_, '_>,
    is_conv: bool,
    x: &[Dimension],
    w: Option<&[Dimension]>,
) -> Option<Vec<Dimension>> {
    (x.len() >= 3).then(|| {
        let spatial = x.len() - 2;
        let kernel: Option<Vec<i64>> = match ctx.ints("kernel_shape") {
            Some(k) => Some(k.to_vec()),
            None => w.filter(|w| w.len() == x.len()).and_then(|w| w[2..].iter().map(known_dim).collect()),
        };
        let channels = if is_conv { w.and_then(|w| w.first().cloned()).unwrap_or_default() } else { x[1].clone() };
        let mut out = vec![x[0].clone(), channels];
        let strides = ctx.ints("strides").map_or_else(|| vec![1; spatial], <[_]>::to_vec);
        let dilations = ctx.ints("dilations").map_or_else(|| vec![1; spatial], <[_]>::to_vec);
        let pads = ctx.ints("pads").map_or_else(|| vec![0; 2 * spatial], <[_]>::to_vec);
        // As onnx: explicit pads win; auto_pad only says how to pad when none are given.
        let auto_pad = ctx
            .node
            .attribute("auto_pad")
            .and_then(|a| a.s.as_ref())
            .and_then(|s| s.as_str())
            .filter(|_| ctx.ints("pads").is_none())
            .unwrap_or("NOTSET")
            .to_owned();
        let ceil = ctx.int("ceil_mode").unwrap_or(0) != 0;
        for i in 0..spatial {
            let size = known_dim(&x[i + 2]);
            // In i128: sizes and attributes come from the model and may be huge.
            let computed = (|| {
                let size = i128::from(size?);
                let k = i128::from(*kernel.as_ref()?.get(i)?);
                let (s, d) = (i128::from(*strides.get(i)?), i128::from(*dilations.get(i)?));
                if s <= 0 {
                    return None;
                }
                let found = match auto_pad.as_str() {
                    "SAME_UPPER" | "SAME_LOWER" => Some((size + s - 1) / s),
                    "VALID" => Some((size - ((k - 1) * d + 1)) / s + 1),
                    _ => {
                        let begin = i128::from(*pads.get(i)?);
                        let padded = size + begin + i128::from(*pads.get(i + spatial)?) - ((k - 1) * d + 1);
                        if !ceil {
                            return narrow(padded / s + 1).filter(|&d| d >= 0);
                        }
                        // Rounding up may add a window that starts in the end padding; as in
                        // onnx (and PyTorch), the last window must start inside the input or
                        // the begin padding.
                        // Division toward zero already rounds a negative quotient up.
                        let mut moves = if padded > 0 { (padded + s - 1) / s } else { padded / s };
                        if moves * s >= size + begin {
                            moves -= 1;
                        }
                        Some(moves + 1)
                    }
                };
                // A negative count is an error the kernel reports; here it stays unknown.
                narrow(found?).filter(|&d| d >= 0)
            })();
            out.push(computed.map_or_else(unknown_dim, dim));
        }
        out
    })
}

/// ConvTranspose: `output_shape` when given, else per spatial axis
/// `stride·(in−1) + output_padding + ((k−1)·dilation+1) − pads`, where SAME auto-padding
/// pads by the effective kernel minus the stride.
fn conv_transpose(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let (x, w) = (ctx.dims(0)?, ctx.dims(1)?);
    let spatial = x.len().checked_sub(2).filter(|&n| n > 0)?;
    let group = ctx.int("group").unwrap_or(1);
    let channels = w.get(1).and_then(known_dim).and_then(|c| c.checked_mul(group)).map_or_else(unknown_dim, dim);
    let mut out = vec![x[0].clone(), channels];
    if let Some(shape) = ctx.ints("output_shape") {
        out.extend(shape.iter().map(|&d| dim(d)));
        return Some(out);
    }
    let kernel: Vec<i64> = match ctx.ints("kernel_shape") {
        Some(k) => k.to_vec(),
        None => w.get(2..)?.iter().map(known_dim).collect::<Option<_>>()?,
    };
    let ones = vec![1; spatial];
    let strides = ctx.ints("strides").unwrap_or(&ones);
    let dilations = ctx.ints("dilations").unwrap_or(&ones);
    let zeros = vec![0; spatial];
    let output_padding = ctx.ints("output_padding").unwrap_or(&zeros);
    let effective: Vec<i64> = (0..spatial)
        .map(|i| narrow((i128::from(*kernel.get(i)?) - 1) * i128::from(*dilations.get(i)?) + 1))
        .collect::<Option<_>>()?;
    let pads: Vec<i64> = match ctx.ints("pads") {
        Some(p) => p.to_vec(),
        None => {
            let mut pads = vec![0; 2 * spatial];
            let auto_pad = ctx.string("auto_pad").unwrap_or("NOTSET");
            if auto_pad.starts_with("SAME") {
                for i in 0..spatial {
                    let total = effective[i].saturating_sub(*strides.get(i)?).max(0);
                    let (small, big) = (total / 2, total - total / 2);
                    let upper = auto_pad == "SAME_UPPER";
                    pads[i] = if upper { small } else { big };
                    pads[i + spatial] = if upper { big } else { small };
                }
            }
            pads
        }
    };
    for (i, kernel) in effective.iter().enumerate() {
        let size = (|| {
            let n = i128::from(known_dim(x.get(i + 2)?)?);
            let wide = |v: Option<&i64>| v.copied().map(i128::from);
            narrow(
                wide(strides.get(i))? * (n - 1) + wide(output_padding.get(i))? + i128::from(*kernel)
                    - wide(pads.get(i))?
                    - wide(pads.get(i + spatial))?,
            )
        })();
        out.push(size.map_or_else(unknown_dim, dim));
    }
    Some(out)
}
