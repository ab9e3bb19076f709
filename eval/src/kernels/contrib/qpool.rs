//! QLinearAveragePool as onnxruntime's CPU kernel computes it: each element dequantized
//! (`x_scale·(x − x_zero)` in float32), the window summed in float32 row by row (windows
//! clipped to the input; `count_include_pad` divides by the whole kernel), the average
//! quantized with `nearbyint(y / y_scale + y_zero)`. NCHW or NHWC (`channels_last`).

use super::super::{Ctx, Kernel, input, one};
use super::quant::{PoolOperands, bounds, byte_tensor, pool_operands};
use crate::error::{KernelError, bad_attribute, bad_input, unsupported};
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "QLinearAveragePool" => average_pool,
        _ => return None,
    };
    Some(k)
}

fn ints(ctx: &Ctx<'_>, name: &str, len: usize, default: i64) -> Result<Vec<usize>, KernelError> {
    let v = ctx.ints(name).map_or_else(|| vec![default; len], <[i64]>::to_vec);
    if v.len() != len || v.iter().any(|&x| x < 0) {
        return Err(bad_attribute!("{name} must hold {len} values of at least 0"));
    }
    Ok(v.into_iter().map(|x| x as usize).collect())
}

fn average_pool(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let PoolOperands { values: v, signed, x_scale: xs, x_zero: xz, y_scale: ys, y_zero: yz, last, n, c, spatial } =
        pool_operands(ctx, inputs)?;
    let rank = x.rank() - 2;
    let spatial: Vec<usize> = x.shape[spatial].to_vec();
    match ctx.string("auto_pad").unwrap_or("NOTSET") {
        "NOTSET" | "VALID" => {}
        other => return Err(unsupported!("QLinearAveragePool with auto_pad {other}")),
    }
    if ctx.ints("dilations").is_some_and(|d| d.iter().any(|&d| d != 1)) {
        return Err(unsupported!("QLinearAveragePool with dilations"));
    }
    let kernel = ints(ctx, "kernel_shape", rank, 0)?;
    if ctx.ints("kernel_shape").is_none() || kernel.contains(&0) {
        return Err(bad_attribute!("kernel_shape must hold {rank} positive sizes"));
    }
    let strides = ints(ctx, "strides", rank, 1)?;
    if strides.contains(&0) {
        return Err(bad_attribute!("strides must be positive"));
    }
    let pads =
        if ctx.string("auto_pad") == Some("VALID") { vec![0; 2 * rank] } else { ints(ctx, "pads", 2 * rank, 0)? };
    let ceil = ctx.int("ceil_mode").unwrap_or(0) != 0;
    let include_pad = ctx.int("count_include_pad").unwrap_or(0) != 0;
    let mut out_sp = Vec::with_capacity(rank);
    for a in 0..rank {
        let span = spatial[a] + pads[a] + pads[a + rank];
        if span < kernel[a] {
            return Err(bad_input!("axis {a}: a kernel of {} is wider than the padded input ({span})", kernel[a]));
        }
        let steps = span - kernel[a];
        let mut o = if ceil { steps.div_ceil(strides[a]) } else { steps / strides[a] } + 1;
        // onnxruntime's ceil mode drops a last window that starts in the end padding.
        if ceil && (o - 1) * strides[a] >= spatial[a] + pads[a] {
            o -= 1;
        }
        out_sp.push(o);
    }
    let in_size: usize = spatial.iter().product();
    let out_size: usize = out_sp.iter().product();
    ctx.check_elements(n * c * out_size)?;
    let (lo, hi) = bounds(signed);
    let deq: Vec<f32> = v.iter().map(|&q| xs * (q - xz) as f32).collect();
    // Element (b, ch, position) of X, in either layout.
    let at = |b: usize, ch: usize, p: usize| {
        if last { deq[(b * in_size + p) * c + ch] } else { deq[(b * c + ch) * in_size + p] }
    };
    let mut out = vec![0i32; n * c * out_size];
    let mut pos = vec![0usize; rank];
    for o in 0..out_size {
        // The window along each axis, clipped to the input.
        let mut rem = o;
        for a in (0..rank).rev() {
            pos[a] = rem % out_sp[a];
            rem /= out_sp[a];
        }
        let ranges: Vec<(usize, usize)> = (0..rank)
            .map(|a| {
                let start = (pos[a] * strides[a]) as i64 - pads[a] as i64;
                let end = (start + kernel[a] as i64).min(spatial[a] as i64);
                (start.max(0) as usize, end.max(0) as usize)
            })
            .collect();
        let count = if include_pad {
            kernel.iter().product::<usize>()
        } else {
            ranges.iter().map(|(s, e)| e.saturating_sub(*s)).product()
        };
        let taps: usize = ranges.iter().map(|(s, e)| e.saturating_sub(*s)).product();
        for b in 0..n {
            for ch in 0..c {
                let mut sum = 0f32;
                for t in 0..taps {
                    let (mut rem, mut p, mut stride) = (t, 0, 1);
                    for a in (0..rank).rev() {
                        let len = ranges[a].1 - ranges[a].0;
                        p += (ranges[a].0 + rem % len) * stride;
                        rem /= len;
                        stride *= spatial[a];
                    }
                    sum += at(b, ch, p);
                }
                let avg = sum / count as f32;
                let q = (avg / ys + yz as f32).round_ties_even();
                let q = if q.is_nan() { 0 } else { (q as i32).clamp(lo, hi) };
                let idx = if last { (b * out_size + o) * c + ch } else { (b * c + ch) * out_size + o };
                out[idx] = q;
            }
        }
    }
    let mut shape = vec![n];
    if !last {
        shape.push(c);
    }
    shape.extend_from_slice(&out_sp);
    if last {
        shape.push(c);
    }
    one(byte_tensor(shape, signed, out.into_iter()))
}
