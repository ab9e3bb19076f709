//! The linear-attention layer of hybrid models (Qwen3.5's gated delta net, as
//! onnxruntime-genai's builder writes it; onnxruntime 1.32's CPU kernels): the short causal
//! convolution that carries its last inputs as state (CausalConvWithState), the decay and
//! update-strength gates (LinearAttentionGate), the recurrent attention over a
//! key × value state matrix per head (LinearAttention), the per-head RMS norm gated by a
//! second projection (GatedRMSNorm), and the rotary embedding whose angles come from three
//! position streams (MRotaryEmbedding, for text, height and width positions). Each is
//! computed as onnxruntime's kernel computes it, the order of its sums included, so a
//! prompt gives what the same tokens one at a time give.

use super::super::{Ctx, Kernel, count, input, optional};
use super::quant::mlas_logistic;
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::kernels::rotary::{Caches, Layout, heads_and_rotary, rotate};
use crate::value::{Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "CausalConvWithState" => causal_conv_with_state,
        "LinearAttentionGate" => linear_attention_gate,
        "LinearAttention" => linear_attention,
        "GatedRMSNorm" => gated_rms_norm,
        "MRotaryEmbedding" => m_rotary_embedding,
        _ => return None,
    };
    Some(k)
}

fn tensor(like: &Tensor, shape: Vec<usize>, values: Vec<f64>) -> Result<Value, KernelError> {
    Ok(Value::Tensor(numeric_like(like.data_type(), shape, values)?))
}

/// A positive count attribute.
fn positive(ctx: &Ctx<'_>, name: &str) -> Result<usize, KernelError> {
    ctx.int(name)
        .and_then(|v| usize::try_from(v).ok())
        .filter(|&v| v > 0)
        .ok_or(bad_attribute!("{name} must be a positive count"))
}

/// SiLU as onnxruntime's convolution computes it: `x / (1 + e^−x)` in float32.
fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// CausalConvWithState: a depthwise causal convolution of `input` [B, C, L] by `weight`
/// [C, 1, K] over the `(K − 1)·dilation` inputs before it (`past_state`, zeros when
/// absent) and the input itself, plus `bias`, then SiLU when asked; `present_state` is the
/// last `(K − 1)·dilation` values of that window.
fn causal_conv_with_state(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    if ctx.int("ndim").unwrap_or(1) != 1 || ctx.int("channels_last").unwrap_or(0) != 0 {
        return Err(bad_attribute!("only a 1-D convolution over channels-first input is supported"));
    }
    if ctx.int("state_window").unwrap_or(0) != 0 {
        return Err(bad_attribute!("state_window must be 0 (onnxruntime's CPU kernel has no other)"));
    }
    let silu_after = match ctx.string("activation").unwrap_or("none") {
        "none" => false,
        "silu" | "swish" => true,
        other => return Err(bad_attribute!("activation '{other}' is not one of none, silu, swish")),
    };
    let dilation = usize::try_from(ctx.int("dilation").unwrap_or(1))
        .ok()
        .filter(|&d| d > 0)
        .ok_or(bad_attribute!("dilation must be positive"))?;
    let [batch, channels, len] = x.shape[..] else {
        return Err(bad_input!("input of shape {:?} is not [batch, channels, length]", x.shape));
    };
    let kernel_len = match w.shape[..] {
        [c, 1, k] if c == channels => k,
        _ => return Err(bad_input!("weight of shape {:?} is not [{channels}, 1, K]", w.shape)),
    };
    let pad = kernel_len.saturating_sub(1).checked_mul(dilation).ok_or(bad_input!("the state is too long"))?;
    let window_len = pad.checked_add(len).ok_or(bad_input!("the state is too long"))?;
    ctx.check_elements(count(&[batch, channels, window_len])?)?;
    let bias = optional(inputs, 2)?.map(|b| b.to_f64s()).transpose()?;
    if bias.as_ref().is_some_and(|b| b.len() != channels) {
        return Err(bad_input!("bias holds {} values for {channels} channels", bias.map_or(0, |b| b.len())));
    }
    let past = optional(inputs, 3)?;
    if let Some(p) = past
        && p.shape != [batch, channels, pad]
    {
        return Err(bad_input!("past_state of shape {:?} is not [{batch}, {channels}, {pad}]", p.shape));
    }
    let past = past.map(|p| p.to_f64s()).transpose()?;
    let (xs, ws) = (x.to_f64s()?, w.to_f64s()?);
    let mut out = Vec::with_capacity(xs.len());
    let mut state = Vec::with_capacity(batch * channels * pad);
    let mut window = Vec::with_capacity(pad + len);
    for b in 0..batch {
        for c in 0..channels {
            let row = b * channels + c;
            window.clear();
            match &past {
                Some(p) => window.extend(p[row * pad..][..pad].iter().map(|&v| v as f32)),
                None => window.resize(pad, 0.0),
            }
            window.extend(xs[row * len..][..len].iter().map(|&v| v as f32));
            let taps = &ws[c * kernel_len..][..kernel_len];
            for l in 0..len {
                let mut y = bias.as_ref().map_or(0.0, |b| b[c] as f32);
                for (k, &tap) in taps.iter().enumerate() {
                    y += tap as f32 * window[l + k * dilation];
                }
                out.push(f64::from(if silu_after { silu(y) } else { y }));
            }
            state.extend(window[len..].iter().map(|&v| f64::from(v)));
        }
    }
    Ok(vec![tensor(x, x.shape.clone(), out)?, tensor(x, vec![batch, channels, pad], state)?])
}

/// Softplus as onnxruntime's gate computes it in float32 (not `log1p`: exactly 0 below
/// about −17).
fn softplus(v: f32) -> f32 {
    if v > 0.0 { v + ((-v).exp() + 1.0).ln() } else { (v.exp() + 1.0).ln() }
}

/// LinearAttentionGate: `decay = decay_scale[h]·softplus(a + dt_bias[h])` over the last
/// axis of `a` (H heads), and `beta = sigmoid(b)` (MLAS's logistic) when `b` is given.
fn linear_attention_gate(_: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (a, dt_bias, decay_scale) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let heads = *a.shape.last().ok_or(bad_input!("a is a scalar, not [..., heads]"))?;
    let (dt_bias, decay_scale) = (dt_bias.to_f64s()?, decay_scale.to_f64s()?);
    if dt_bias.len() != heads || decay_scale.len() != heads {
        return Err(bad_input!(
            "dt_bias and decay_scale hold {} and {} values for {heads} heads",
            dt_bias.len(),
            decay_scale.len()
        ));
    }
    let decay: Vec<f64> = a
        .to_f64s()?
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let h = i % heads;
            f64::from(decay_scale[h] as f32 * softplus(v as f32 + dt_bias[h] as f32))
        })
        .collect();
    let mut out = vec![tensor(a, a.shape.clone(), decay)?];
    if let Some(b) = optional(inputs, 3)? {
        if b.shape != a.shape {
            return Err(bad_input!("b of shape {:?} is not a's shape {:?}", b.shape, a.shape));
        }
        let beta = b.to_f64s()?.iter().map(|&v| f64::from(mlas_logistic(v as f32))).collect();
        out.push(tensor(b, b.shape.clone(), beta)?);
    }
    Ok(out)
}

/// The update rules of LinearAttention: whether the state decays before each token, and
/// whether a token writes its value whole or only what the state does not already recall.
#[derive(Clone, Copy)]
struct Rule {
    gated: bool,
    delta: bool,
}

/// LinearAttention: per value head h, a state S of [dk, dv] (`past_state`, zeros when
/// absent) that each token t updates, then reads with its query:
///
/// 1. gated rules: `S ← e^g·S` (g one per head, or one per key dimension);
/// 2. delta rules: `S ← S + k ⊗ β(v − Sᵀk)`; otherwise `S ← S + k ⊗ v`;
/// 3. `o = scale·Sᵀq`.
///
/// Key head `h / (Hkv / Hk)` serves value head h. With fewer query than value heads, query
/// head `h·Hq/Hkv` reads state h into output head h; otherwise query heads `h·g … h·g + g − 1`
/// read it. Sums run in float32 in key order, as onnxruntime's loops.
fn linear_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (q, k, v) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let (q_heads, kv_heads) = (positive(ctx, "q_num_heads")?, positive(ctx, "kv_num_heads")?);
    if ctx.int("state_window").unwrap_or(0) != 0 {
        return Err(bad_attribute!("state_window must be 0 (onnxruntime's CPU kernel has no other)"));
    }
    let rule = match ctx.string("update_rule").unwrap_or("gated_delta") {
        "linear" => Rule { gated: false, delta: false },
        "gated" => Rule { gated: true, delta: false },
        "delta" => Rule { gated: false, delta: true },
        "gated_delta" => Rule { gated: true, delta: true },
        other => return Err(bad_attribute!("update_rule '{other}' is not linear, gated, delta or gated_delta")),
    };
    let three = |t: &Tensor, what: &str| match t.shape[..] {
        [b, s, w] => Ok((b, s, w)),
        _ => Err(bad_input!("{what} of shape {:?} is not [batch, sequence, width]", t.shape)),
    };
    let (batch, len, q_width) = three(q, "query")?;
    let (k_width, v_width) = (three(k, "key")?.2, three(v, "value")?.2);
    if k.shape[..2] != [batch, len] || v.shape[..2] != [batch, len] {
        return Err(bad_input!(
            "query {:?}, key {:?} and value {:?} differ in batch or sequence",
            q.shape,
            k.shape,
            v.shape
        ));
    }
    let dk = q_width / q_heads;
    let dv = v_width / kv_heads;
    let k_heads = k_width.checked_div(dk).unwrap_or(0);
    if dk == 0
        || q_width % q_heads != 0
        || v_width % kv_heads != 0
        || k_width % dk != 0
        || k_heads == 0
        || kv_heads % k_heads != 0
        || (q_heads % kv_heads != 0 && kv_heads % q_heads != 0)
    {
        return Err(bad_input!(
            "query width {q_width} ({q_heads} heads), key width {k_width} and value width {v_width} ({kv_heads} \
             heads) do not make whole heads that share"
        ));
    }
    let out_heads = q_heads.max(kv_heads);
    ctx.check_elements(count(&[batch, len, out_heads, dv])?)?;
    ctx.check_elements(count(&[batch, kv_heads, dk, dv])?)?;
    let state_len = batch * kv_heads * dk * dv;
    let mut state: Vec<f32> = match optional(inputs, 3)? {
        Some(p) if p.shape == [batch, kv_heads, dk, dv] => p.to_f64s()?.iter().map(|&x| x as f32).collect(),
        Some(p) => {
            return Err(bad_input!("past_state of shape {:?} is not [{batch}, {kv_heads}, {dk}, {dv}]", p.shape));
        }
        None => vec![0.0; state_len],
    };
    // Per-head or per-key decay, per-head or shared beta: (values, width of a token's row).
    let gate = |i: usize, what: &str, widths: [usize; 2]| -> Result<Option<(Vec<f32>, usize)>, KernelError> {
        let Some(t) = optional(inputs, i)? else { return Ok(None) };
        match t.shape[..] {
            [b, s, w] if b == batch && s == len && widths.contains(&w) => {
                Ok(Some((t.to_f64s()?.iter().map(|&x| x as f32).collect(), w)))
            }
            _ => Err(bad_input!("{what} of shape {:?} is not [{batch}, {len}, one of {widths:?}]", t.shape)),
        }
    };
    let decay = if rule.gated { gate(4, "decay", [kv_heads, kv_heads * dk])? } else { None };
    let beta = if rule.delta { gate(5, "beta", [kv_heads, 1])? } else { None };
    if (rule.gated && decay.is_none()) || (rule.delta && beta.is_none()) {
        return Err(bad_input!("the update rule needs its decay and beta inputs"));
    }
    let scale = match ctx.float("scale").unwrap_or(0.0) {
        0.0 => 1.0 / (dk as f32).sqrt(),
        s => s,
    };
    let to32 = |t: &Tensor| -> Result<Vec<f32>, KernelError> { Ok(t.to_f64s()?.iter().map(|&x| x as f32).collect()) };
    let (qs, ks, vs) = (to32(q)?, to32(k)?, to32(v)?);
    let mut out = vec![0.0f64; batch * len * out_heads * dv];
    let per_key = kv_heads / k_heads;
    let mut recalled = vec![0.0f32; dv];
    for b in 0..batch {
        for h in 0..kv_heads {
            let s = &mut state[(b * kv_heads + h) * dk * dv..][..dk * dv];
            let kh = h / per_key;
            // (query head, output head) pairs reading state h.
            let readers: Vec<(usize, usize)> = if q_heads < kv_heads {
                vec![(h * q_heads / kv_heads, h)]
            } else {
                let g = q_heads / kv_heads;
                (h * g..h * g + g).map(|qh| (qh, qh)).collect()
            };
            for t in 0..len {
                let token = b * len + t;
                let kt = &ks[token * k_width + kh * dk..][..dk];
                let vt = &vs[token * v_width + h * dv..][..dv];
                if let Some((g, width)) = &decay {
                    for i in 0..dk {
                        let at = if *width == kv_heads { h } else { h * dk + i };
                        let factor = g[token * width + at].exp();
                        s[i * dv..][..dv].iter_mut().for_each(|x| *x *= factor);
                    }
                }
                if let Some((beta, width)) = &beta {
                    let bt = beta[token * width + if *width == 1 { 0 } else { h }];
                    for (j, r) in recalled.iter_mut().enumerate() {
                        let mut sum = 0.0f32;
                        for i in 0..dk {
                            sum += s[i * dv + j] * kt[i];
                        }
                        *r = bt * (vt[j] - sum);
                    }
                    for i in 0..dk {
                        for j in 0..dv {
                            s[i * dv + j] += kt[i] * recalled[j];
                        }
                    }
                } else {
                    for i in 0..dk {
                        for j in 0..dv {
                            s[i * dv + j] += kt[i] * vt[j];
                        }
                    }
                }
                for &(qh, oh) in &readers {
                    let qt = &qs[token * q_width + qh * dk..][..dk];
                    let row = &mut out[(token * out_heads + oh) * dv..][..dv];
                    for (j, o) in row.iter_mut().enumerate() {
                        let mut sum = 0.0f32;
                        for i in 0..dk {
                            sum += qt[i] * s[i * dv + j];
                        }
                        *o = f64::from(scale * sum);
                    }
                }
            }
        }
    }
    let state = state.into_iter().map(f64::from).collect();
    Ok(vec![tensor(q, vec![batch, len, out_heads * dv], out)?, tensor(q, vec![batch, kv_heads, dk, dv], state)?])
}

/// GatedRMSNorm: each run of C elements (C = the scale's size) of X normalized by its root
/// mean square, times the scale, times the gate's activation (SiLU, or the sigmoid):
/// `((x·r)·scale)·act(z)`, in float32 in that order.
fn gated_rms_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, scale, gate) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let eps = ctx.float("epsilon").unwrap_or(1e-5);
    let silu_gate = match ctx.string("activation").unwrap_or("silu") {
        "silu" | "swish" => true,
        "sigmoid" => false,
        other => return Err(bad_attribute!("activation '{other}' is not silu, swish or sigmoid")),
    };
    if gate.shape != x.shape {
        return Err(bad_input!("gate of shape {:?} is not X's shape {:?}", gate.shape, x.shape));
    }
    let scale: Vec<f32> = scale.to_f64s()?.iter().map(|&v| v as f32).collect();
    let c = scale.len();
    let last = x.shape.last().copied().unwrap_or(1);
    if c == 0 || last % c != 0 {
        return Err(bad_input!("the last axis of X ({last}) is not a multiple of the scale's {c} values"));
    }
    let (xs, zs) = (x.to_f64s()?, gate.to_f64s()?);
    let mut out = Vec::with_capacity(xs.len());
    for (group, gates) in xs.chunks(c).zip(zs.chunks(c)) {
        let ss = group.iter().fold(0.0f32, |acc, &v| acc + v as f32 * v as f32);
        let inv = 1.0 / (ss / c as f32 + eps).sqrt();
        for ((&v, &z), &g) in group.iter().zip(gates).zip(&scale) {
            let z = z as f32;
            let act = if silu_gate { z * mlas_logistic(z) } else { mlas_logistic(z) };
            out.push(f64::from(((v as f32 * inv) * g) * act));
        }
    }
    Ok(vec![tensor(x, x.shape.clone(), out)?])
}

/// Which position stream (0 text, 1 height, 2 width) gives the angle of rotary column `c`:
/// contiguous sections (layout 0), or (layout 1) height at columns 1, 4, 7, … below
/// 3·sections[1] and width at 2, 5, 8, … below 3·sections[2], text elsewhere.
fn stream_of(c: usize, sections: [usize; 3], interleaved_layout: bool) -> usize {
    if !interleaved_layout {
        return if c < sections[0] {
            0
        } else if c < sections[0] + sections[1] {
            1
        } else {
            2
        };
    }
    match c % 3 {
        1 if c < 3 * sections[1] => 1,
        2 if c < 3 * sections[2] => 2,
        _ => 0,
    }
}

/// MRotaryEmbedding: RotaryEmbedding whose angle for each rotary column is read at the
/// position of that column's stream (`position_ids` [3, B, S]), cos and sin times `scale`.
fn m_rotary_embedding(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, pos, cos_t, sin_t) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?, input(inputs, 3)?);
    if ctx.int("is_packed_batching").unwrap_or(0) != 0 {
        return Err(bad_attribute!("is_packed_batching is not supported"));
    }
    let sections: [usize; 3] = match ctx.ints("mrope_section") {
        Some(&[a, b, c]) => [a, b, c].map(|s| usize::try_from(s).unwrap_or(usize::MAX)),
        _ => return Err(bad_attribute!("mrope_section must hold three section sizes")),
    };
    let interleaved_layout = match ctx.int("mrope_layout").unwrap_or(0) {
        0 => false,
        1 => true,
        other => return Err(bad_attribute!("mrope_layout {other} is not 0 (sections) or 1 (interleaved)")),
    };
    let (rows, width) = match cos_t.shape[..] {
        [r, w] if sin_t.shape == cos_t.shape => (r, w),
        _ => {
            return Err(bad_input!(
                "cos_cache {:?} and sin_cache {:?} are not one [positions, rotary/2] shape",
                cos_t.shape,
                sin_t.shape
            ));
        }
    };
    let (layout, rotary) = heads_and_rotary(ctx, &x.shape)?;
    let Layout { batch, sequence: len, .. } = layout;
    let half = rotary / 2;
    if width != half || sections.iter().try_fold(0usize, |a, &s| a.checked_add(s)) != Some(half) {
        return Err(bad_input!(
            "the caches' {width} angles and mrope_section {sections:?} do not make rotary/2 = {half}"
        ));
    }
    if pos.shape != [3, batch, len] {
        return Err(bad_input!("position_ids of shape {:?} is not [3, {batch}, {len}]", pos.shape));
    }
    ctx.check_elements(count(&[batch, len, half])?)?;
    let positions = pos.to_i64s()?;
    let scale = f64::from(ctx.float("scale").unwrap_or(1.0));
    let (cos, sin) = (cos_t.to_f64s()?, sin_t.to_f64s()?);
    // One row of angles per token, each column from its stream's position.
    let (mut token_cos, mut token_sin) =
        (Vec::with_capacity(batch * len * half), Vec::with_capacity(batch * len * half));
    for b in 0..batch {
        for s in 0..len {
            for c in 0..half {
                let stream = stream_of(c, sections, interleaved_layout);
                let p = positions[(stream * batch + b) * len + s];
                let row = usize::try_from(p)
                    .ok()
                    .filter(|&r| r < rows)
                    .ok_or(bad_input!("position {p} of stream {stream} is outside the caches' {rows} rows"))?;
                token_cos.push(cos[row * width + c] * scale);
                token_sin.push(sin[row * width + c] * scale);
            }
        }
    }
    let caches = Caches { cos: &token_cos, sin: &token_sin, width: half, rows: batch * len };
    let interleaved = ctx.int("interleaved").unwrap_or(0) != 0;
    let out = rotate(&x.to_f64s()?, &layout, rotary, interleaved, &caches, |b, s| Ok(b * len + s))?;
    Ok(vec![tensor(x, x.shape.clone(), out)?])
}
