//! Operators that carry state between decoding steps (opset 27): CausalConvWithState (a
//! depthwise causal 1-D convolution whose last k−1 inputs are the next call's past) and
//! LinearAttention (attention as a recurrence over a d_k × d_v state per key/value head:
//! linear, gated, delta and gated-delta update rules). Computed in f64, rounded once to
//! the input's type.

use super::{Ctx, Kernel, count, input, optional};
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::kernels::common::numeric_like;
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "CausalConvWithState" => causal_conv,
        "LinearAttention" => linear_attention,
        _ => return None,
    };
    Some(k)
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 { 1.0 / (1.0 + (-x).exp()) } else { x.exp() / (1.0 + x.exp()) }
}

fn causal_conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    let [b, c, t] = x.shape[..] else {
        return Err(bad_input!("input of shape {:?} is not (batch, channels, length)", x.shape));
    };
    let [wc, 1, k] = w.shape[..] else {
        return Err(bad_input!("weight of shape {:?} is not (channels, 1, k)", w.shape));
    };
    if wc != c || k == 0 {
        return Err(bad_input!("weight of shape {:?} does not fit {c} channels", w.shape));
    }
    let silu = match ctx.string("activation").unwrap_or("none") {
        "none" => false,
        "silu" | "swish" => true,
        other => return Err(bad_attribute!("activation '{other}' is not none, silu or swish")),
    };
    let bias = optional(inputs, 2)?.map(|t| t.to_f64s()).transpose()?;
    let (past, p) = match optional(inputs, 3)? {
        Some(s) if s.rank() == 3 && s.shape[0] == b && s.shape[1] == c => (Some(s.to_f64s()?), s.shape[2]),
        Some(s) => return Err(bad_input!("past_state of shape {:?} does not fit the input", s.shape)),
        None => (None, k - 1),
    };
    let padded_len = p.checked_add(t).ok_or(limit!("the past and the input are too long together"))?;
    if padded_len < k {
        return Err(bad_input!("{padded_len} positions are fewer than the kernel's {k}"));
    }
    // The output and the next state: an empty input may declare any batch.
    let out_len = padded_len - k + 1;
    let existing = x.len().max(w.len()).max(past.as_ref().map_or(0, Vec::len));
    for n in [count(&[b, c, out_len])?, count(&[b, c, k - 1])?] {
        ctx.check_grown(n, existing)?;
    }
    // Without channels there is nothing to convolve, however large the batch.
    let b_runs = if c == 0 { 0 } else { b };
    let (xv, wv) = (x.to_f64s()?, w.to_f64s()?);
    // The padded row of (batch, channel): the past (zeros without one), then the input.
    let padded = |bi: usize, ci: usize, i: usize| -> f64 {
        if i < p { past.as_ref().map_or(0.0, |s| s[(bi * c + ci) * p + i]) } else { xv[(bi * c + ci) * t + i - p] }
    };
    let mut out = Vec::with_capacity(b * c * out_len);
    let mut state = Vec::with_capacity(b * c * (k - 1));
    for bi in 0..b_runs {
        for ci in 0..c {
            for o in 0..out_len {
                let mut y = bias.as_ref().map_or(0.0, |v| v.get(ci).copied().unwrap_or(0.0));
                for j in 0..k {
                    y += padded(bi, ci, o + j) * wv[ci * k + j];
                }
                out.push(if silu { y * sigmoid(y) } else { y });
            }
            state.extend((padded_len - (k - 1)..padded_len).map(|i| padded(bi, ci, i)));
        }
    }
    Ok(vec![
        Value::Tensor(numeric_like(x.data_type(), vec![b, c, out_len], out)?),
        Value::Tensor(numeric_like(x.data_type(), vec![b, c, k - 1], state)?),
    ])
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    Linear,
    Gated,
    Delta,
    GatedDelta,
}

fn linear_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (q, k, v) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let heads = |name: &str| {
        ctx.int(name)
            .and_then(|h| usize::try_from(h).ok())
            .filter(|&h| h > 0)
            .ok_or(bad_attribute!("{name} must be positive"))
    };
    let (hq, hkv) = (heads("q_num_heads")?, heads("kv_num_heads")?);
    if hq % hkv != 0 {
        return Err(bad_attribute!("q_num_heads {hq} is not a multiple of kv_num_heads {hkv}"));
    }
    let ([b, t, qw], [_, _, kw], [_, _, vw]) = (&q.shape[..], &k.shape[..], &v.shape[..]) else {
        return Err(bad_input!("query, key and value must be 3-D (batch, sequence, heads × size)"));
    };
    let (b, t) = (*b, *t);
    if qw % hq != 0 || kw % hkv != 0 || vw % hkv != 0 || qw / hq != kw / hkv {
        return Err(bad_input!("head sizes do not divide: query {qw}/{hq}, key {kw}/{hkv}, value {vw}/{hkv}"));
    }
    let (dk, dv) = (kw / hkv, vw / hkv);
    if k.shape[..2] != [b, t] || v.shape[..2] != [b, t] {
        return Err(bad_input!("query, key and value differ in batch or sequence length"));
    }
    let rule = match ctx.string("update_rule").unwrap_or("gated_delta") {
        "linear" => Rule::Linear,
        "gated" => Rule::Gated,
        "delta" => Rule::Delta,
        "gated_delta" => Rule::GatedDelta,
        other => return Err(bad_attribute!("update_rule '{other}' is not linear, gated, delta or gated_delta")),
    };
    let scale = match ctx.float("scale") {
        Some(s) if s != 0.0 => f64::from(s),
        _ => 1.0 / (dk as f64).sqrt(),
    };
    let past = optional(inputs, 3)?;
    let state_type = past.map_or(q.data_type(), |p| p.data_type());
    // The output, the state and the steps: empty inputs may declare any batch, length and
    // head count.
    let existing = q.len().max(k.len()).max(v.len());
    let out_count = count(&[b, t, hq, dv])?;
    let state_count = count(&[b, hkv, dk, dv])?;
    for n in [out_count, state_count, count(&[b, t, hq.max(hkv)])?] {
        ctx.check_grown(n, existing)?;
    }
    let mut state = match past {
        Some(p) if p.shape == [b, hkv, dk, dv] => p.to_f64s()?,
        Some(p) => return Err(bad_input!("past_state of shape {:?} is not [{b}, {hkv}, {dk}, {dv}]", p.shape)),
        None => vec![0.0; state_count],
    };
    // Per (batch, step, kv head): the decay of each key dimension, and beta; the last axis
    // holds one value per head (or, for the decay, per key dimension), or one shared.
    let per_step = |i: usize, name: &str| -> Result<Option<(Vec<f64>, usize)>, KernelError> {
        let Some(d) = optional(inputs, i)? else { return Ok(None) };
        let width = d.shape.last().copied().unwrap_or(1);
        if width == 0 || count(&[b, t, width])? != d.len() {
            return Err(bad_input!("{name} of shape {:?} does not hold values per batch and step ({b}, {t})", d.shape));
        }
        Ok(Some((d.to_f64s()?, width)))
    };
    let decay = per_step(4, "decay")?;
    let beta = per_step(5, "beta")?;
    let gated = matches!(rule, Rule::Gated | Rule::GatedDelta);
    let delta = matches!(rule, Rule::Delta | Rule::GatedDelta);
    if gated && decay.is_none() {
        return Err(bad_input!("the gated rules need a decay input"));
    }
    let (qv, kv, vv) = (q.to_f64s()?, k.to_f64s()?, v.to_f64s()?);
    let mut out = vec![0.0; out_count];
    let group = hq / hkv;
    let mut kvec = vec![0.0; dv];
    for bi in 0..b {
        for ti in 0..t {
            let step = bi * t + ti;
            for h in 0..hkv {
                let s = &mut state[(bi * hkv + h) * dk * dv..(bi * hkv + h + 1) * dk * dv];
                if let (true, Some((g, width))) = (gated, &decay) {
                    for i in 0..dk {
                        // One decay per head, or one per key dimension.
                        let gi =
                            if *width == hkv * dk { g[step * width + h * dk + i] } else { g[step * width + h % width] };
                        let e = gi.exp();
                        s[i * dv..(i + 1) * dv].iter_mut().for_each(|x| *x *= e);
                    }
                }
                let key = &kv[(step * hkv + h) * dk..(step * hkv + h + 1) * dk];
                let value = &vv[(step * hkv + h) * dv..(step * hkv + h + 1) * dv];
                if delta {
                    let rate = beta.as_ref().map_or(1.0, |(bt, width)| bt[step * width + h % width]);
                    // v − Sᵀk, with S already decayed.
                    for (j, slot) in kvec.iter_mut().enumerate() {
                        *slot = value[j] - (0..dk).map(|i| s[i * dv + j] * key[i]).sum::<f64>();
                    }
                    for i in 0..dk {
                        for j in 0..dv {
                            s[i * dv + j] += rate * key[i] * kvec[j];
                        }
                    }
                } else {
                    for i in 0..dk {
                        for j in 0..dv {
                            s[i * dv + j] += key[i] * value[j];
                        }
                    }
                }
            }
            for hqi in 0..hq {
                let h = hqi / group;
                let s = &state[(bi * hkv + h) * dk * dv..(bi * hkv + h + 1) * dk * dv];
                let query = &qv[(step * hq + hqi) * dk..(step * hq + hqi + 1) * dk];
                for j in 0..dv {
                    out[(step * hq + hqi) * dv + j] = scale * (0..dk).map(|i| query[i] * s[i * dv + j]).sum::<f64>();
                }
            }
        }
    }
    Ok(vec![
        Value::Tensor(numeric_like(q.data_type(), vec![b, t, hq * dv], out)?),
        Value::Tensor(numeric_like(state_type, vec![b, hkv, dk, dv], state)?),
    ])
}
