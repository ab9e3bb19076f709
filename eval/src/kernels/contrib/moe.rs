//! Mixture of experts (MoE, and QMoE with quantized expert weights; GPT-OSS as
//! onnxruntime-genai's builder writes it), as onnxruntime 1.32's CPU kernels compute them.
//! Each token goes to its top k experts by the router's logits; each expert is
//! `fc2·act(fc1·x + b1) + b2` (weights stored a row per output feature), and the token's
//! output is the experts' outputs weighed by the routing weights. Everything is computed in
//! float32 and rounded to the output's type once, as onnxruntime does.
//!
//! The two operators route differently: MoE weighs an expert by its probability under a
//! softmax over all experts (divided by the chosen ones' sum with
//! `normalize_routing_weights`); QMoE by a softmax over the chosen logits only (or by
//! `router_weights` when given). Among equal logits the higher expert index wins.

use super::super::{Ctx, Kernel, count, input, optional};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    match op {
        "MoE" => Some(moe),
        "QMoE" => Some(qmoe),
        _ => None,
    }
}

/// The activation between an expert's two layers.
#[derive(Clone, Copy)]
enum Activation {
    Relu,
    /// The tanh approximation.
    Gelu,
    Silu,
    Identity,
    /// Interleaved gate and linear halves (gate at even features):
    /// `min(g, limit)·σ(alpha·min(g, limit))·(clamp(l, ±limit) + beta)`.
    SwiGlu {
        alpha: f32,
        beta: f32,
        limit: f32,
    },
}

impl Activation {
    fn of(ctx: &Ctx<'_>) -> Result<Activation, KernelError> {
        Ok(match ctx.string("activation_type").unwrap_or("relu") {
            "relu" => Activation::Relu,
            "gelu" => Activation::Gelu,
            "silu" => Activation::Silu,
            "identity" => Activation::Identity,
            "swiglu" => {
                if ctx.int("swiglu_fusion").unwrap_or(0) != 1 {
                    return Err(bad_attribute!("swiglu needs swiglu_fusion 1 (interleaved gate and linear features)"));
                }
                Activation::SwiGlu {
                    alpha: ctx.float("activation_alpha").unwrap_or(1.0),
                    beta: ctx.float("activation_beta").unwrap_or(0.0),
                    limit: ctx.float("swiglu_limit").unwrap_or(f32::INFINITY),
                }
            }
            other => {
                return Err(bad_attribute!("activation_type '{other}' is not relu, gelu, silu, identity or swiglu"));
            }
        })
    }

    /// How many first-layer features make one activation.
    fn width(self) -> usize {
        if matches!(self, Activation::SwiGlu { .. }) { 2 } else { 1 }
    }

    fn apply(self, h: &[f32], out: &mut Vec<f32>) {
        let sigmoid = |x: f32| 1.0 / (1.0 + (-x).exp());
        out.clear();
        match self {
            Activation::Relu => out.extend(h.iter().map(|&x| x.max(0.0))),
            Activation::Gelu => {
                out.extend(h.iter().map(|&x| 0.5 * x * (1.0 + (0.797_884_6 * (x + 0.044_715 * x * x * x)).tanh())))
            }
            Activation::Silu => out.extend(h.iter().map(|&x| x * sigmoid(x))),
            Activation::Identity => out.extend_from_slice(h),
            Activation::SwiGlu { alpha, beta, limit } => out.extend(h.chunks_exact(2).map(|pair| {
                let gate = pair[0].min(limit);
                // max then min, not clamp: a limit that is negative or NaN (a broken
                // model's) must not panic; NaN leaves the value as it is.
                let linear = pair[1].max(-limit).min(limit);
                gate * sigmoid(alpha * gate) * (linear + beta)
            })),
        }
    }
}

/// The experts' two layers, dequantized: `fc1` [E, F1, H], `fc2` [E, H, I], biases
/// [E, F1] and [E, H] (zeros when absent).
struct Experts<'w> {
    count: usize,
    hidden: usize,
    inner: usize,
    fc1: &'w [f32],
    fc1_bias: Option<Vec<f32>>,
    fc2: &'w [f32],
    fc2_bias: Option<Vec<f32>>,
    activation: Activation,
}

/// QMoE's expert weights dequantized (fc1 [E, F1, H], fc2 [E, H, I]): once per plan when
/// they are constants, else on each run.
struct DequantizedExperts {
    fc1: Vec<f32>,
    fc2: Vec<f32>,
    /// (E, F1, H, I) they were dequantized for.
    dims: (usize, usize, usize, usize),
}

/// The operators whose kernels take their weights dequantized when the plan is made.
pub fn prepare(op: &str) -> Option<super::super::Prepare> {
    match op {
        "QMoE" => Some(|ctx, inputs| {
            let named = |i: usize| ctx.node.inputs.get(i).is_some_and(|n| !n.is_empty());
            let constant = |i: usize| inputs.get(i).copied().flatten().is_some();
            // fc1 and fc2 with their scales, and their zero points where given.
            let needed =
                [2, 3, 5, 6].iter().all(|&i| constant(i)) && [11, 12].iter().all(|&i| !named(i) || constant(i));
            if !needed {
                return Ok(None);
            }
            let fc2 = input(inputs, 5)?;
            let fc1 = input(inputs, 2)?;
            let (count_e, hidden, f1) = match (&fc1.shape[..], &fc2.shape[..]) {
                ([e, f1, _], [e2, h, _]) if e == e2 => (*e, *h, *f1),
                _ => return Ok(None),
            };
            let weights = dequantize_experts(ctx, inputs, count_e, hidden, f1)?;
            let bytes = (weights.fc1.len() + weights.fc2.len()) * 4;
            Ok(Some((std::sync::Arc::new(weights) as super::super::Prepared, bytes)))
        }),
        _ => None,
    }
}

/// QMoE's inner size I, from fc2's packed rows [E, H, I·bits/8].
fn fc2_inner(fc2: &Tensor, count_e: usize, hidden: usize, bits: usize) -> Result<usize, KernelError> {
    match fc2.shape[..] {
        [e, h, bytes] if e == count_e && h == hidden => Ok(bytes * 8 / bits),
        _ => Err(bad_input!("fc2_experts_weights of shape {:?} is not [{count_e}, {hidden}, I·bits/8]", fc2.shape)),
    }
}

/// The bits and block size of QMoE's weights, checked.
fn weight_bits(ctx: &Ctx<'_>) -> Result<(usize, usize), KernelError> {
    let bits = match ctx.int("expert_weight_bits").unwrap_or(4) {
        b @ (2 | 4 | 8) => b as usize,
        b => return Err(bad_attribute!("expert_weight_bits {b} is not 2, 4 or 8")),
    };
    Ok((bits, usize::try_from(ctx.int("block_size").unwrap_or(0)).unwrap_or(0)))
}

/// Dequantizes QMoE's fc1 and fc2 for E experts of `hidden` features whose first layer
/// has `f1` rows.
fn dequantize_experts(
    ctx: &Ctx<'_>,
    inputs: &[Option<&Value>],
    count_e: usize,
    hidden: usize,
    f1: usize,
) -> Result<DequantizedExperts, KernelError> {
    let (bits, block) = weight_bits(ctx)?;
    let (fc1, fc1_scales, fc2, fc2_scales) =
        (input(inputs, 2)?, input(inputs, 3)?, input(inputs, 5)?, input(inputs, 6)?);
    let inner = fc2_inner(fc2, count_e, hidden, bits)?;
    ctx.check_elements(count(&[count_e, f1 + hidden, hidden.max(inner)])?)?;
    Ok(DequantizedExperts {
        fc1: dequantize(fc1, fc1_scales, optional(inputs, 11)?, (count_e, f1, hidden), (bits, block), "fc1")?,
        fc2: dequantize(fc2, fc2_scales, optional(inputs, 12)?, (count_e, hidden, inner), (bits, block), "fc2")?,
        dims: (count_e, f1, hidden, inner),
    })
}

/// The tokens' rows [T, H] of `input` ([T, H] or [B, S, H]) and the router's logits [T, E].
fn tokens_and_logits(x: &Tensor, router: &Tensor) -> Result<(usize, usize, usize), KernelError> {
    let hidden = match x.shape[..] {
        [_, h] | [_, _, h] => h,
        _ => return Err(bad_input!("input of shape {:?} is neither [tokens, hidden] nor [B, S, hidden]", x.shape)),
    };
    let tokens = x.len().checked_div(hidden).unwrap_or(0);
    match router.shape[..] {
        [t, e] if t == tokens && e > 0 => Ok((tokens, hidden, e)),
        _ => Err(bad_input!("router_probs of shape {:?} is not [{tokens}, experts]", router.shape)),
    }
}

/// The top `k` experts of a row of logits, the largest first (ties: the higher index).
fn top_k(logits: &[f32], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(b.cmp(&a)));
    order.truncate(k);
    order
}

fn softmax(values: &[f32]) -> Vec<f32> {
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = values.iter().map(|&v| (v - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.iter().map(|&e| e / sum).collect()
}

/// The number of experts each token goes to: `k`, at least 1 and at most the experts.
fn experts_per_token(ctx: &Ctx<'_>, experts: usize) -> Result<usize, KernelError> {
    let k = ctx.int("k").unwrap_or(1);
    usize::try_from(k)
        .ok()
        .filter(|&k| k >= 1 && k <= experts)
        .ok_or(bad_attribute!("k is {k}: each token goes to between 1 and {experts} experts"))
}

/// Runs every token through its routed experts: `route(t)` gives the (expert, weight)
/// pairs of token t.
fn run_experts(
    x: &Tensor,
    experts: &Experts,
    tokens: usize,
    route: impl Fn(usize) -> Vec<(usize, f32)>,
) -> Result<Vec<Value>, KernelError> {
    let Experts { hidden, inner, activation, .. } = *experts;
    let f1 = inner * activation.width();
    let xs: Vec<f32> = x.to_f64s()?.iter().map(|&v| v as f32).collect();
    let mut out = vec![0.0f32; tokens * hidden];
    let (mut h, mut a) = (vec![0.0f32; f1], Vec::with_capacity(inner));
    for t in 0..tokens {
        let row = &xs[t * hidden..][..hidden];
        for (e, weight) in route(t) {
            let w1 = &experts.fc1[e * f1 * hidden..][..f1 * hidden];
            for (n, hn) in h.iter_mut().enumerate() {
                let dot: f64 = w1[n * hidden..][..hidden].iter().zip(row).map(|(&w, &v)| f64::from(w * v)).sum();
                *hn = dot as f32 + experts.fc1_bias.as_ref().map_or(0.0, |b| b[e * f1 + n]);
            }
            activation.apply(&h, &mut a);
            let w2 = &experts.fc2[e * hidden * inner..][..hidden * inner];
            for (n, o) in out[t * hidden..][..hidden].iter_mut().enumerate() {
                let dot: f64 = w2[n * inner..][..inner].iter().zip(&a).map(|(&w, &v)| f64::from(w * v)).sum();
                let y = dot as f32 + experts.fc2_bias.as_ref().map_or(0.0, |b| b[e * hidden + n]);
                *o += weight * y;
            }
        }
    }
    let out = out.into_iter().map(f64::from).collect();
    Ok(vec![Value::Tensor(numeric_like(x.data_type(), x.shape.clone(), out)?)])
}

/// A bias [E, n], when given.
fn bias(t: Option<&Tensor>, experts: usize, n: usize, what: &str) -> Result<Option<Vec<f32>>, KernelError> {
    let Some(t) = t else { return Ok(None) };
    if t.len() != experts * n {
        return Err(bad_input!("{what} of shape {:?} is not [{experts}, {n}]", t.shape));
    }
    Ok(Some(t.to_f64s()?.iter().map(|&v| v as f32).collect()))
}

fn refuse_fc3(inputs: &[Option<&Value>], at: &[usize]) -> Result<(), KernelError> {
    for &i in at {
        if optional(inputs, i)?.is_some() {
            return Err(bad_input!(
                "the third expert layer (fc3, input {i}) is not supported, as on onnxruntime's CPU"
            ));
        }
    }
    Ok(())
}

/// MoE: float expert weights `fc1` [E, F1, H] and `fc2` [E, H, I] (F1 = 2·I for SwiGLU).
fn moe(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, router, fc1, fc2) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?, input(inputs, 4)?);
    refuse_fc3(inputs, &[6, 7])?;
    let (tokens, hidden, count_e) = tokens_and_logits(x, router)?;
    let activation = Activation::of(ctx)?;
    let inner = match fc2.shape[..] {
        [e, h, i] if e == count_e && h == hidden => i,
        _ => return Err(bad_input!("fc2_experts_weights of shape {:?} is not [{count_e}, {hidden}, I]", fc2.shape)),
    };
    let f1 = inner * activation.width();
    if fc1.shape != [count_e, f1, hidden] {
        return Err(bad_input!("fc1_experts_weights of shape {:?} is not [{count_e}, {f1}, {hidden}]", fc1.shape));
    }
    let k = experts_per_token(ctx, count_e)?;
    let normalize = ctx.int("normalize_routing_weights").unwrap_or(0) != 0;
    let floats = Tensor::to_f32s;
    let (w1, w2) = (floats(fc1)?, floats(fc2)?);
    let experts = Experts {
        count: count_e,
        hidden,
        inner,
        fc1: &w1,
        fc1_bias: bias(optional(inputs, 3)?, count_e, f1, "fc1_experts_bias")?,
        fc2: &w2,
        fc2_bias: bias(optional(inputs, 5)?, count_e, hidden, "fc2_experts_bias")?,
        activation,
    };
    let logits = floats(router)?;
    run_experts(x, &experts, tokens, |t| {
        let row = &logits[t * experts.count..][..experts.count];
        let p = softmax(row);
        let chosen = top_k(row, k);
        let sum: f32 = chosen.iter().map(|&e| p[e]).sum();
        chosen.into_iter().map(|e| (e, if normalize { p[e] / sum } else { p[e] })).filter(|&(_, w)| w != 0.0).collect()
    })
}

/// The bytes of a uint8 tensor (packed codes or zero points).
fn u8s<'t>(t: &'t Tensor, what: &str) -> Result<&'t [u8], KernelError> {
    match &*t.data {
        Data::U8(v) => Ok(&v[..]),
        _ => Err(bad_input!("{what} is {}: uint8 expected", t.data_type().name())),
    }
}

/// Code `index` of `bytes`, `bits` wide, packed from the low bits of each byte up.
fn code(bytes: &[u8], index: usize, bits: usize) -> u8 {
    let per_byte = 8 / bits;
    let byte = bytes[index / per_byte];
    if bits == 8 { byte } else { (byte >> (bits * (index % per_byte))) & ((1u8 << bits) - 1) }
}

/// One layer's quantized weights, dequantized: `q` [E, N, ⌈K·bits/8⌉] codes, `scales`
/// [E, N] (or [E, N, 1]) per row or [E, N, K/block] per block, `zero_points` packed along
/// rows ([E, ⌈N·bits/8⌉]) or along blocks ([E, N, ⌈(K/block)·bits/8⌉]); `2^(bits−1)` when
/// absent. Returns [E, N, K].
fn dequantize(
    q: &Tensor,
    scales: &Tensor,
    zero_points: Option<&Tensor>,
    (experts, rows, cols): (usize, usize, usize),
    (bits, block): (usize, usize),
    what: &str,
) -> Result<Vec<f32>, KernelError> {
    let row_bytes = (cols * bits).div_ceil(8);
    if q.shape != [experts, rows, row_bytes] {
        return Err(bad_input!("{what} of shape {:?} is not [{experts}, {rows}, {row_bytes}]", q.shape));
    }
    let per_row = scales.len() == experts * rows;
    let blocks = if per_row { 1 } else { cols.checked_div(block).unwrap_or(0) };
    if !per_row && (block == 0 || cols % block != 0 || scales.len() != experts * rows * blocks) {
        return Err(bad_input!(
            "{what}'s scales of shape {:?} are neither one per row nor one per block of {block} of {cols} features",
            scales.shape
        ));
    }
    let codes = u8s(q, what)?;
    let scales: Vec<f32> = scales.to_f64s()?.iter().map(|&v| v as f32).collect();
    let zero = match zero_points {
        None => None,
        Some(z) => {
            let expected = if per_row {
                experts * (rows * bits).div_ceil(8)
            } else {
                experts * rows * (blocks * bits).div_ceil(8)
            };
            if z.len() != expected {
                return Err(bad_input!("{what}'s zero points of shape {:?} do not pack one per scale", z.shape));
            }
            Some(u8s(z, what)?)
        }
    };
    let default_zero = 1u8 << (bits - 1);
    let mut out = Vec::with_capacity(experts * rows * cols);
    for e in 0..experts {
        for r in 0..rows {
            let row = &codes[(e * rows + r) * row_bytes..][..row_bytes];
            for c in 0..cols {
                let (scale, zp) = if per_row {
                    let zp = zero.as_ref().map_or(default_zero, |z| {
                        let width = (rows * bits).div_ceil(8);
                        code(&z[e * width..][..width], r, bits)
                    });
                    (scales[e * rows + r], zp)
                } else {
                    let b = c / block;
                    let zp = zero.as_ref().map_or(default_zero, |z| {
                        let width = (blocks * bits).div_ceil(8);
                        code(&z[(e * rows + r) * width..][..width], b, bits)
                    });
                    (scales[(e * rows + r) * blocks + b], zp)
                };
                out.push((f32::from(code(row, c, bits)) - f32::from(zp)) * scale);
            }
        }
    }
    Ok(out)
}

/// QMoE: expert weights of 2, 4 or 8 bits (`expert_weight_bits`), a scale per row or per
/// `block_size` features, optional zero points; optional `router_weights` [T, E] that
/// replace the softmax of the chosen logits. Routes of weight ≤ 1e-8 are skipped, as
/// onnxruntime does. (onnxruntime quantizes the activations to int8 for 8-bit block-wise
/// weights that are initializers; this computes the dequantized product.)
fn qmoe(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, router) = (input(inputs, 0)?, input(inputs, 1)?);
    let (fc1, fc2) = (input(inputs, 2)?, input(inputs, 5)?);
    refuse_fc3(inputs, &[8, 9, 10, 13])?;
    if !matches!(ctx.string("quant_type").unwrap_or("int"), "int") || ctx.int("weights_prepacked").unwrap_or(-1) == 1 {
        return Err(bad_attribute!("only integer weights in their plain layout are supported"));
    }
    let (bits, _) = weight_bits(ctx)?;
    let (tokens, hidden, count_e) = tokens_and_logits(x, router)?;
    let activation = Activation::of(ctx)?;
    let inner = fc2_inner(fc2, count_e, hidden, bits)?;
    let f1 = inner * activation.width();
    if fc1.shape.get(1) != Some(&f1) {
        return Err(bad_input!("fc1_experts_weights of shape {:?} does not have {f1} rows", fc1.shape));
    }
    let decoded;
    let weights = match ctx.prepared.and_then(|p| p.as_any().downcast_ref::<DequantizedExperts>()) {
        Some(w) if w.dims == (count_e, f1, hidden, inner) => w,
        _ => {
            decoded = dequantize_experts(ctx, inputs, count_e, hidden, f1)?;
            &decoded
        }
    };
    let experts = Experts {
        count: count_e,
        hidden,
        inner,
        fc1: &weights.fc1,
        fc1_bias: bias(optional(inputs, 4)?, count_e, f1, "fc1_experts_bias")?,
        fc2: &weights.fc2,
        fc2_bias: bias(optional(inputs, 7)?, count_e, hidden, "fc2_experts_bias")?,
        activation,
    };
    let k = experts_per_token(ctx, count_e)?;
    let normalize = ctx.int("normalize_routing_weights").unwrap_or(0) != 0;
    let floats = Tensor::to_f32s;
    let logits = floats(router)?;
    let given = match optional(inputs, 14)? {
        Some(w) if w.shape == router.shape => Some(floats(w)?),
        Some(w) => {
            return Err(bad_input!("router_weights of shape {:?} is not router_probs' {:?}", w.shape, router.shape));
        }
        None => None,
    };
    run_experts(x, &experts, tokens, |t| {
        let row = &logits[t * count_e..][..count_e];
        let chosen = top_k(row, k);
        let weights: Vec<f32> = match &given {
            None => softmax(&chosen.iter().map(|&e| row[e]).collect::<Vec<_>>()),
            Some(w) => {
                let picked: Vec<f32> = chosen.iter().map(|&e| w[t * count_e + e]).collect();
                let sum: f32 = picked.iter().sum();
                if !normalize {
                    picked
                } else if sum == 0.0 {
                    vec![0.0; picked.len()]
                } else {
                    picked.iter().map(|&p| p / sum).collect()
                }
            }
        };
        chosen.into_iter().zip(weights).filter(|&(_, w)| w > 1e-8).collect()
    })
}
