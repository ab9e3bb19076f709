//! FlexAttention (ai.onnx.preview 1): the arithmetic around its two modifier subgraphs.
//! The runner (`run.rs`) calls these in order and runs `score_mod` and `prob_mod` on what
//! they return, since only it can run a graph.
//!
//! Rounding follows onnx's function body: `sqrt(scale)` applied to Q and K and their
//! product in the input's type, then scores, probabilities and the product with V in the
//! softmax precision (float32 unless the inputs are double), the result in the input's
//! type.

use onnx_core::ir::DataType;

use super::{Ctx, count, input};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::kernels::common::rounding;
use crate::value::{Tensor, Value};

/// The checked shapes: batch, query heads, kv heads, query length, kv length, head size,
/// value head size.
#[derive(Debug)]
pub struct Shapes {
    pub b: usize,
    pub hq: usize,
    pub hkv: usize,
    pub l: usize,
    pub s: usize,
    pub d: usize,
    pub dv: usize,
}

pub fn shapes(q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Shapes, KernelError> {
    let ([b, hq, l, d], [kb, hkv, s, kd], [vb, vh, vs, dv]) = (&q.shape[..], &k.shape[..], &v.shape[..]) else {
        return Err(bad_input!("Q, K and V must be rank 4"));
    };
    if kb != b || vb != b || kd != d || vh != hkv || vs != s || *hkv == 0 || hq % hkv != 0 {
        return Err(bad_input!("Q {:?}, K {:?} and V {:?} do not fit together", q.shape, k.shape, v.shape));
    }
    Ok(Shapes { b: *b, hq: *hq, hkv: *hkv, l: *l, s: *s, d: *d, dv: *dv })
}

/// Calls `f(batch, query head, its kv head, query row)` for every query row, in order.
fn each_row(sh: &Shapes, mut f: impl FnMut(usize, usize, usize, usize)) {
    let group = sh.hq / sh.hkv;
    for b in 0..sh.b {
        for h in 0..sh.hq {
            for i in 0..sh.l {
                f(b, h, h / group, i);
            }
        }
    }
}

/// The type scores and probabilities are computed in.
pub fn precision(ctx: &Ctx<'_>, input: DataType) -> DataType {
    match ctx.int("softmax_precision").and_then(|c| i32::try_from(c).ok()).and_then(DataType::from_code) {
        Some(dt) => dt,
        None if input == DataType::Double => DataType::Double,
        None => DataType::Float,
    }
}

/// Scaled scores Q·Kᵀ, [B, Hq, L, S], in the softmax precision.
pub fn scores(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Tensor, KernelError> {
    let (q, k, v) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let sh = shapes(q, k, v)?;
    // The scores, the output and the query rows: empty queries (head size 0) may declare
    // any number of heads and rows.
    let existing = q.len().max(k.len()).max(v.len());
    for n in [count(&[sh.b, sh.hq, sh.l, sh.s])?, count(&[sh.b, sh.hq, sh.l, sh.dv])?, count(&[sh.b, sh.hq, sh.l])?] {
        ctx.check_grown(n, existing)?;
    }
    let dt = q.data_type();
    let round = rounding(dt);
    let scale = match ctx.float("scale") {
        Some(s) => f64::from(s),
        None => 1.0 / (sh.d as f64).sqrt(),
    };
    let root = round(scale.sqrt());
    let qs: Vec<f64> = q.to_f64s()?.into_iter().map(|x| round(x * root)).collect();
    let ks: Vec<f64> = k.to_f64s()?.into_iter().map(|x| round(x * root)).collect();
    let p = precision(ctx, dt);
    let to_p = rounding(p);
    let mut out = Vec::with_capacity(count(&[sh.b, sh.hq, sh.l, sh.s])?);
    each_row(&sh, |b, h, kh, i| {
        let qrow = &qs[((b * sh.hq + h) * sh.l + i) * sh.d..][..sh.d];
        for j in 0..sh.s {
            let krow = &ks[((b * sh.hkv + kh) * sh.s + j) * sh.d..][..sh.d];
            let dot: f64 = qrow.iter().zip(krow).map(|(a, b)| a * b).sum();
            out.push(to_p(round(dot)));
        }
    });
    numeric_like(p, vec![sh.b, sh.hq, sh.l, sh.s], out)
}

/// Softmax over the last axis, in the tensor's own type.
pub fn softmax(t: &Tensor) -> Result<Tensor, KernelError> {
    let round = rounding(t.data_type());
    let width = *t.shape.last().unwrap_or(&1);
    let mut v = t.to_f64s()?;
    for row in v.chunks_mut(width.max(1)) {
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut sum = 0.0;
        for x in row.iter_mut() {
            *x = if max == f64::NEG_INFINITY { 0.0 } else { (*x - max).exp() };
            sum += *x;
        }
        for x in row.iter_mut() {
            *x = if sum > 0.0 { round(*x / sum) } else { f64::NAN };
        }
    }
    numeric_like(t.data_type(), t.shape.clone(), v)
}

/// Probabilities times V, [B, Hq, L, Dv], in the input's type.
pub fn output(inputs: &[Option<&Value>], probs: &Tensor) -> Result<Tensor, KernelError> {
    let (q, k, v) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let sh = shapes(q, k, v)?;
    if probs.shape != [sh.b, sh.hq, sh.l, sh.s] {
        return Err(bad_attribute!("prob_mod gave shape {:?}, not {:?}", probs.shape, [sh.b, sh.hq, sh.l, sh.s]));
    }
    let to_p = rounding(probs.data_type());
    let (p, vv) = (probs.to_f64s()?, v.to_f64s()?);
    let mut out = Vec::with_capacity(count(&[sh.b, sh.hq, sh.l, sh.dv])?);
    each_row(&sh, |b, h, kh, i| {
        let prow = &p[((b * sh.hq + h) * sh.l + i) * sh.s..][..sh.s];
        for e in 0..sh.dv {
            let sum: f64 = (0..sh.s).map(|j| prow[j] * to_p(vv[((b * sh.hkv + kh) * sh.s + j) * sh.dv + e])).sum();
            out.push(to_p(sum));
        }
    });
    numeric_like(q.data_type(), vec![sh.b, sh.hq, sh.l, sh.dv], out)
}
