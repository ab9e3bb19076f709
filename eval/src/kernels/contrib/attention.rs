//! onnxruntime's attention operators (Attention, MultiHeadAttention, RotaryEmbedding,
//! GroupQueryAttention, SparseAttention; PackedAttention, which has only a CUDA kernel,
//! computed as Attention, and RemovePadding/RestorePadding around it), as its CPU kernels
//! compute them (`contrib_ops/cpu/bert`): heads
//! of `[B, S, N·H]` tensors, scores scaled by `1/√H` (or `scale`), an additive mask built
//! from `mask_index`/`key_padding_mask` the way onnxruntime's `PrepareMask` builds it (the
//! masked keys get `mask_filter_value`, −10000 by default, so a row with every key masked
//! still averages them all), key/value caches grown by this step's keys and values.
//! Computed in f64 and rounded to the input's type at the end.

use onnx_core::ir::DataType;

use super::super::{Ctx, Kernel, count, input, optional};
use super::kv_cache::CacheQuant;
use super::qmatmul::{QuantizedA, matmul_to_float};
use super::quant::{bytes, scale_of, zero_of};
use crate::broadcast::permute;
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::gemm::{View, dgemm, sgemm};
use crate::kernels::common::{numeric_like, rounding};
use crate::kernels::rotary::{Caches, Layout, rotate};
use crate::value::{Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Attention" => attention,
        "MultiHeadAttention" => multi_head_attention,
        "RotaryEmbedding" => rotary_embedding,
        "GroupQueryAttention" => group_query_attention,
        "QAttention" => q_attention,
        "PackedAttention" => packed_attention,
        "PackedMultiHeadAttention" => packed_multi_head_attention,
        "SparseAttention" => sparse_attention,
        "RemovePadding" => remove_padding,
        "RestorePadding" => restore_padding,
        _ => return None,
    };
    Some(k)
}

/// The sizes of one attention: query heads attend over `kv_len` keys of `kv_heads` heads
/// (query head `n` reads key head `n / (heads / kv_heads)`).
struct Dims {
    batch: usize,
    heads: usize,
    kv_heads: usize,
    q_len: usize,
    kv_len: usize,
    head: usize,
    v_head: usize,
}

/// `softmax(scale·Q·Kᵀ + bias)·V` for each head: `q` is [B, N, S, H], `k` [B, Nkv, T, H],
/// `v` [B, Nkv, T, Hv]; `bias(b, n, i, j)` is added to each scaled score (after `softcap`
/// when positive: `softcap·tanh(score/softcap)`), −∞ dropping the key; a row with every
/// key dropped gives zeros. Each biased score is rounded by `round` (to the input's type:
/// onnxruntime adds the mask to the scores in float32, so a score beside a mask of −10000
/// keeps only float32's few fraction bits of −10000's magnitude, which its softmax sees).
/// `sinks` (one logit per query head: GroupQueryAttention's attention sinks) joins each
/// softmax's denominator, and its maximum, without a value: the probabilities then sum to
/// less than one. The result is [B, S, N·Hv].
/// `scores_in` is the type the scores are computed in: float32 goes through [`attend_f32`].
#[allow(clippy::too_many_arguments)]
fn attend(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    d: &Dims,
    (scale, softcap): (f64, f64),
    scores_in: DataType,
    bias: impl Fn(usize, usize, usize, usize) -> f64,
    sinks: Option<&[f64]>,
) -> Result<Vec<f64>, KernelError> {
    if scores_in == DataType::Float {
        return attend_f32(q, k, v, d, (scale, softcap), bias, sinks);
    }
    let round = rounding(scores_in);
    let Dims { batch, heads, kv_heads, q_len, kv_len, head, v_head } = *d;
    let group = (heads / kv_heads.max(1)).max(1);
    let mut y = vec![0.0; batch * q_len * heads * v_head];
    let mut scores = vec![0.0; kv_len];
    for b in 0..batch {
        for n in 0..heads {
            let kh = n / group;
            for i in 0..q_len {
                let qrow = &q[((b * heads + n) * q_len + i) * head..][..head];
                for (j, score) in scores.iter_mut().enumerate() {
                    let krow = &k[((b * kv_heads + kh) * kv_len + j) * head..][..head];
                    let mut s = scale * qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>();
                    if softcap > 0.0 {
                        s = softcap * (s / softcap).tanh();
                    }
                    *score = round(s + bias(b, n, i, j));
                }
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if max == f64::NEG_INFINITY {
                    continue;
                }
                let sink = sinks.map_or(f64::NEG_INFINITY, |s| s[n]);
                let max = max.max(sink);
                scores.iter_mut().for_each(|s| *s = (*s - max).exp());
                let sum: f64 = scores.iter().sum::<f64>() + (sink - max).exp();
                let out = &mut y[((b * q_len + i) * heads + n) * v_head..][..v_head];
                for (j, &e) in scores.iter().enumerate() {
                    if e == 0.0 {
                        continue;
                    }
                    let p = e / sum;
                    let vrow = &v[((b * kv_heads + kh) * kv_len + j) * v_head..][..v_head];
                    for (o, &x) in out.iter_mut().zip(vrow) {
                        *o += p * x;
                    }
                }
            }
        }
    }
    Ok(y)
}

/// [`attend`] in float32, as onnxruntime's CPU kernels compute float32 attention: per head,
/// the scores of all queries as one float32 GEMM (`Q·Kᵀ`, scaled), soft-capped and biased
/// in float32, each row's softmax with the vectorizing exp, and the weighted values as a
/// second GEMM (`P·V`). Per query, the scores as multiply-adds over transposed keys and the
/// values as one multiply-add per key took twice as long on a small ViT's heads (of 8);
/// in f64 with libm's exp, four times as long again.
fn attend_f32(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    d: &Dims,
    (scale, softcap): (f64, f64),
    bias: impl Fn(usize, usize, usize, usize) -> f64,
    sinks: Option<&[f64]>,
) -> Result<Vec<f64>, KernelError> {
    let Dims { batch, heads, kv_heads, q_len, kv_len, head, v_head } = *d;
    let narrow = |x: &[f64]| -> Vec<f32> { x.iter().map(|&v| v as f32).collect() };
    let (q, k, v) = (narrow(q), narrow(k), narrow(v));
    let (scale, softcap) = (scale as f32, softcap as f32);
    let group = (heads / kv_heads.max(1)).max(1);
    let mut y = vec![0.0; batch * q_len * heads * v_head];
    let mut scores = vec![0f32; q_len * kv_len];
    let mut out = vec![0f32; q_len * v_head];
    let mut biases = vec![0f32; kv_len];
    for b in 0..batch {
        for n in 0..heads {
            let kh = n / group;
            let queries = &q[(b * heads + n) * q_len * head..][..q_len * head];
            let keys = &k[(b * kv_heads + kh) * kv_len * head..][..kv_len * head];
            let values = &v[(b * kv_heads + kh) * kv_len * v_head..][..kv_len * v_head];
            // The GEMMs of empty operands are refused; an empty product is all zeros.
            if kv_len == 0 || head == 0 {
                scores.fill(0.0);
            } else {
                sgemm(scale, View::rows(queries, q_len, head), View::rows(keys, kv_len, head).t(), 0.0, &mut scores)?;
            }
            for (i, row) in scores.chunks_exact_mut(kv_len.max(1)).enumerate().take(q_len) {
                // The row's bias first, so that the scores' loop has no calls in it.
                for (j, slot) in biases.iter_mut().enumerate() {
                    *slot = bias(b, n, i, j) as f32;
                }
                crate::simd::widest(
                    #[inline(always)]
                    || {
                        for (score, &add) in row.iter_mut().zip(&biases) {
                            let mut s = *score;
                            if softcap > 0.0 {
                                s = softcap * crate::math::tanh(s / softcap);
                            }
                            *score = s + add;
                        }
                    },
                );
                let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                if max == f32::NEG_INFINITY {
                    // Every key dropped: the row's output is zeros.
                    row.fill(0.0);
                    continue;
                }
                let sink = sinks.map_or(f32::NEG_INFINITY, |s| s[n] as f32);
                let max = max.max(sink);
                let sum = softmax_terms(row, max) + if sink > f32::NEG_INFINITY { (sink - max).exp() } else { 0.0 };
                crate::simd::widest(
                    #[inline(always)]
                    || row.iter_mut().for_each(|e| *e /= sum),
                );
            }
            if kv_len == 0 || v_head == 0 {
                out.fill(0.0);
            } else {
                sgemm(1.0, View::rows(&scores, q_len, kv_len), View::rows(values, kv_len, v_head), 0.0, &mut out)?;
            }
            for (i, o) in out.chunks_exact(v_head.max(1)).enumerate().take(q_len) {
                let at = ((b * q_len + i) * heads + n) * v_head;
                for (y, &x) in y[at..at + v_head].iter_mut().zip(o) {
                    *y = f64::from(x);
                }
            }
        }
    }
    Ok(y)
}

/// `e^(s − max)` in place of each score (a dropped key's −∞ gives 0), and their sum.
fn softmax_terms(scores: &mut [f32], max: f32) -> f32 {
    crate::simd::widest(
        #[inline(always)]
        || {
            for s in scores.iter_mut() {
                *s = if *s == f32::NEG_INFINITY { 0.0 } else { crate::math::exp(*s - max) };
            }
        },
    );
    scores.iter().sum()
}

/// The biased scaled scores [B, N, S, T] `attend` takes the softmax of (without soft capping).
fn scores(
    q: &[f64],
    k: &[f64],
    d: &Dims,
    scale: f64,
    round: fn(f64) -> f64,
    bias: impl Fn(usize, usize, usize, usize) -> f64,
) -> Vec<f64> {
    let Dims { batch, heads, kv_heads, q_len, kv_len, head, .. } = *d;
    let group = (heads / kv_heads.max(1)).max(1);
    let mut out = Vec::with_capacity(batch * heads * q_len * kv_len);
    for b in 0..batch {
        for n in 0..heads {
            for i in 0..q_len {
                let qrow = &q[((b * heads + n) * q_len + i) * head..][..head];
                for j in 0..kv_len {
                    let krow = &k[((b * kv_heads + n / group) * kv_len + j) * head..][..head];
                    let s = scale * qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>();
                    out.push(round(s + bias(b, n, i, j)));
                }
            }
        }
    }
    out
}

/// The `num_heads` attribute, positive.
fn num_heads(ctx: &Ctx<'_>, name: &str) -> Result<usize, KernelError> {
    ctx.int(name)
        .and_then(|h| usize::try_from(h).ok())
        .filter(|&h| h > 0)
        .ok_or(bad_attribute!("{name} must be a positive number of heads"))
}

/// The scale of the scores: the `scale` attribute, or `1/√head` when it is absent or 0.
fn scale(ctx: &Ctx<'_>, head: usize) -> f64 {
    match ctx.float("scale") {
        Some(s) if s != 0.0 => f64::from(s),
        _ => 1.0 / (head as f64).sqrt(),
    }
}

/// [B, S, N·H] (a slice of `width` columns from column `from` of rows of `stride`) as
/// [B, N, S, H].
fn split_heads(
    x: &[f64],
    (batch, len, stride): (usize, usize, usize),
    from: usize,
    heads: usize,
    head: usize,
) -> Vec<f64> {
    let width = heads * head;
    let mut cols = Vec::with_capacity(batch * len * width);
    for row in x.chunks(stride.max(1)).take(batch * len) {
        cols.extend_from_slice(&row[from..from + width]);
    }
    permute(&cols, &[batch, len, heads, head], &[0, 2, 1, 3])
}

/// `a` [B, N, P, H] then `b` [B, N, L, H] along the sequence: [B, N, P + L, H].
fn concat_sequence(a: &[f64], b: &[f64], bn: usize, (past, len): (usize, usize), head: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    for i in 0..bn {
        out.extend_from_slice(&a[i * past * head..][..past * head]);
        out.extend_from_slice(&b[i * len * head..][..len * head]);
    }
    out
}

/// The additive mask [B, S, T] onnxruntime's `PrepareMask` builds from a mask index (int32)
/// for S queries over T = past + L keys: 1-D, the end positions per batch entry (keys from
/// there on masked), or [2B], the ends then the start positions (keys before masked); 2-D
/// [B, T], 1 to keep a key and 0 to mask it (a [B or 1, 1] mask masks nothing); 3-D
/// [B, S, T] likewise per query. Masked keys get `filter`; with `causal`, the keys after
/// each query's position (past + i) get the lowest float. `None` when nothing is masked.
fn prepare_mask(
    mask: Option<&Tensor>,
    (batch, q_len, past, total): (usize, usize, usize, usize),
    causal: bool,
    filter: f64,
) -> Result<Option<Vec<f64>>, KernelError> {
    let mask = mask.filter(|m| !(m.rank() == 2 && m.shape[1] == 1 && (m.shape[0] == batch || m.shape[0] == 1)));
    if mask.is_none() && !causal {
        return Ok(None);
    }
    let row = q_len * total;
    let mut out = vec![0.0; batch * row];
    if let Some(m) = mask {
        let values = m.to_i64s()?;
        match m.shape[..] {
            [n] if n == batch || n == 2 * batch => {
                for b in 0..batch {
                    let rows = &mut out[b * row..][..row];
                    let end = usize::try_from(values[b]).unwrap_or(0);
                    let start = if n == 2 * batch { usize::try_from(values[batch + b]).unwrap_or(0) } else { 0 };
                    for i in 0..q_len {
                        for (j, x) in rows[i * total..][..total].iter_mut().enumerate() {
                            if j >= end || j < start {
                                *x = filter;
                            }
                        }
                    }
                }
            }
            [mb, mt] if mb == batch && mt == total => {
                for b in 0..batch {
                    for i in 0..q_len {
                        for j in 0..total {
                            if values[b * total + j] <= 0 {
                                out[b * row + i * total + j] = filter;
                            }
                        }
                    }
                }
            }
            [mb, ms, mt] if mb == batch && ms == q_len && mt == total => {
                for (x, &keep) in out.iter_mut().zip(&values) {
                    if keep <= 0 {
                        *x = filter;
                    }
                }
            }
            _ => {
                return Err(bad_input!(
                    "the mask of shape {:?} is none of [{batch}], [{}], [{batch}, {total}] and [{batch}, {q_len}, {total}] (onnxruntime's CPU kernel takes no 4-D mask)",
                    m.shape,
                    2 * batch
                ));
            }
        }
    }
    if causal {
        let lowest = f64::from(f32::MIN);
        for b in 0..batch {
            for i in 0..q_len {
                for j in (past + i + 1).min(total)..total {
                    out[b * row + i * total + j] = lowest;
                }
            }
        }
    }
    Ok(Some(out))
}

/// attention_bias [B or 1, N or 1, S, T], added to the scores.
fn attention_bias(
    t: Option<&Tensor>,
    (batch, heads, q_len, total): (usize, usize, usize, usize),
) -> Result<Option<Vec<f64>>, KernelError> {
    let Some(t) = t else { return Ok(None) };
    let fits = matches!(t.shape[..], [b, n, s, l] if (b == batch || b == 1) && (n == heads || n == 1) && s == q_len && l == total);
    if !fits {
        return Err(bad_input!(
            "attention_bias of shape {:?} is not [{batch} or 1, {heads} or 1, {q_len}, {total}]",
            t.shape
        ));
    }
    let values = t.to_f64s()?;
    let (bs, ns) = (t.shape[0] == batch, t.shape[1] == heads);
    let mut out = Vec::with_capacity(batch * heads * q_len * total);
    for b in 0..batch {
        for n in 0..heads {
            let at = ((if bs { b } else { 0 }) * t.shape[1] + if ns { n } else { 0 }) * q_len * total;
            out.extend_from_slice(&values[at..][..q_len * total]);
        }
    }
    Ok(Some(out))
}

/// The bias of score (b, n, i, j) from the mask [B, S, T] and the attention bias [B, N, S, T].
fn bias_of<'a>(
    mask: &'a Option<Vec<f64>>,
    extra: &'a Option<Vec<f64>>,
    (heads, q_len, total): (usize, usize, usize),
) -> impl Fn(usize, usize, usize, usize) -> f64 + 'a {
    move |b, n, i, j| {
        let m = mask.as_ref().map_or(0.0, |m| m[(b * q_len + i) * total + j]);
        let e = extra.as_ref().map_or(0.0, |e| e[((b * heads + n) * q_len + i) * total + j]);
        m + e
    }
}

/// A 3-D input's dims.
fn three(t: &Tensor, what: &str) -> Result<(usize, usize, usize), KernelError> {
    match t.shape[..] {
        [b, s, d] => Ok((b, s, d)),
        _ => Err(bad_input!("{what} of shape {:?} is not 3-D", t.shape)),
    }
}

/// com.microsoft Attention: Q, K and V from one product `input·weights + bias` (their widths
/// `qkv_hidden_sizes`, or a third of the weights' each), `past` [2, B, N, P, H] in front of
/// this step's keys and values, which `present` returns.
fn attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    let heads = num_heads(ctx, "num_heads")?;
    // A cache shared with present (written in place at past_sequence_length) and rotary
    // embedding of Q and K: not implemented here, refused rather than ignored.
    if ctx.int("past_present_share_buffer").unwrap_or(0) != 0 || ctx.int("do_rotary").unwrap_or(0) != 0 {
        return Err(bad_attribute!("past_present_share_buffer and do_rotary are not supported"));
    }
    let (batch, len, dim) = three(x, "input")?;
    let (qkv, sizes) = project(ctx, (x, batch * len, dim), w, optional(inputs, 2)?, heads)?;
    let sizes = Projected { batch, len, heads, sizes };
    attend_projected(
        ctx,
        &qkv,
        &sizes,
        x.data_type(),
        (optional(inputs, 3)?, optional(inputs, 4)?, optional(inputs, 5)?),
    )
}

/// The widths of Q, K and V in a projection.
type QkvSizes = (usize, usize, usize);

/// Attention's and PackedAttention's projection `x·weights + bias` of `rows` rows of
/// width `dim`: `[rows, qs + ks + vs]`, and the widths of Q, K and V (`qkv_hidden_sizes`,
/// or a third of the weights' width each).
fn project(
    ctx: &Ctx<'_>,
    (x, rows, dim): (&Tensor, usize, usize),
    w: &Tensor,
    bias: Option<&Tensor>,
    heads: usize,
) -> Result<(Vec<f64>, QkvSizes), KernelError> {
    let total = match w.shape[..] {
        [r, cols] if r == dim => cols,
        _ => return Err(bad_input!("weights of shape {:?} are not [{dim}, 3·hidden]", w.shape)),
    };
    let (qs, ks, vs) = match ctx.ints("qkv_hidden_sizes") {
        None | Some([]) if total % 3 == 0 => (total / 3, total / 3, total / 3),
        None | Some([]) => return Err(bad_input!("weights of width {total} do not split in three")),
        Some(&[q, k, v]) => {
            let size = |s: i64| usize::try_from(s).map_err(|_| bad_attribute!("qkv_hidden_sizes holds {s}"));
            (size(q)?, size(k)?, size(v)?)
        }
        Some(other) => return Err(bad_attribute!("qkv_hidden_sizes {other:?} does not hold three sizes")),
    };
    if qs.checked_add(ks).and_then(|n| n.checked_add(vs)) != Some(total)
        || qs != ks
        || qs % heads != 0
        || vs % heads != 0
    {
        return Err(bad_input!(
            "hidden sizes {qs}, {ks} and {vs} do not fit weights of width {total} and {heads} heads"
        ));
    }
    ctx.check_elements(count(&[rows, total])?)?;
    if let Some(bias) = bias
        && bias.shape[..] != [total]
    {
        return Err(bad_input!("bias of shape {:?} is not [{total}]", bias.shape));
    }
    // The GEMM adds onto the bias in every row (beta 1), or onto zeros.
    let beta = if bias.is_some() { 1.0 } else { 0.0 };
    let float = |t: &&Tensor| matches!(t.data_type(), DataType::Float | DataType::Float16 | DataType::Bfloat16);
    if [Some(x), Some(w), bias].iter().flatten().all(float) {
        // As onnxruntime computes it: one float32 GEMM, without converting the weights on
        // every run. (Its CPU Attention has only a float32 kernel: float16 inputs are cast
        // to float32 and the outputs back.)
        let mut qkv = bias_rows(bias.map(|b| ctx.f32s(b, 2)).transpose()?.as_deref(), rows, total);
        let (xv, wv) = (x.to_f32s()?, ctx.f32s(w, 1)?);
        sgemm(1.0, View::rows(&xv, rows, dim), View::rows(&wv, dim, total), beta as f32, &mut qkv)?;
        return Ok((qkv.into_iter().map(f64::from).collect(), (qs, ks, vs)));
    }
    let mut qkv = bias_rows(bias.map(Tensor::to_f64s).transpose()?.as_deref(), rows, total);
    let (xv, wv) = (x.to_f64s()?, w.to_f64s()?);
    dgemm(1.0, View::rows(&xv, rows, dim), View::rows(&wv, dim, total), beta, &mut qkv)?;
    Ok((qkv, (qs, ks, vs)))
}

/// `rows` rows of `width` values: each the bias, or zeros without one.
fn bias_rows<T: Copy + Default>(bias: Option<&[T]>, rows: usize, width: usize) -> Vec<T> {
    let mut out = vec![T::default(); rows * width];
    if let Some(bias) = bias {
        out.chunks_mut(width.max(1)).for_each(|row| row.copy_from_slice(bias));
    }
    out
}

/// PackedAttention (onnxruntime has only a CUDA kernel): Attention over sequences packed
/// without their padding. input `[T, D]` holds the T real tokens; `token_offset` `[B, S]`
/// places packed token t at position `token_offset[t]` of the padded `[B·S]` rows, and
/// `cumulative_sequence_length` `[B + 1]` gives each sequence's length, whose keys are
/// the only ones its tokens attend to. Computed as Attention on the padded rows with those
/// lengths as the mask index (padding keys weigh nothing), then packed back: `[T, v_hidden]`.
fn packed_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w) = (input(inputs, 0)?, input(inputs, 1)?);
    let heads = num_heads(ctx, "num_heads")?;
    let (tokens, dim) = match x.shape[..] {
        [t, d] => (t, d),
        _ => return Err(bad_input!("input of shape {:?} is not [tokens, hidden]", x.shape)),
    };
    let packing = Packing::read(input(inputs, 3)?, input(inputs, 4)?, tokens)?;
    let (batch, len) = (packing.batch, packing.len);
    let (packed, sizes) = project(ctx, (x, tokens, dim), w, optional(inputs, 2)?, heads)?;
    let width = sizes.0 + sizes.1 + sizes.2;
    ctx.check_elements(count(&[batch, len, width])?)?;
    let qkv = packing.pad(&packed, width);
    let mask = packing.lengths_tensor()?;
    let projected = Projected { batch, len, heads, sizes };
    let padded = attend_projected(ctx, &qkv, &projected, x.data_type(), (Some(&mask), None, optional(inputs, 5)?))?;
    let Some(Value::Tensor(y)) = padded.first() else { return Err(bad_input!("the attention gave no tensor")) };
    let out = packing.pack(&y.to_f64s()?, sizes.2);
    Ok(vec![Value::Tensor(numeric_like(x.data_type(), vec![tokens, sizes.2], out)?)])
}

/// RemovePadding (before PackedAttention; CUDA only in onnxruntime): input `[B, S, H]`
/// padded on the right, `sequence_token_count` `[B]` the real tokens of each sequence.
/// Outputs: the real tokens `[T, H]` in order, `token_offset` `[B, S]` (the real tokens'
/// positions in `[B·S]`, then the padding's), `cumulated_seq_len` `[B + 1]` and
/// `max_seq_len` `[1]`.
fn remove_padding(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, counts) = (input(inputs, 0)?, input(inputs, 1)?);
    let (batch, len, hidden) = three(x, "input")?;
    ctx.check_elements(count(&[batch, len])?)?;
    let counts = counts.to_i64s()?;
    if counts.len() != batch {
        return Err(bad_input!("sequence_token_count holds {} counts for a batch of {batch}", counts.len()));
    }
    let mut lengths = Vec::with_capacity(batch);
    for &n in &counts {
        match usize::try_from(n) {
            Ok(n) if n <= len => lengths.push(n),
            _ => return Err(bad_input!("sequence_token_count holds {n}, not a count of at most {len} tokens")),
        }
    }
    let real = (0..batch).flat_map(|b| (0..lengths[b]).map(move |j| b * len + j));
    let padding = (0..batch).flat_map(|b| (lengths[b]..len).map(move |j| b * len + j));
    let offsets: Vec<usize> = real.chain(padding).collect();
    let tokens: usize = lengths.iter().sum();
    let values = x.to_f64s()?;
    let mut packed = Vec::with_capacity(tokens * hidden);
    for &r in &offsets[..tokens] {
        packed.extend_from_slice(&values[r * hidden..][..hidden]);
    }
    let int32 = |shape: Vec<usize>, v: Vec<f64>| numeric_like(DataType::Int32, shape, v).map(Value::Tensor);
    let mut cumulative = vec![0.0];
    cumulative.extend(lengths.iter().scan(0, |sum, &n| {
        *sum += n;
        Some(*sum as f64)
    }));
    Ok(vec![
        Value::Tensor(numeric_like(x.data_type(), vec![tokens, hidden], packed)?),
        int32(vec![batch, len], offsets.iter().map(|&o| o as f64).collect())?,
        int32(vec![batch + 1], cumulative)?,
        int32(vec![1], vec![lengths.iter().copied().max().unwrap_or(0) as f64])?,
    ])
}

/// RestorePadding (after PackedAttention; CUDA only in onnxruntime): the packed tokens
/// `[T, H]` put back at their positions `token_offset[t]` of `[B, S, H]`, zeros elsewhere.
fn restore_padding(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, offsets_t) = (input(inputs, 0)?, input(inputs, 1)?);
    let (tokens, hidden) = match x.shape[..] {
        [t, h] => (t, h),
        _ => return Err(bad_input!("input of shape {:?} is not [tokens, hidden]", x.shape)),
    };
    let packing = Packing::places(offsets_t, tokens)?;
    let (batch, len) = (packing.batch, packing.len);
    ctx.check_elements(count(&[batch, len, hidden])?)?;
    let out = packing.pad(&x.to_f64s()?, hidden);
    Ok(vec![Value::Tensor(numeric_like(x.data_type(), vec![batch, len, hidden], out)?)])
}

/// Where packed tokens go among the padded positions (PackedAttention,
/// PackedMultiHeadAttention): `token_offset` `[B, S]` places token t at position
/// `token_offset[t]` of `[B·S]`; `cumulative_sequence_length` `[B + 1]` gives each
/// sequence's length.
struct Packing {
    batch: usize,
    len: usize,
    rows: Vec<usize>,
    lengths: Vec<usize>,
}

impl Packing {
    /// Where `tokens` packed tokens go (`lengths` left empty: RestorePadding needs none).
    fn places(offsets_t: &Tensor, tokens: usize) -> Result<Self, KernelError> {
        let (batch, len) = match offsets_t.shape[..] {
            [b, s] if b * s >= tokens => (b, s),
            _ => {
                return Err(bad_input!(
                    "token_offset of shape {:?} is not [batch, sequence] of at least the {tokens} tokens",
                    offsets_t.shape
                ));
            }
        };
        let offsets = offsets_t.to_i64s()?;
        let mut rows = Vec::with_capacity(tokens);
        for &at in &offsets[..tokens] {
            match usize::try_from(at) {
                Ok(r) if r < batch * len => rows.push(r),
                _ => return Err(bad_input!("token_offset holds {at}, outside the {} padded positions", batch * len)),
            }
        }
        Ok(Packing { batch, len, rows, lengths: Vec::new() })
    }

    /// Where `tokens` packed tokens go, and each sequence's length.
    fn read(offsets_t: &Tensor, cumulative_t: &Tensor, tokens: usize) -> Result<Self, KernelError> {
        let mut packing = Self::places(offsets_t, tokens)?;
        let (batch, len) = (packing.batch, packing.len);
        let cumulative = cumulative_t.to_i64s()?;
        let bad_lengths = || {
            bad_input!(
                "cumulative_sequence_length {cumulative:?} is not {} rising counts from 0 to the {tokens} tokens, each step at most {len}",
                batch + 1
            )
        };
        if cumulative.len() != batch + 1
            || cumulative.first() != Some(&0)
            || cumulative.last() != Some(&(tokens as i64))
        {
            return Err(bad_lengths());
        }
        for pair in cumulative.windows(2) {
            match pair[1].checked_sub(pair[0]).map(usize::try_from) {
                Some(Ok(n)) if n <= len => packing.lengths.push(n),
                _ => return Err(bad_lengths()),
            }
        }
        Ok(packing)
    }

    /// The sequences' lengths as a 1-D int32 mask index (Attention's form of them).
    fn lengths_tensor(&self) -> Result<Tensor, KernelError> {
        numeric_like(DataType::Int32, vec![self.batch], self.lengths.iter().map(|&n| n as f64).collect())
    }

    /// Packed rows of `width` as the padded `[B·S, width]`, zeros at the padding.
    fn pad(&self, packed: &[f64], width: usize) -> Vec<f64> {
        let mut out = vec![0.0; self.batch * self.len * width];
        for (t, &r) in self.rows.iter().enumerate() {
            out[r * width..][..width].copy_from_slice(&packed[t * width..][..width]);
        }
        out
    }

    /// The packed tokens' rows of padded `[B·S, width]` rows.
    fn pack(&self, padded: &[f64], width: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.rows.len() * width);
        for &r in &self.rows {
            out.extend_from_slice(&padded[r * width..][..width]);
        }
        out
    }
}

/// PackedMultiHeadAttention (CUDA only in onnxruntime): MultiHeadAttention over sequences
/// packed without their padding: query, key and value `[T, D]`, `[T, D]` and `[T, Dv]`
/// (or Q, K and V packed in a query `[T, N, 3, H]`), `bias` `[D + D + Dv]` added,
/// placed by `token_offset` and `cumulative_sequence_length` as PackedAttention's are,
/// each token attending to its own sequence's keys; `attention_bias` `[B or 1, N or 1, S, S]`.
/// The result `[T, Dv]`.
fn packed_multi_head_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let qt = input(inputs, 0)?;
    let heads = num_heads(ctx, "num_heads")?;
    let tokens = *qt.shape.first().ok_or(bad_input!("the query is a scalar"))?;
    let (mut q, mut k, mut v, qs, vs) = match qt.shape[..] {
        [_, n, 3, h] if n == heads => {
            let all = qt.to_f64s()?;
            let width = count(&[n, h])?;
            (part_of(&all, 3, h, 0), part_of(&all, 3, h, 1), part_of(&all, 3, h, 2), width, width)
        }
        [_, d] => {
            let (kt, vt) = (input(inputs, 1)?, input(inputs, 2)?);
            match (&kt.shape[..], &vt.shape[..]) {
                ([kt_, kd], [vt_, vd]) if *kt_ == tokens && *vt_ == tokens && *kd == d => {
                    (qt.to_f64s()?, kt.to_f64s()?, vt.to_f64s()?, d, *vd)
                }
                _ => {
                    return Err(bad_input!(
                        "key {:?} and value {:?} are not [{tokens}, {d}] and [{tokens}, Dv]",
                        kt.shape,
                        vt.shape
                    ));
                }
            }
        }
        _ => return Err(bad_input!("query of shape {:?} is neither [T, D] nor [T, {heads}, 3, H]", qt.shape)),
    };
    if qs % heads != 0 || vs % heads != 0 {
        return Err(bad_input!("widths {qs} and {vs} do not divide into {heads} heads"));
    }
    let all_widths = count(&[2, qs])?.checked_add(vs).ok_or(bad_input!("widths {qs} and {vs} are too large"))?;
    if let Some(bias) = optional(inputs, 3)? {
        if bias.shape[..] != [all_widths] {
            return Err(bad_input!("bias of shape {:?} is not [{all_widths}]", bias.shape));
        }
        let b = bias.to_f64s()?;
        for (values, from, width) in [(&mut q, 0, qs), (&mut k, qs, qs), (&mut v, 2 * qs, vs)] {
            for row in values.chunks_mut(width.max(1)) {
                row.iter_mut().zip(&b[from..from + width]).for_each(|(x, y)| *x += y);
            }
        }
    }
    let packing = Packing::read(input(inputs, 4)?, input(inputs, 5)?, tokens)?;
    let (batch, len) = (packing.batch, packing.len);
    ctx.check_elements(count(&[batch, len, all_widths])?)?;
    let (head, v_head) = (qs / heads, vs / heads);
    let q = split_heads(&packing.pad(&q, qs), (batch, len, qs), 0, heads, head);
    let k = split_heads(&packing.pad(&k, qs), (batch, len, qs), 0, heads, head);
    let v = split_heads(&packing.pad(&v, vs), (batch, len, vs), 0, heads, v_head);
    let lengths = packing.lengths_tensor()?;
    let filter = f64::from(ctx.float("mask_filter_value").unwrap_or(-10000.0));
    let mask = prepare_mask(Some(&lengths), (batch, len, 0, len), false, filter)?;
    let extra = attention_bias(optional(inputs, 6)?, (batch, heads, len, len))?;
    let d = Dims { batch, heads, kv_heads: heads, q_len: len, kv_len: len, head, v_head };
    ctx.check_elements(count(&[batch, heads, len, len])?)?;
    let dt = qt.data_type();
    let y = attend(&q, &k, &v, &d, (scale(ctx, head), 0.0), dt, bias_of(&mask, &extra, (heads, len, len)), None)?;
    Ok(vec![Value::Tensor(numeric_like(dt, vec![tokens, vs], packing.pack(&y, vs))?)])
}

/// The sizes of Attention's projection `[B, S, qs + ks + vs]` of `heads` heads.
struct Projected {
    batch: usize,
    len: usize,
    heads: usize,
    sizes: (usize, usize, usize),
}

/// Attention (and QAttention) after the projection: `qkv` [B, S, qs + ks + vs] split in
/// heads, `past` [2, B, N, P, H] in front of the keys and values, the mask index and the
/// attention bias added to the scores; the output [B, S, vs] and present of type `dt`.
fn attend_projected(
    ctx: &Ctx<'_>,
    qkv: &[f64],
    p: &Projected,
    dt: DataType,
    (mask, past, extra): (Option<&Tensor>, Option<&Tensor>, Option<&Tensor>),
) -> Result<Vec<Value>, KernelError> {
    let Projected { batch, len, heads, sizes: (qs, ks, vs) } = *p;
    let total = qs + ks + vs;
    let (head, v_head) = (qs / heads, vs / heads);
    let shape = (batch, len, total);
    let q = split_heads(qkv, shape, 0, heads, head);
    let mut k = split_heads(qkv, shape, qs, heads, head);
    let mut v = split_heads(qkv, shape, qs + ks, heads, v_head);
    let mut past_len = 0;
    if let Some(past) = past {
        match past.shape[..] {
            [2, b, n, p, h] if b == batch && n == heads && h == head && h == v_head => {
                let pv = past.to_f64s()?;
                let half = pv.len() / 2;
                k = concat_sequence(&pv[..half], &k, batch * heads, (p, len), head);
                v = concat_sequence(&pv[half..], &v, batch * heads, (p, len), head);
                past_len = p;
            }
            _ => return Err(bad_input!("past of shape {:?} is not [2, {batch}, {heads}, P, {head}]", past.shape)),
        }
    }
    let kv_total = past_len + len;
    let causal = ctx.int("unidirectional").unwrap_or(0) != 0 && len > 1;
    let filter = f64::from(ctx.float("mask_filter_value").unwrap_or(-10000.0));
    let mask = prepare_mask(mask, (batch, len, past_len, kv_total), causal, filter)?;
    let extra = attention_bias(extra, (batch, heads, len, kv_total))?;
    let d = Dims { batch, heads, kv_heads: heads, q_len: len, kv_len: kv_total, head, v_head };
    ctx.check_elements(count(&[batch, heads, len, kv_total])?)?;
    // onnxruntime's CPU Attention has only a float32 kernel: a float16 node's inputs are
    // cast to float32, and its outputs rounded back once.
    let scores_in = if matches!(dt, DataType::Float16 | DataType::Bfloat16) { DataType::Float } else { dt };
    let bias = bias_of(&mask, &extra, (heads, len, kv_total));
    let y = attend(&q, &k, &v, &d, (scale(ctx, head), 0.0), scores_in, bias, None)?;
    let mut out = vec![Value::Tensor(numeric_like(dt, vec![batch, len, vs], y)?)];
    if ctx.node.outputs.len() > 1 {
        let mut present = k;
        present.extend(v);
        out.push(Value::Tensor(numeric_like(dt, vec![2, batch, heads, kv_total, head], present)?));
    }
    Ok(out)
}

/// com.microsoft QAttention (onnxruntime's dynamically quantized Attention): the 8-bit input
/// (its scale input 3, zero point input 6) times the 8-bit weights (scale input 4 and zero
/// point input 7, one or one per column), taken in integers and scaled to float32 plus the
/// bias (input 2), as MatMulIntegerToFloat computes it; then Attention's heads on the
/// three equal parts, with the mask index (input 5) and past (input 8).
fn q_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w, bias) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let heads = num_heads(ctx, "num_heads")?;
    if ctx.int("past_present_share_buffer").unwrap_or(0) != 0 || ctx.int("do_rotary").unwrap_or(0) != 0 {
        return Err(bad_attribute!("past_present_share_buffer and do_rotary are not supported"));
    }
    let (batch, len, dim) = three(x, "input")?;
    let total = match w.shape[..] {
        [rows, cols] if rows == dim && cols % 3 == 0 && (cols / 3) % heads == 0 => cols,
        _ => return Err(bad_input!("weights of shape {:?} are not [{dim}, 3·hidden] of {heads} heads", w.shape)),
    };
    let (qx, signed) = bytes(x, "input")?;
    let x_scale = scale_of(input(inputs, 3)?, "input_scale")?;
    let x_zero = zero_of(optional(inputs, 6)?, "input_zero_point")?;
    ctx.check_elements(count(&[batch, len, total])?)?;
    let quantized = QuantizedA { shape: &x.shape, values: &qx, signed, zero: x_zero, scale: x_scale };
    let projected = matmul_to_float(ctx, &quantized, w, input(inputs, 4)?, optional(inputs, 7)?, Some(bias))?;
    let qkv = match projected.first() {
        Some(Value::Tensor(t)) => t.to_f64s()?,
        _ => return Err(bad_input!("the quantized projection gave no tensor")),
    };
    let sizes = Projected { batch, len, heads, sizes: (total / 3, total / 3, total / 3) };
    attend_projected(ctx, &qkv, &sizes, DataType::Float, (optional(inputs, 5)?, optional(inputs, 8)?, None))
}

/// MultiHeadAttention: query [B, S, D], key and value [B, L, D] and [B, L, Dv] (their heads
/// split, `bias` [D + D + Dv] added) or already in heads [B, N, L, H] (cross attention),
/// `past_key`/`past_value` [B, N, P, H] in front of the keys and values, which
/// `present_key`/`present_value` return.
fn multi_head_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let heads = num_heads(ctx, "num_heads")?;
    if optional(inputs, 9)?.is_some() {
        return Err(bad_input!("cache_indirection (input 9, beam search's) is not supported"));
    }
    // Packed forms (onnxruntime's CUDA kernel takes them; the UNet optimizer writes them):
    // Q, K and V in one query [B, S, N, 3, H], or K and V in one key [B, L, N, 2, H].
    let (qt, kt, vt) = (input(inputs, 0)?, optional(inputs, 1)?, optional(inputs, 2)?);
    let (packed_q, packed_k, packed_v);
    let (qt, kt, vt) = match (qt.rank(), kt.map(Tensor::rank), vt) {
        (5, None, None) => {
            (packed_q, packed_k, packed_v) =
                (unpack_heads(qt, heads, 3, 0)?, unpack_heads(qt, heads, 3, 1)?, unpack_heads(qt, heads, 3, 2)?);
            (&packed_q, &packed_k, &packed_v)
        }
        (3, Some(5), None) => {
            let kv = kt.ok_or(bad_input!("the packed key and value are missing"))?;
            (packed_k, packed_v) = (unpack_heads(kv, heads, 2, 0)?, unpack_heads(kv, heads, 2, 1)?);
            (qt, &packed_k, &packed_v)
        }
        (_, Some(_), None) | (_, None, Some(_)) => {
            return Err(bad_input!("key and value come together, unless the key packs both [B, L, N, 2, H]"));
        }
        (_, None, None) => return Err(bad_input!("key and value are needed unless the query packs Q, K and V")),
        (_, Some(_), Some(vt)) => (qt, kt.ok_or(bad_input!("the key is missing"))?, vt),
    };
    let (batch, len, qs) = match qt.shape[..] {
        [b, s, d] => (b, s, d),
        _ => return Err(bad_input!("query of shape {:?} is not [B, S, D] nor [B, S, N, 3, H]", qt.shape)),
    };
    if qs % heads != 0 {
        return Err(bad_input!("query width {qs} does not divide into {heads} heads"));
    }
    let head = qs / heads;
    let bias = optional(inputs, 3)?.map(Tensor::to_f64s).transpose()?;
    let q_values = qt.to_f64s()?;
    let add = |values: Vec<f64>, from: usize, width: usize| -> Result<Vec<f64>, KernelError> {
        let Some(bias) = &bias else { return Ok(values) };
        let b = bias.get(from..from + width).ok_or(bad_input!("bias holds {} values, too few", bias.len()))?;
        Ok(values.chunks(width.max(1)).flat_map(|row| row.iter().zip(b).map(|(x, y)| x + y)).collect())
    };
    let q = split_heads(&add(q_values, 0, qs)?, (batch, len, qs), 0, heads, head);
    let (kv_len, v_head, mut k, mut v) = match (&kt.shape[..], &vt.shape[..]) {
        (&[kb, kl, kd], &[vb, vl, vd]) if kb == batch && vb == batch && kl == vl && kd == qs && vd % heads == 0 => {
            let k = split_heads(&add(kt.to_f64s()?, qs, qs)?, (batch, kl, qs), 0, heads, head);
            let v = split_heads(&add(vt.to_f64s()?, 2 * qs, vd)?, (batch, vl, vd), 0, heads, vd / heads);
            (kl, vd / heads, k, v)
        }
        (&[kb, kn, kl, kh], &[vb, vn, vl, vh])
            if kb == batch && vb == batch && kn == heads && vn == heads && kl == vl && kh == head =>
        {
            (kl, vh, kt.to_f64s()?, vt.to_f64s()?)
        }
        _ => {
            return Err(bad_input!(
                "key {:?} and value {:?} are neither [{batch}, L, {qs}] nor [{batch}, {heads}, L, {head}] (onnxruntime's CPU kernel takes no packed KV)",
                kt.shape,
                vt.shape
            ));
        }
    };
    let mut past_len = 0;
    if let (Some(pk), Some(pv)) = (optional(inputs, 6)?, optional(inputs, 7)?) {
        let fits = |t: &Tensor, h: usize| matches!(t.shape[..], [b, n, _, hh] if b == batch && n == heads && hh == h);
        if !fits(pk, head) || !fits(pv, v_head) || pk.shape[2] != pv.shape[2] {
            return Err(bad_input!(
                "past_key {:?} and past_value {:?} do not fit the keys and values",
                pk.shape,
                pv.shape
            ));
        }
        past_len = pk.shape[2];
        k = concat_sequence(&pk.to_f64s()?, &k, batch * heads, (past_len, kv_len), head);
        v = concat_sequence(&pv.to_f64s()?, &v, batch * heads, (past_len, kv_len), v_head);
    }
    let total = past_len + kv_len;
    let causal = ctx.int("unidirectional").unwrap_or(0) != 0 && len > 1;
    let filter = f64::from(ctx.float("mask_filter_value").unwrap_or(-10000.0));
    let mask = prepare_mask(optional(inputs, 4)?, (batch, len, past_len, total), causal, filter)?;
    let extra = attention_bias(optional(inputs, 5)?, (batch, heads, len, total))?;
    let d = Dims { batch, heads, kv_heads: heads, q_len: len, kv_len: total, head, v_head };
    ctx.check_elements(count(&[batch, heads, len, total])?)?;
    let round = rounding(qt.data_type());
    let bias = bias_of(&mask, &extra, (heads, len, total));
    let y = attend(&q, &k, &v, &d, (scale(ctx, head), 0.0), qt.data_type(), &bias, None)?;
    // qk: the scaled scores with the mask and attention_bias added, before the softmax.
    let qk = (ctx.node.outputs.len() > 3).then(|| scores(&q, &k, &d, scale(ctx, head), round, &bias));
    let dt = qt.data_type();
    let mut out = vec![Value::Tensor(numeric_like(dt, vec![batch, len, heads * v_head], y)?)];
    if ctx.node.outputs.len() > 1 {
        out.push(Value::Tensor(numeric_like(dt, vec![batch, heads, total, head], k)?));
        out.push(Value::Tensor(numeric_like(dt, vec![batch, heads, total, v_head], v)?));
    }
    if let Some(qk) = qk {
        out.push(Value::Tensor(numeric_like(dt, vec![batch, heads, len, total], qk)?));
    }
    Ok(out)
}

/// GroupQueryAttention's attention sinks: `head_sink` [N] (one logit per query head), or a
/// logit of 0 for every head with `smooth_softmax` (onnxruntime computes both alike).
fn sinks(ctx: &Ctx<'_>, head_sink: Option<&Tensor>, heads: usize) -> Result<Option<Vec<f64>>, KernelError> {
    match head_sink {
        Some(t) if t.shape == [heads] => Ok(Some(t.to_f64s()?)),
        Some(t) => Err(bad_input!("head_sink of shape {:?} is not [{heads}], one logit per head", t.shape)),
        None if ctx.int("smooth_softmax").unwrap_or(0) == 1 => Ok(Some(vec![0.0; heads])),
        None => Ok(None),
    }
}

/// Part `which` of `parts` packed in `t` `[B, S, N, parts, H]`: `[B, S, N·H]`.
fn unpack_heads(t: &Tensor, heads: usize, parts: usize, which: usize) -> Result<Tensor, KernelError> {
    let [b, s, n, p, h] = t.shape[..] else {
        return Err(bad_input!("a packed input of shape {:?} is not [B, S, {heads}, {parts}, H]", t.shape));
    };
    if p != parts || n != heads {
        return Err(bad_input!("a packed input of shape {:?} is not [B, S, {heads}, {parts}, H]", t.shape));
    }
    let width = count(&[n, h])?;
    numeric_like(t.data_type(), vec![b, s, width], part_of(&t.to_f64s()?, parts, h, which))
}

/// Part `which` of each row of `parts` parts of `h` values: the rows' parts `which` together.
fn part_of(values: &[f64], parts: usize, h: usize, which: usize) -> Vec<f64> {
    if h == 0 {
        return Vec::new();
    }
    values.chunks(parts * h).flat_map(|row| &row[which * h..][..h]).copied().collect()
}

/// com.microsoft RotaryEmbedding: input [B, S, D] or [B, N, S, H]; position_ids [B, S], or
/// one start position for every batch entry (position `start + s`); caches
/// [max position, rotary/2]. The head size is the caches' twice width unless
/// `rotary_embedding_dim` is set (then `num_heads` splits the input).
fn rotary_embedding(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, pos, cos_t, sin_t) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?, input(inputs, 3)?);
    if ctx.int("is_packed_batching").unwrap_or(0) != 0 {
        return Err(bad_attribute!("is_packed_batching is not supported"));
    }
    let width = match cos_t.shape[..] {
        [_, w] if sin_t.shape == cos_t.shape => w,
        _ => {
            return Err(bad_input!(
                "cos_cache {:?} and sin_cache {:?} are not one [positions, rotary/2] shape",
                cos_t.shape,
                sin_t.shape
            ));
        }
    };
    let rotary_attr = ctx.int("rotary_embedding_dim").unwrap_or(0);
    let (batch, len, heads, head, heads_first) = match x.shape[..] {
        [b, n, s, h] => (b, s, n, h, true),
        [b, s, hidden] => {
            let head = if rotary_attr > 0 {
                let n = num_heads(ctx, "num_heads")?;
                if hidden % n != 0 {
                    return Err(bad_input!("hidden size {hidden} does not divide into {n} heads"));
                }
                hidden / n
            } else {
                2 * width
            };
            if head == 0 || hidden % head != 0 {
                return Err(bad_input!("hidden size {hidden} does not divide into heads of {head}"));
            }
            (b, s, hidden / head, head, false)
        }
        _ => return Err(bad_input!("input of shape {:?} is neither 3-D nor 4-D", x.shape)),
    };
    let rotary = if rotary_attr > 0 {
        usize::try_from(rotary_attr)
            .ok()
            .filter(|&r| r <= head && r % 2 == 0)
            .ok_or(bad_attribute!("rotary_embedding_dim {rotary_attr} does not fit head size {head}"))?
    } else {
        head
    };
    if rotary / 2 > width {
        return Err(bad_input!("the caches hold {width} angles per position, {} are needed", rotary / 2));
    }
    let positions = pos.to_i64s()?;
    let row = |b: usize, s: usize| -> Result<usize, KernelError> {
        let p = if positions.len() == 1 {
            positions[0].checked_add(s as i64).unwrap_or(-1)
        } else {
            *positions.get(b * len + s).ok_or(bad_input!("position_ids of shape {:?} is too short", pos.shape))?
        };
        usize::try_from(p).map_err(|_| bad_input!("position {p} is negative"))
    };
    let (cos, sin) = (cos_t.to_f64s()?, sin_t.to_f64s()?);
    let caches = Caches { cos: &cos, sin: &sin, width, rows: cos_t.shape[0] };
    let layout = Layout { batch, sequence: len, heads, head, heads_first };
    let interleaved = ctx.int("interleaved").unwrap_or(0) != 0;
    let out = rotate(&x.to_f64s()?, &layout, rotary, interleaved, &caches, row)?;
    Ok(vec![Value::Tensor(numeric_like(x.data_type(), x.shape.clone(), out)?)])
}

/// GroupQueryAttention (float32 on onnxruntime's CPU): query [B, S, N·H] with key and value
/// [B, S, Nkv·H], or the three packed in the query; a cache buffer `past_key`/`past_value`
/// [B, Nkv, P, H] of which entry b holds `seqlens_k[b] + 1 − S` valid steps (none on a
/// first prompt, S = total_sequence_length); present key and value
/// [B, Nkv, max(P, total), H], the valid steps then this step's keys, zeros after. Causal,
/// with an optional local window, soft capping, an additive `attention_bias` and rotary
/// embedding of Q and K (`do_rotary`, positions from each entry's past length), attention
/// sinks (`head_sink`, or `smooth_softmax`: see [`attend`]).
/// A quantized cache (`k_scale`/`v_scale`, int8 or int4) is read and written as
/// [`CacheQuant`] says. Not causal (`causal` 0): every query sees all its entry's keys.
/// position_ids (with `do_rotary`) as [`rotary_positions`] reads them; the scores as
/// output 3 (`qk_output`, [`visible_scores`]). The per-head q/k norms are refused, as onnxruntime's
/// CPU kernel refuses them.
fn group_query_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let qt = input(inputs, 0)?;
    let (heads, kv_heads) = (num_heads(ctx, "num_heads")?, num_heads(ctx, "kv_num_heads")?);
    if heads % kv_heads != 0 {
        return Err(bad_attribute!("num_heads {heads} is not a multiple of kv_num_heads {kv_heads}"));
    }
    let causal = match ctx.int("causal").unwrap_or(1) {
        0 => false,
        1 => true,
        c => return Err(bad_attribute!("causal is {c}: it must be 0 or 1")),
    };
    if !causal && ctx.int("local_window_size").unwrap_or(-1) != -1 {
        return Err(bad_attribute!("local_window_size must be -1 when causal is 0"));
    }
    // Output 3: the scores before (1) or after (2) the softmax.
    let qk_output = match ctx.int("qk_output").unwrap_or(0) {
        0 => None,
        m @ (1 | 2) if ctx.node.outputs.get(3).is_some_and(|o| !o.is_empty()) => Some(m),
        m @ (1 | 2) => return Err(bad_attribute!("qk_output is {m} but the node has no output 3 for it")),
        m => return Err(bad_attribute!("qk_output {m} is not 0, 1 or 2")),
    };
    // onnxruntime's CPU kernel refuses the per-head Q/K norms too (CUDA and WebGPU only).
    for (i, what) in [(14, "q_norm_weight"), (15, "k_norm_weight"), (16, "query_seqlens")] {
        if optional(inputs, i)?.is_some() {
            return Err(bad_input!("{what} (input {i}) is not supported"));
        }
    }
    let (batch, len, _) = three(qt, "query")?;
    let Heads { head, mut q, mut k, mut v } =
        query_key_value(qt, (optional(inputs, 1)?, optional(inputs, 2)?), heads, kv_heads)?;
    let k_quant = CacheQuant::read(ctx, inputs, "k", (kv_heads, head))?;
    let v_quant = CacheQuant::read(ctx, inputs, "v", (kv_heads, head))?;
    let seqlens = input(inputs, 5)?.to_i64s()?;
    let total = *input(inputs, 6)?.to_i64s()?.first().ok_or(bad_input!("total_sequence_length is empty"))?;
    let total = usize::try_from(total).map_err(|_| bad_input!("total_sequence_length {total} is negative"))?;
    if seqlens.len() != batch {
        return Err(bad_input!("seqlens_k holds {} lengths for a batch of {batch}", seqlens.len()));
    }
    let past = match (optional(inputs, 3)?, optional(inputs, 4)?) {
        (Some(pk), Some(pv)) => {
            let width = k_quant.as_ref().map_or(head, CacheQuant::width);
            let fits = |t: &Tensor| matches!(t.shape[..], [b, n, _, h] if b == batch && n == kv_heads && h == width);
            if !fits(pk) || pk.shape != pv.shape {
                return Err(bad_input!(
                    "past_key {:?} and past_value {:?} are not [{batch}, {kv_heads}, P, {width}]",
                    pk.shape,
                    pv.shape
                ));
            }
            let read = |t: &Tensor, quant: &Option<CacheQuant>| {
                quant.as_ref().map_or_else(|| t.to_f64s(), |c| c.dequantize(t))
            };
            Some((pk.shape[2], read(pk, &k_quant)?, read(pv, &v_quant)?))
        }
        (None, None) => None,
        _ => return Err(bad_input!("past_key and past_value come together")),
    };
    let buffer = past.as_ref().map_or(0, |p| p.0);
    let present_len = buffer.max(total);
    let first_prompt = len == total;
    // Per batch entry: the valid past steps and all the valid steps.
    let mut lengths = Vec::with_capacity(batch);
    for &s in &seqlens {
        let all = s.checked_add(1).and_then(|a| usize::try_from(a).ok()).ok_or(bad_input!("seqlens_k holds {s}"))?;
        let past_len = if first_prompt {
            0
        } else {
            all.checked_sub(len).ok_or(bad_input!("seqlens_k holds {s}, fewer than the {len} new steps"))?
        };
        if all > present_len || past_len + len > present_len || (!first_prompt && past_len > buffer) {
            return Err(bad_input!("seqlens_k holds {s}, past the cache of {present_len} steps"));
        }
        lengths.push((past_len, all));
    }
    if ctx.int("do_rotary").unwrap_or(0) != 0 {
        let caches = (input(inputs, 7)?, input(inputs, 8)?);
        let sizes = (batch, len, heads, kv_heads, head);
        let positions = rotary_positions(optional(inputs, 9)?, (batch, len), first_prompt, caches.0.shape[0])?;
        let row = |b: usize, s: usize| -> Result<usize, KernelError> {
            Ok(match &positions {
                // A first prompt: every entry from the first position on.
                Some(p) if first_prompt => p[0] + s,
                Some(p) => p[b * len + s],
                None => lengths[b].0 + s,
            })
        };
        (q, k) = rotate_query_key(ctx, caches, (&q, &k), sizes, row)?;
    }
    // A quantized cache: attention reads this step's keys and values as the cache holds them.
    for (values, quant) in [(&mut k, &k_quant), (&mut v, &v_quant)] {
        if let Some(quant) = quant {
            quant.round_trip(values, len);
        }
    }
    // The present cache: each entry's valid past steps, this step's, zeros after.
    ctx.check_elements(count(&[batch, kv_heads, present_len, head])?)?;
    let grow = |past: Option<&[f64]>, new: &[f64]| -> Vec<f64> {
        let mut out = vec![0.0; batch * kv_heads * present_len * head];
        for (b, &(past_len, _)) in lengths.iter().enumerate() {
            for n in 0..kv_heads {
                let at = (b * kv_heads + n) * present_len * head;
                if let Some(p) = past {
                    let from = (b * kv_heads + n) * buffer * head;
                    out[at..at + past_len * head].copy_from_slice(&p[from..from + past_len * head]);
                }
                let from = (b * kv_heads + n) * len * head;
                out[at + past_len * head..][..len * head].copy_from_slice(&new[from..from + len * head]);
            }
        }
        out
    };
    let present_k = grow(past.as_ref().map(|p| &p.1[..]), &k);
    let present_v = grow(past.as_ref().map(|p| &p.2[..]), &v);
    let window = ctx.int("local_window_size").unwrap_or(-1);
    let window = usize::try_from(window).ok().filter(|&w| w > 0);
    let softcap = f64::from(ctx.float("softcap").unwrap_or(0.0));
    // attention_bias [B or 1, N or 1, S, total_sequence_length], added after soft capping.
    let extra = attention_bias(optional(inputs, 10)?, (batch, heads, len, total))?;
    let bias = |b: usize, n: usize, i: usize, j: usize| -> f64 {
        let (past_len, all) = lengths[b];
        // The keys up to this query's position (all the entry's keys when not causal), the
        // last `window` of them (onnxruntime 1.32's CPU kernel counts the query's own
        // position in the window).
        let end = if causal { past_len + i + 1 } else { all };
        if j >= end || j >= all || j >= total || window.is_some_and(|w| j + w < end) {
            f64::NEG_INFINITY
        } else {
            extra.as_ref().map_or(0.0, |e| e[((b * heads + n) * len + i) * total + j])
        }
    };
    let d = Dims { batch, heads, kv_heads, q_len: len, kv_len: present_len, head, v_head: head };
    ctx.check_elements(count(&[batch, heads, len, present_len])?)?;
    let dt = qt.data_type();
    // onnxruntime scores float16 queries in float32 too (converted before the product).
    let sinks = sinks(ctx, optional(inputs, 11)?, heads)?;
    let y =
        attend(&q, &present_k, &present_v, &d, (scale(ctx, head), softcap), DataType::Float, bias, sinks.as_deref())?;
    let qk = match qk_output {
        Some(mode) => {
            if sinks.is_some() && mode == 2 {
                return Err(crate::error::unsupported!("qk_output 2 with attention sinks"));
            }
            ctx.check_elements(count(&[batch, heads, len, total])?)?;
            Some(visible_scores(&q, &present_k, &d, (scale(ctx, head), softcap), total, mode == 2, bias))
        }
        None => None,
    };
    let cache = vec![batch, kv_heads, present_len, head];
    let mut out = vec![Value::Tensor(numeric_like(dt, vec![batch, len, heads * head], y)?)];
    if ctx.node.outputs.len() > 1 {
        let valid = |b: usize, t: usize| t < lengths[b].1;
        for (values, quant) in [(present_k, &k_quant), (present_v, &v_quant)] {
            out.push(match quant {
                Some(quant) => quant.store(&values, (batch, present_len), valid)?,
                None => Value::Tensor(numeric_like(dt, cache.clone(), values)?),
            });
        }
    }
    if let Some(qk) = qk {
        out.push(Value::Tensor(numeric_like(dt, vec![batch, heads, len, total], qk)?));
    }
    Ok(out)
}

/// GroupQueryAttention's position_ids (input 9, int64 `[B, ≥ S]`) as the rows of the
/// rotary caches, checked as onnxruntime 1.32's CPU kernel checks them: on a first prompt
/// it reads only the first element, from which every entry's positions count (it must
/// leave room for S rows); otherwise entry b's row s is element `b·S + s` of the flat
/// values (each within the caches).
fn rotary_positions(
    ids: Option<&Tensor>,
    (batch, len): (usize, usize),
    first_prompt: bool,
    rows: usize,
) -> Result<Option<Vec<usize>>, KernelError> {
    let Some(ids) = ids else { return Ok(None) };
    match ids.shape[..] {
        [b, w] if b == batch && w >= len => {}
        _ => return Err(bad_input!("position_ids of shape {:?} is not [{batch}, at least {len}]", ids.shape)),
    }
    let values = ids.to_i64s()?;
    let in_range = |p: i64, room: usize| usize::try_from(p).ok().filter(|&p| p + room <= rows);
    if first_prompt {
        let first = values.first().copied().unwrap_or(0);
        let start = in_range(first, len.max(1)).ok_or(bad_input!(
            "position_ids starts at {first}: {len} positions from it pass the caches' {rows} rows"
        ))?;
        return Ok(Some(vec![start]));
    }
    values
        .iter()
        .take(batch * len)
        .map(|&p| in_range(p, 1).ok_or(bad_input!("position {p} is past the caches' {rows} rows")))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// GroupQueryAttention's output_qk `[B, N, S, total]`: each query's scaled (and soft-capped)
/// scores with the attention bias, or (`softmax`) their softmax, over the keys it sees
/// (`bias` finite); 0 for the keys it does not see.
fn visible_scores(
    q: &[f64],
    k: &[f64],
    d: &Dims,
    (scale, softcap): (f64, f64),
    total: usize,
    softmax: bool,
    bias: impl Fn(usize, usize, usize, usize) -> f64,
) -> Vec<f64> {
    let Dims { batch, heads, kv_heads, q_len, kv_len, head, .. } = *d;
    let group = (heads / kv_heads.max(1)).max(1);
    let mut out = vec![0.0; batch * heads * q_len * total];
    for b in 0..batch {
        for n in 0..heads {
            let kh = n / group;
            for i in 0..q_len {
                let qrow = &q[((b * heads + n) * q_len + i) * head..][..head];
                let row = &mut out[((b * heads + n) * q_len + i) * total..][..total];
                for (j, o) in row.iter_mut().enumerate().take(kv_len) {
                    let mask = bias(b, n, i, j);
                    if mask == f64::NEG_INFINITY {
                        continue;
                    }
                    let krow = &k[((b * kv_heads + kh) * kv_len + j) * head..][..head];
                    let mut s = scale * qrow.iter().zip(krow).map(|(a, c)| a * c).sum::<f64>();
                    if softcap > 0.0 {
                        s = softcap * (s / softcap).tanh();
                    }
                    *o = rounding(DataType::Float)(s + mask);
                }
                if softmax {
                    let seen = |j: usize| j < kv_len && bias(b, n, i, j) != f64::NEG_INFINITY;
                    let max = (0..total).filter(|&j| seen(j)).map(|j| row[j]).fold(f64::NEG_INFINITY, f64::max);
                    let sum: f64 = (0..total).filter(|&j| seen(j)).map(|j| (row[j] - max).exp()).sum();
                    for (j, o) in row.iter_mut().enumerate() {
                        *o = if seen(j) { (*o - max).exp() / sum } else { 0.0 };
                    }
                }
            }
        }
    }
    out
}

/// Query heads `[B, N, S, H]`, key and value heads `[B, Nkv, S, H]`, and the head size H.
struct Heads {
    head: usize,
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
}

/// GroupQueryAttention's and SparseAttention's query `[B, S, N·H]` with its key and value
/// `[B, S, Nkv·H]`, or (key and value absent) a query packing all three
/// `[B, S, (N + 2·Nkv)·H]`, split in heads.
fn query_key_value(
    qt: &Tensor,
    (kt, vt): (Option<&Tensor>, Option<&Tensor>),
    heads: usize,
    kv_heads: usize,
) -> Result<Heads, KernelError> {
    let (batch, len, width) = three(qt, "query")?;
    let packed = kt.is_none() && vt.is_none();
    let parts = if packed { heads + 2 * kv_heads } else { heads };
    if width % parts != 0 {
        return Err(bad_input!("query width {width} does not divide into {parts} heads"));
    }
    let head = width / parts;
    let qv = qt.to_f64s()?;
    if packed {
        let shape = (batch, len, width);
        return Ok(Heads {
            head,
            q: split_heads(&qv, shape, 0, heads, head),
            k: split_heads(&qv, shape, heads * head, kv_heads, head),
            v: split_heads(&qv, shape, (heads + kv_heads) * head, kv_heads, head),
        });
    }
    let (Some(kt), Some(vt)) = (kt, vt) else { return Err(bad_input!("key and value come together")) };
    let kv_width = kv_heads * head;
    for (t, what) in [(kt, "key"), (vt, "value")] {
        if t.shape[..] != [batch, len, kv_width] {
            return Err(bad_input!("{what} of shape {:?} is not [{batch}, {len}, {kv_width}]", t.shape));
        }
    }
    let shape = (batch, len, kv_width);
    Ok(Heads {
        head,
        q: split_heads(&qv, (batch, len, width), 0, heads, head),
        k: split_heads(&kt.to_f64s()?, shape, 0, kv_heads, head),
        v: split_heads(&vt.to_f64s()?, shape, 0, kv_heads, head),
    })
}

/// Q and K heads (sizes `(B, S, N, Nkv, H)`) with rotary embedding from `cos_cache` and
/// `sin_cache` `[positions, width ≤ H/2]` (`rotary_interleaved` says how pairs are made),
/// entry b's step s at position `start(b) + s`.
fn rotate_query_key(
    ctx: &Ctx<'_>,
    (cos_t, sin_t): (&Tensor, &Tensor),
    (q, k): (&[f64], &[f64]),
    (batch, len, heads, kv_heads, head): (usize, usize, usize, usize, usize),
    row: impl Fn(usize, usize) -> Result<usize, KernelError>,
) -> Result<(Vec<f64>, Vec<f64>), KernelError> {
    let width = match cos_t.shape[..] {
        [_, w] if sin_t.shape == cos_t.shape && 2 * w <= head => w,
        _ => {
            return Err(bad_input!(
                "cos_cache {:?} and sin_cache {:?} are not one [positions, at most {}] shape",
                cos_t.shape,
                sin_t.shape,
                head / 2
            ));
        }
    };
    let (cos, sin) = (cos_t.to_f64s()?, sin_t.to_f64s()?);
    let caches = Caches { cos: &cos, sin: &sin, width, rows: cos_t.shape[0] };
    let interleaved = ctx.int("rotary_interleaved").unwrap_or(0) != 0;
    let layout = |n: usize| Layout { batch, sequence: len, heads: n, head, heads_first: true };
    let q = rotate(q, &layout(heads), 2 * width, interleaved, &caches, &row)?;
    let k = rotate(k, &layout(kv_heads), 2 * width, interleaved, &caches, &row)?;
    Ok((q, k))
}

/// SparseAttention (Phi-3-small's block-sparse attention; float32 on onnxruntime's CPU):
/// GroupQueryAttention's query, key and value, a cache `past_key`/`past_value`
/// `[B, Nkv, M, H]` that present key and value share (this step's keys written into it at
/// each entry's past length, the rest kept), `key_total_sequence_lengths[b]` valid steps
/// after this one (the past length being that minus S, or 0 on a prompt, where
/// `total_sequence_length` is S), causal attention limited by a block mask given per
/// layout in CSR form (`block_row_indices` `[layouts, blocks + 1]`, `block_col_indices`
/// `[layouts, nnz]`; head n uses layout `n % layouts`), and optional rotary embedding.
/// As onnxruntime does: a layout with as many blocks as a full lower triangle, and a row of
/// blocks with `row + 1` of them, are taken as dense (causal only); a masked key of a
/// sparse row scores float32's lowest.
fn sparse_attention(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let qt = input(inputs, 0)?;
    let (heads, kv_heads) = (num_heads(ctx, "num_heads")?, num_heads(ctx, "kv_num_heads")?);
    let block = ctx
        .int("sparse_block_size")
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b > 0)
        .ok_or(bad_attribute!("sparse_block_size must be a positive number of steps"))?;
    if heads % kv_heads != 0 {
        return Err(bad_attribute!("num_heads {heads} is not a multiple of kv_num_heads {kv_heads}"));
    }
    let (batch, len, _) = three(qt, "query")?;
    let Heads { head, mut q, mut k, v } =
        query_key_value(qt, (optional(inputs, 1)?, optional(inputs, 2)?), heads, kv_heads)?;
    let (pk, pv) = (input(inputs, 3)?, input(inputs, 4)?);
    let buffer = match pk.shape[..] {
        [b, n, m, h] if b == batch && n == kv_heads && h == head && pv.shape == pk.shape => m,
        _ => {
            return Err(bad_input!(
                "past_key {:?} and past_value {:?} are not one [{batch}, {kv_heads}, M, {head}] shape",
                pk.shape,
                pv.shape
            ));
        }
    };
    let layout = BlockLayout::read(input(inputs, 5)?, input(inputs, 6)?, heads, block)?;
    let total = *input(inputs, 7)?.to_i64s()?.first().ok_or(bad_input!("total_sequence_length is empty"))?;
    let total = usize::try_from(total).ok().filter(|&t| t <= buffer && t <= layout.max_steps()).ok_or(bad_input!(
        "total_sequence_length {total} is negative or past the cache of {buffer} steps or the block mask's {}",
        layout.max_steps()
    ))?;
    let key_lengths = input(inputs, 8)?.to_i64s()?;
    if key_lengths.len() != batch {
        return Err(bad_input!(
            "key_total_sequence_lengths holds {} lengths for a batch of {batch}",
            key_lengths.len()
        ));
    }
    let prompt = total == len;
    // Per batch entry: the past steps and all the valid steps.
    let mut lengths = Vec::with_capacity(batch);
    for &n in &key_lengths {
        let all = usize::try_from(n).ok().filter(|&a| a >= len && a <= total).ok_or(bad_input!(
            "key_total_sequence_lengths holds {n}; it must be from the {len} new steps to total_sequence_length {total}"
        ))?;
        lengths.push((if prompt { 0 } else { all - len }, all));
    }
    if ctx.int("do_rotary").unwrap_or(0) != 0 {
        let caches = (input(inputs, 9)?, input(inputs, 10)?);
        let sizes = (batch, len, heads, kv_heads, head);
        (q, k) = rotate_query_key(ctx, caches, (&q, &k), sizes, |b, s| Ok(lengths[b].0 + s))?;
    }
    // The shared cache: this step's keys and values written at each entry's past length.
    ctx.check_elements(count(&[batch, kv_heads, buffer, head])?)?;
    let write = |cache: &Tensor, new: &[f64]| -> Result<Vec<f64>, KernelError> {
        let mut out = cache.to_f64s()?;
        for (b, &(past, _)) in lengths.iter().enumerate() {
            for n in 0..kv_heads {
                let at = ((b * kv_heads + n) * buffer + past) * head;
                let from = (b * kv_heads + n) * len * head;
                out[at..][..len * head].copy_from_slice(&new[from..][..len * head]);
            }
        }
        Ok(out)
    };
    let (present_k, present_v) = (write(pk, &k)?, write(pv, &v)?);
    // Only the rows of blocks the keys reach (their count squared per layout is the masks' size).
    let blocks = total.div_ceil(block);
    let layouts = layout.rows.len();
    ctx.check_elements(count(&[layouts, blocks, blocks])?)?;
    let masks = layout.masks(blocks);
    let lowest = f64::from(f32::MIN);
    let bias = |b: usize, n: usize, i: usize, j: usize| -> f64 {
        let (past, all) = lengths[b];
        let row = &masks[(n % layouts) * blocks + (past + i) / block];
        if j > past + i || j >= all {
            f64::NEG_INFINITY
        } else if row.as_ref().is_some_and(|keep| !keep[j / block]) {
            lowest
        } else {
            0.0
        }
    };
    let d = Dims { batch, heads, kv_heads, q_len: len, kv_len: buffer, head, v_head: head };
    ctx.check_elements(count(&[batch, heads, len, buffer])?)?;
    let dt = qt.data_type();
    let y = attend(&q, &present_k, &present_v, &d, (scale(ctx, head), 0.0), dt, bias, None)?;
    let cache = vec![batch, kv_heads, buffer, head];
    let mut out = vec![Value::Tensor(numeric_like(dt, vec![batch, len, heads * head], y)?)];
    out.push(Value::Tensor(numeric_like(dt, cache.clone(), present_k)?));
    out.push(Value::Tensor(numeric_like(dt, cache, present_v)?));
    out.truncate(ctx.node.outputs.len().max(1));
    Ok(out)
}

/// SparseAttention's block mask: per layout, the CSR rows (`rows[layout]`, `blocks + 1`
/// offsets) into its column indices (`cols[layout]`).
struct BlockLayout {
    rows: Vec<Vec<usize>>,
    cols: Vec<Vec<i64>>,
    block: usize,
}

impl BlockLayout {
    fn read(row_t: &Tensor, col_t: &Tensor, heads: usize, block: usize) -> Result<Self, KernelError> {
        let (layouts, stride) = match (&row_t.shape[..], &col_t.shape[..]) {
            ([l, r], [lc, _]) if *l > 0 && *r > 1 && l == lc && heads.is_multiple_of(*l) => (*l, *r),
            _ => {
                return Err(bad_input!(
                    "block_row_indices {:?} and block_col_indices {:?} are not [layouts, blocks + 1] and [layouts, nnz] with {heads} heads a multiple of the layouts",
                    row_t.shape,
                    col_t.shape
                ));
            }
        };
        let (row_values, col_values) = (row_t.to_i64s()?, col_t.to_i64s()?);
        let nnz = col_t.shape[1];
        let mut rows = Vec::with_capacity(layouts);
        for l in 0..layouts {
            let offsets: Vec<usize> = row_values[l * stride..][..stride]
                .iter()
                .map(|&o| usize::try_from(o).ok().filter(|&o| o <= nnz))
                .collect::<Option<_>>()
                .filter(|o: &Vec<usize>| o.windows(2).all(|w| w[0] <= w[1]))
                .ok_or(bad_input!("block_row_indices of layout {l} are not rising offsets into the {nnz} columns"))?;
            rows.push(offsets);
        }
        let cols = (0..layouts).map(|l| col_values[l * nnz..][..nnz].to_vec()).collect();
        Ok(BlockLayout { rows, cols, block })
    }

    fn blocks(&self) -> usize {
        self.rows[0].len() - 1
    }

    fn max_steps(&self) -> usize {
        self.blocks().saturating_mul(self.block)
    }

    /// Per layout and row of blocks (`l · reach + row`) of the first `reach` rows: `None`
    /// where onnxruntime takes the row as dense, else which of the first `reach` blocks of
    /// keys it keeps.
    fn masks(&self, reach: usize) -> Vec<Option<Vec<bool>>> {
        let blocks = self.blocks();
        let reach = reach.min(blocks);
        let mut out = Vec::with_capacity(self.rows.len() * reach);
        for (l, offsets) in self.rows.iter().enumerate() {
            let sparse = offsets[blocks] < blocks.saturating_mul(blocks + 1) / 2;
            for row in 0..reach {
                let (start, end) = (offsets[row], offsets[row + 1]);
                out.push((sparse && end - start != row + 1).then(|| {
                    let mut keep = vec![false; reach];
                    for &c in &self.cols[l][start..end] {
                        if let Some(k) = usize::try_from(c).ok().and_then(|c| keep.get_mut(c)) {
                            *k = true;
                        }
                    }
                    keep
                }));
            }
        }
        out
    }
}
