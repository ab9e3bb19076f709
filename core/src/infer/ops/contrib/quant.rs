//! onnxruntime's quantized operators (QLinearAdd, QLinearConcat, QGemm, DynamicQuantizeLSTM,
//! MatMulNBits, …): the shapes onnxruntime's kernels give their outputs, the element types
//! its schemas bind.

use super::super::{Ctx, Outputs, Rule};
use crate::infer::broadcast::broadcast;
use crate::infer::types::{dim, known_dim, unknown_dim};
use crate::infer::types::{normalize_axis, tensor_of};
use crate::ir::{DataType, Dimension};

const FLOAT: i32 = DataType::Float as i32;

pub fn rule(op: &str) -> Option<Rule> {
    let r: Rule = match op {
        "QLinearSigmoid" | "QLinearLeakyRelu" | "QLinearSoftmax" => like_input,
        "QLinearAdd" | "QLinearMul" => |ctx| {
            let dims = broadcast(&[ctx.dims(0)?, ctx.dims(3)?]);
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        "QLinearConcat" => qlinear_concat,
        // onnxruntime's own Q/DQ: onnx's shapes; the zero point's type (uint8 without one),
        // the scale's type back.
        "QuantizeLinear" => |ctx| {
            let elem = if ctx.has_input(2) { ctx.elem(2) } else { Some(DataType::Uint8 as i32) };
            Some(Outputs::one(tensor_of(elem, ctx.dims(0).map(<[_]>::to_vec))))
        },
        "DequantizeLinear" => |ctx| Some(Outputs::one(tensor_of(ctx.elem(1), ctx.dims(0).map(<[_]>::to_vec)))),
        "QLinearGlobalAveragePool" => |ctx| {
            let last = ctx.int("channels_last").unwrap_or(0) != 0;
            let dims = ctx.dims(0).filter(|d| d.len() >= 3).map(|d| {
                let spatial = if last { 1..d.len() - 1 } else { 2..d.len() };
                d.iter().enumerate().map(|(i, x)| if spatial.contains(&i) { dim(1) } else { x.clone() }).collect()
            });
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        "QGemm" => |ctx| {
            let matrix = |i: usize| ctx.dims(i).filter(|d| d.len() == 2);
            let m = matrix(0).map(|a| if ctx.int("transA").unwrap_or(0) != 0 { a[1].clone() } else { a[0].clone() });
            let n = matrix(3).map(|b| if ctx.int("transB").unwrap_or(0) != 0 { b[0].clone() } else { b[1].clone() });
            // Quantized when y_zero_point is given, float otherwise.
            let elem = if ctx.has_input(8) { ctx.elem(8) } else { Some(FLOAT) };
            Some(Outputs::one(tensor_of(
                elem,
                Some(vec![m.unwrap_or_else(unknown_dim), n.unwrap_or_else(unknown_dim)]),
            )))
        },
        "DynamicQuantizeMatMul" | "MatMulIntegerToFloat" => |ctx| {
            let elem = if ctx.op() == "MatMulIntegerToFloat" { ctx.elem(2) } else { ctx.elem(0) };
            Some(Outputs::one(tensor_of(elem, super::super::nn::matmul(ctx.dims(0), ctx.dims(1)))))
        },
        "DynamicQuantizeLSTM" => lstm,
        "QLinearAveragePool" => average_pool,
        "GatherBlockQuantized" => gather_block_quantized,
        "MatMulNBits" => |ctx| {
            let n = ctx.int("N").map_or_else(unknown_dim, dim);
            let dims = ctx.dims(0).filter(|d| !d.is_empty()).map(|d| {
                let mut out = d.to_vec();
                if let Some(last) = out.last_mut() {
                    *last = n.clone();
                }
                out
            });
            Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
        },
        _ => return None,
    };
    Some(r)
}

/// The type of input 0.
fn like_input(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    Some(Outputs::one(ctx.input_type(0)?.clone()))
}

/// QLinearConcat: inputs 2, 5, 8, … joined along `axis`, of the type of y_zero_point.
fn qlinear_concat(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let tensors: Vec<usize> = (2..ctx.node.inputs.len()).step_by(3).collect();
    let elem = ctx.elem(1).or_else(|| tensors.iter().find_map(|&i| ctx.elem(i)));
    let shapes: Option<Vec<&[Dimension]>> = tensors.iter().map(|&i| ctx.dims(i)).collect();
    let dims = shapes.and_then(|shapes| {
        let first = *shapes.first()?;
        let axis = normalize_axis(ctx.int("axis")?, first.len())?;
        let mut out = first.to_vec();
        let mut total = Some(0i64);
        for s in &shapes {
            if s.len() != first.len() {
                return None;
            }
            total = total.and_then(|t| known_dim(&s[axis]).and_then(|v| t.checked_add(v)));
            for (i, d) in s.iter().enumerate() {
                if i != axis && out[i].value.is_none() {
                    out[i] = d.clone();
                }
            }
        }
        out[axis] = total.map_or_else(unknown_dim, dim);
        Some(out)
    });
    Some(Outputs::one(tensor_of(elem, dims)))
}

/// DynamicQuantizeLSTM: Y `[seq, directions, batch, hidden]`, Y_h and Y_c
/// `[directions, batch, hidden]`, of X's type.
fn lstm(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let directions = if ctx.string("direction") == Some("bidirectional") { 2 } else { 1 };
    let hidden = ctx.int("hidden_size").map_or_else(unknown_dim, dim);
    let x = ctx.dims(0).filter(|d| d.len() == 3);
    let (seq, batch) = x.map_or((unknown_dim(), unknown_dim()), |x| (x[0].clone(), x[1].clone()));
    let elem = ctx.elem(0);
    let mut out = Outputs::one(tensor_of(elem, Some(vec![seq, dim(directions), batch.clone(), hidden.clone()])));
    for _ in 1..ctx.node.outputs.len().min(3) {
        out.types.push(Some(tensor_of(elem, Some(vec![dim(directions), batch.clone(), hidden.clone()]))));
    }
    Some(out)
}

/// QLinearAveragePool: batch and channels kept (channels last when `channels_last`), each
/// spatial size from the kernel, strides, explicit pads and `ceil_mode` (onnxruntime's
/// output size; other `auto_pad` modes leave those dims unknown).
fn average_pool(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let last = ctx.int("channels_last").unwrap_or(0) != 0;
    let dims = ctx.dims(0).filter(|d| d.len() >= 3).map(|d| {
        let rank = d.len() - 2;
        let offset = if last { 1 } else { 2 };
        let kernel = ctx.ints("kernel_shape").filter(|k| k.len() == rank);
        let strides = ctx.ints("strides");
        let pads = ctx.ints("pads");
        let explicit = matches!(ctx.string("auto_pad").unwrap_or("NOTSET"), "NOTSET" | "VALID");
        let valid = ctx.string("auto_pad") == Some("VALID");
        let ceil = ctx.int("ceil_mode").unwrap_or(0) != 0;
        let mut out = d.to_vec();
        for a in 0..rank {
            let size = known_dim(&d[offset + a]).filter(|_| explicit).and_then(|input| {
                let k = kernel?[a];
                let s = strides.map_or(Some(1), |s| s.get(a).copied())?;
                let (p0, p1) =
                    if valid { (0, 0) } else { pads.map_or(Some((0, 0)), |p| Some((*p.get(a)?, *p.get(a + rank)?)))? };
                let steps = input + p0 + p1 - k;
                if steps < 0 || s <= 0 || k <= 0 {
                    return None;
                }
                let mut o = if ceil { (steps + s - 1) / s } else { steps / s } + 1;
                if ceil && (o - 1) * s >= input + p0 {
                    o -= 1;
                }
                Some(o)
            });
            out[offset + a] = size.map_or_else(unknown_dim, dim);
        }
        out
    });
    Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
}

/// GatherBlockQuantized: Gather's shape (indices' dims in place of the gather axis), of the
/// scales' type; uint8 data packs `8/bits` values per byte of its last axis.
fn gather_block_quantized(ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let elem = ctx.elem(2);
    let dims = match (ctx.dims(0), ctx.dims(1)) {
        (Some(data), Some(indices)) => normalize_axis(ctx.int("gather_axis").unwrap_or(0), data.len()).map(|g| {
            let mut logical = data.to_vec();
            let per = 8 / ctx.int("bits").unwrap_or(4).clamp(1, 8);
            if ctx.elem(0) == Some(DataType::Uint8 as i32)
                && per > 1
                && let Some(last) = logical.last_mut()
            {
                *last = known_dim(last).and_then(|n| n.checked_mul(per)).map_or_else(unknown_dim, dim);
            }
            let mut out = logical[..g].to_vec();
            out.extend(indices.iter().cloned());
            out.extend(logical[g + 1..].iter().cloned());
            out
        }),
        _ => None,
    };
    Some(Outputs::one(tensor_of(elem, dims)))
}
