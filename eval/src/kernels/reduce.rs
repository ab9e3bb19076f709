//! Reductions over axes (ReduceSum … ReduceLogSumExp), ArgMax/ArgMin, Softmax and its kin.
//! Sums are accumulated in f64 and rounded once to the element type.

use onnx_core::ir::DataType;

use super::{Ctx, Kernel, axis, count, input, input_axis, one, optional};
use crate::error::{KernelError, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce,
        "ArgMax" | "ArgMin" => arg,
        "Softmax" | "LogSoftmax" | "Hardmax" => softmax,
        _ => return None,
    };
    Some(k)
}

/// The axes a reduction runs over (sorted, deduplicated), `None` for a no-op.
fn reduced_axes(ctx: &Ctx<'_>, inputs: &[Option<&Value>], rank: usize) -> Result<Option<Vec<usize>>, KernelError> {
    // From opset 18 (13 for ReduceSum) the axes are an input.
    let from_input = ctx.opset >= 18 || (ctx.op() == "ReduceSum" && ctx.opset >= 13);
    let axes = if from_input {
        optional(inputs, 1)?.map(Tensor::to_i64s).transpose()?
    } else {
        ctx.ints("axes").map(<[i64]>::to_vec)
    };
    match axes {
        Some(a) if !a.is_empty() => {
            let in_range = |x| if from_input { input_axis(x, rank) } else { axis(x, rank) };
            let mut a = a.iter().map(|&x| in_range(x)).collect::<Result<Vec<_>, _>>()?;
            a.sort_unstable();
            a.dedup();
            Ok(Some(a))
        }
        _ if from_input && ctx.int("noop_with_empty_axes").unwrap_or(0) != 0 => Ok(None),
        _ => Ok(Some((0..rank).collect())),
    }
}

fn reduce(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let Some(axes) = reduced_axes(ctx, inputs, t.rank())? else { return one(t.clone()) };
    let keep = ctx.int("keepdims").unwrap_or(1) != 0;
    let values = t.to_f64s()?;
    let out_shape_kept: Vec<usize> =
        t.shape.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect();
    let out_count = count(&out_shape_kept)?;
    // Reducing an empty axis gives values: the other axes of an empty input may be large.
    ctx.check_grown(out_count, values.len())?;
    let strides = crate::broadcast::strides(&t.shape);
    let out_strides = crate::broadcast::strides(&out_shape_kept);
    let op = ctx.op();
    let empty_reduction = axes.iter().any(|&a| t.shape[a] == 0);
    let start = match op {
        "ReduceMax" => f64::NEG_INFINITY,
        "ReduceMin" => f64::INFINITY,
        "ReduceProd" => 1.0,
        _ => 0.0,
    };
    let mut acc = vec![start; out_count];
    // For LogSumExp: the maximum of each group first, for a stable sum.
    let mut max = vec![f64::NEG_INFINITY; out_count];
    let target = |i: usize| -> usize {
        (0..t.rank())
            .map(|a| if axes.contains(&a) { 0 } else { ((i / strides[a]) % t.shape[a]) * out_strides[a] })
            .sum()
    };
    let targets: Vec<usize> = (0..values.len()).map(target).collect();
    if op == "ReduceLogSumExp" {
        for (&v, &o) in values.iter().zip(&targets) {
            max[o] = max[o].max(v);
        }
    }
    for (&v, &o) in values.iter().zip(&targets) {
        let a = &mut acc[o];
        match op {
            "ReduceMax" => *a = if v.is_nan() || *a < v { v } else { *a },
            "ReduceMin" => *a = if v.is_nan() || *a > v { v } else { *a },
            "ReduceProd" => *a *= v,
            "ReduceL1" => *a += v.abs(),
            "ReduceL2" | "ReduceSumSquare" => *a += v * v,
            "ReduceLogSumExp" => *a += (v - max[o]).exp(),
            _ => *a += v,
        }
    }
    let per_group = values.len().checked_div(out_count).unwrap_or(0);
    for (o, a) in acc.iter_mut().enumerate() {
        *a = match op {
            "ReduceMean" => *a / per_group as f64,
            "ReduceL2" => a.sqrt(),
            "ReduceLogSum" => a.ln(),
            "ReduceLogSumExp" if max[o].is_finite() => a.ln() + max[o],
            "ReduceLogSumExp" => max[o],
            _ => *a,
        };
    }
    let boolean = t.data_type() == onnx_core::ir::DataType::Bool;
    if empty_reduction
        && matches!(op, "ReduceMax" | "ReduceMin")
        && !boolean
        && !t.data_type().name().starts_with("float")
        && t.data_type().name() != "double"
    {
        return Err(bad_input!("reducing an empty axis of integers has no value"));
    }
    let shape = if keep {
        out_shape_kept
    } else {
        t.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect()
    };
    if boolean {
        // Booleans reduce as 0 and 1 (an empty maximum is false, an empty minimum true).
        return one(Tensor::new(shape, crate::value::Data::Bool(acc.iter().map(|&v| v > 0.5).collect())));
    }
    one(numeric_like(t.data_type(), shape, acc)?)
}

fn arg(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let a = axis(ctx.int("axis").unwrap_or(0), t.rank())?;
    let keep = ctx.int("keepdims").unwrap_or(1) != 0;
    let last = ctx.int("select_last_index").unwrap_or(0) != 0;
    let max = ctx.op() == "ArgMax";
    let values = t.to_f64s()?;
    let (outer, n, inner) = (count(&t.shape[..a])?, t.shape[a], count(&t.shape[a + 1..])?);
    if n == 0 {
        return Err(bad_input!("the axis is empty"));
    }
    let mut out = Vec::with_capacity(values.len() / n);
    // An empty input (another axis of size 0) may declare any number of rows.
    let outer = if values.is_empty() { 0 } else { outer };
    for o in 0..outer {
        for i in 0..inner {
            let mut best = 0usize;
            for k in 1..n {
                let (v, b) = (values[(o * n + k) * inner + i], values[(o * n + best) * inner + i]);
                let better = if max { v > b || (last && v == b) } else { v < b || (last && v == b) };
                if better {
                    best = k;
                }
            }
            out.push(best as i64);
        }
    }
    let mut shape = t.shape.clone();
    if keep {
        shape[a] = 1;
    } else {
        shape.remove(a);
    }
    one(Tensor::new(shape, Data::I64(out.into())))
}

/// Softmax, LogSoftmax, Hardmax: over one axis from opset 13, over the flattened trailing
/// axes (from `axis`, default 1) before.
fn softmax(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let modern = ctx.opset >= 13;
    let a = axis(ctx.int("axis").unwrap_or(if modern { -1 } else { 1 }), t.rank().max(1))?;
    let (outer, n, inner) = if modern {
        (count(&t.shape[..a])?, *t.shape.get(a).unwrap_or(&1), count(&t.shape[(a + 1).min(t.rank())..])?)
    } else {
        (count(&t.shape[..a])?, count(&t.shape[a..])?, 1)
    };
    let op = ctx.op();
    if let Data::F32(x) = &*t.data
        && inner == 1
        && n > 0
        && op != "Hardmax"
    {
        return one(Tensor::new(t.shape.clone(), Data::F32(softmax_rows_f32(x, n, op == "LogSoftmax").into())));
    }
    let mut v = t.to_f64s()?;
    let half = Some(t.data_type()).filter(|d| matches!(d, DataType::Bfloat16 | DataType::Float16));
    // An empty input may declare any number of rows: nothing to compute.
    let outer = if v.is_empty() { 0 } else { outer };
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let max = (0..n).map(|k| v[at(k)]).fold(f64::NEG_INFINITY, f64::max);
            if op == "Hardmax" {
                let first = (0..n).find(|&k| v[at(k)] == max);
                for k in 0..n {
                    v[at(k)] = if Some(k) == first { 1.0 } else { 0.0 };
                }
                continue;
            }
            // The 16-bit floats as numpy computes them: every step rounded to the type; a
            // bfloat16 row (ml_dtypes) summed one element at a time in bfloat16, a float16
            // row in float32, rounded once. Other types: f64, rounded once at the end.
            let r = match half {
                Some(dt) => crate::kernels::common::rounding(dt),
                None => |x| x,
            };
            let sum = if half == Some(DataType::Float16) {
                r((0..n).fold(0.0f32, |acc, k| acc + r(r(v[at(k)] - max).exp()) as f32).into())
            } else {
                (0..n).fold(0.0, |acc, k| r(acc + r(r(v[at(k)] - max).exp())))
            };
            for k in 0..n {
                let x = r(v[at(k)] - max);
                v[at(k)] = if op == "LogSoftmax" { x - sum.ln() } else { r(x.exp()) / sum };
            }
        }
    }
    one(numeric_like(t.data_type(), t.shape.clone(), v)?)
}

/// Softmax (or LogSoftmax) of each run of `n` float32 values, in float32 as numpy computes
/// onnx's reference (`exp(x - max) / sum`), with the vectorized exp and the sum kept in
/// eight lanes (which vectorizes too; a single running sum cannot be reordered).
fn softmax_rows_f32(x: &[f32], n: usize, log: bool) -> Vec<f32> {
    crate::simd::widest(
        #[inline(always)]
        || softmax_rows_f32_here(x, n, log),
    )
}

/// See [`softmax_rows_f32`].
#[inline(always)]
fn softmax_rows_f32_here(x: &[f32], n: usize, log: bool) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    for (row, y) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        // The maximum in eight lanes too: one running maximum waits on each comparison
        // (on 64-wide attention rows it took most of the time).
        let mut highs = [f32::NEG_INFINITY; 8];
        let mut chunks = row.chunks_exact(8);
        for c in &mut chunks {
            for (h, &v) in highs.iter_mut().zip(c) {
                *h = h.max(v);
            }
        }
        let max = highs.iter().chain(chunks.remainder()).copied().fold(f32::NEG_INFINITY, f32::max);
        for (&v, e) in row.iter().zip(y.iter_mut()) {
            *e = crate::math::exp(v - max);
        }
        let mut lanes = [0.0f32; 8];
        let mut chunks = y.chunks_exact(8);
        for c in &mut chunks {
            for (l, &e) in lanes.iter_mut().zip(c) {
                *l += e;
            }
        }
        let sum = lanes.iter().chain(chunks.remainder()).map(|&e| f64::from(e)).sum::<f64>();
        if log {
            let log_sum = sum.ln() as f32;
            for (&v, e) in row.iter().zip(y.iter_mut()) {
                *e = v - max - log_sum;
            }
        } else {
            let sum = sum as f32;
            for e in y.iter_mut() {
                *e /= sum;
            }
        }
    }
    out
}
