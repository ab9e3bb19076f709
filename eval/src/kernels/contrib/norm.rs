//! Normalizations fused with what comes before them, as onnxruntime's CPU kernels compute
//! them: SkipLayerNormalization and SkipSimplifiedLayerNormalization (a residual sum, then
//! layer or RMS normalization over the last axis), EmbedLayerNormalization (the sum of
//! word, position and segment embeddings, then layer normalization), and GroupNorm and
//! SkipGroupNorm (a diffusion UNet's group normalization, channels last, CUDA only in
//! onnxruntime). The skip normalizations of float32 and float16 in float32 exactly as
//! onnxruntime's kernel orders its operations (a one-ulp difference in a norm can flip an
//! int8 quantization step after it); the rest in f64, narrowed once.

use onnx_core::ir::DataType;

use super::super::{Ctx, Kernel, count, input, optional};
use super::quant::{bytes, scale_of, zero_of};
use crate::cast::{from_f64_like, integers_as};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "SkipLayerNormalization" => |ctx, inputs| skip_layer_norm(ctx, inputs, false),
        "SkipSimplifiedLayerNormalization" => |ctx, inputs| skip_layer_norm(ctx, inputs, true),
        "EmbedLayerNormalization" => embed_layer_norm,
        "QEmbedLayerNormalization" => q_embed_layer_norm,
        "GroupNorm" => |ctx, inputs| group_norm(ctx, inputs, false),
        "SkipGroupNorm" => |ctx, inputs| group_norm(ctx, inputs, true),
        _ => return None,
    };
    Some(k)
}

/// `epsilon`, onnxruntime's default 1e-12 when absent.
fn epsilon(ctx: &Ctx<'_>) -> f64 {
    f64::from(ctx.float("epsilon").unwrap_or(1e-12))
}

/// A 1-D input of `hidden` values (gamma, beta, a bias), when given; an error for another
/// shape.
fn hidden_sized<'t>(t: Option<&'t Tensor>, what: &str, hidden: usize) -> Result<Option<&'t Tensor>, KernelError> {
    match t {
        Some(t) if t.rank() != 1 || t.len() != hidden => {
            Err(bad_input!("{what} has shape {:?}; it must be [{hidden}] (the hidden size)", t.shape))
        }
        t => Ok(t),
    }
}

/// The values of a 1-D input of `hidden` values (gamma, beta, a bias), when given.
fn per_hidden(t: Option<&Tensor>, what: &str, hidden: usize) -> Result<Option<Vec<f64>>, KernelError> {
    hidden_sized(t, what, hidden)?.map(Tensor::to_f64s).transpose()
}

/// One row normalized in place: its mean and inverse standard deviation (of the mean
/// square, for RMS normalization, whose mean onnxruntime reports as 0).
fn normalize(row: &mut [f64], eps: f64, simplified: bool, gamma: &[f64], beta: Option<&[f64]>) -> (f64, f64) {
    let n = row.len() as f64;
    let mean = if simplified { 0.0 } else { row.iter().sum::<f64>() / n };
    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let inv = 1.0 / (var + eps).sqrt();
    for (h, v) in row.iter_mut().enumerate() {
        *v = (*v - mean) * inv * gamma[h] + beta.map_or(0.0, |b| b[h]);
    }
    (mean, inv)
}

/// The outputs a node names, of those computed (an omitted one keeps its place).
fn named(ctx: &Ctx<'_>, mut all: Vec<Value>) -> Vec<Value> {
    all.truncate(ctx.node.outputs.len().max(1));
    all
}

/// SkipLayerNormalization (`simplified`: SkipSimplifiedLayerNormalization): each row of
/// `input + skip + bias` over the last axis normalized, scaled by gamma and shifted by beta.
/// The skip has input's shape or that of its last axes (with leading 1s), repeated over the
/// rest. Outputs: the result, the mean and inverse standard deviation of each row (float32,
/// the last axis 1), and the sum itself.
fn skip_layer_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>], simplified: bool) -> Result<Vec<Value>, KernelError> {
    let (x, skip) = (input(inputs, 0)?, input(inputs, 1)?);
    let Some(&hidden) = x.shape.last() else { return Err(bad_input!("the input is a scalar; it needs a hidden axis")) };
    let gamma_in = input(inputs, 2)?;
    hidden_sized(Some(gamma_in), "gamma", hidden)?;
    let (beta_in, bias_in) = if simplified {
        (None, hidden_sized(optional(inputs, 3)?, "bias", hidden)?)
    } else {
        (hidden_sized(optional(inputs, 3)?, "beta", hidden)?, hidden_sized(optional(inputs, 4)?, "bias", hidden)?)
    };
    let own: Vec<usize> = skip.shape.iter().copied().skip_while(|&d| d == 1).collect();
    let fits = skip.shape.last() == Some(&hidden) || (skip.len() == 1 && hidden == 1);
    if !fits || own.len() > x.rank() || x.shape[x.rank() - own.len()..] != own[..] {
        return Err(bad_input!(
            "skip has shape {:?}; it must be the input's {:?} or that of its last axes",
            skip.shape,
            x.shape
        ));
    }
    let rows = count(&x.shape[..x.rank() - 1])?;
    let row_count = rows;
    ctx.check_grown(rows, x.len())?;
    let dt = x.data_type();
    let mut stats = x.shape.clone();
    stats[x.rank() - 1] = 1;
    if matches!(dt, DataType::Float | DataType::Float16) {
        let (gamma, beta, bias) =
            (gamma_in.to_f32s()?, beta_in.map(Tensor::to_f32s).transpose()?, bias_in.map(Tensor::to_f32s).transpose()?);
        let (values, skip) = (x.to_f32s()?, skip.to_f32s()?);
        // The sum is the fourth output, which exports rarely name.
        let want_sum = ctx.node.outputs.get(3).is_some_and(|o| !o.is_empty());
        let eps = ctx.float("epsilon").unwrap_or(1e-12);
        let rows = SkipRows {
            skip: &skip,
            hidden,
            eps,
            simplified,
            gamma: &gamma,
            beta: beta.as_deref(),
            bias: bias.as_deref(),
        };
        let (y, sum, mut means, mut invs) = rows.normalize(&values, want_sum);
        // Rows with an empty hidden axis: nothing to normalize, a variance of 0.
        means.resize(row_count, 0.0);
        invs.resize(row_count, 1.0 / eps.sqrt());
        let tensor = |shape: Vec<usize>, v: Vec<f32>| -> Value {
            Value::Tensor(if dt == DataType::Float {
                Tensor::new(shape, Data::F32(v.into()))
            } else {
                Tensor::new(shape, crate::number::narrowed_half(&v, DataType::Float16))
            })
        };
        let stat = |v: Vec<f32>| Value::Tensor(Tensor::new(stats.clone(), Data::F32(v.into())));
        let mut outputs = vec![tensor(x.shape.clone(), y), stat(means), stat(invs)];
        if let Some(sum) = sum {
            outputs.push(tensor(x.shape.clone(), sum));
        }
        return Ok(named(ctx, outputs));
    }
    let gamma = per_hidden(Some(gamma_in), "gamma", hidden)?.unwrap_or_default();
    let (beta, bias) = (per_hidden(beta_in, "beta", hidden)?, per_hidden(bias_in, "bias", hidden)?);
    let mut sum = x.to_f64s()?;
    let skip = skip.to_f64s()?;
    if !skip.is_empty() {
        for (i, v) in sum.iter_mut().enumerate() {
            *v += skip[i % skip.len()] + bias.as_ref().map_or(0.0, |b| b[i % hidden]);
        }
    }
    let mut y = sum.clone();
    let (mut means, mut invs) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    if hidden > 0 {
        for row in y.chunks_mut(hidden) {
            let (mean, inv) = normalize(row, epsilon(ctx), simplified, &gamma, beta.as_deref());
            means.push(mean);
            invs.push(inv);
        }
    }
    // Rows with an empty hidden axis: nothing to normalize, a variance of 0.
    means.resize(rows, 0.0);
    invs.resize(rows, 1.0 / epsilon(ctx).sqrt());
    Ok(named(
        ctx,
        vec![
            Value::Tensor(from_f64_like(dt, x.shape.clone(), y)?),
            Value::Tensor(from_f64_like(DataType::Float, stats.clone(), means)?),
            Value::Tensor(from_f64_like(DataType::Float, stats, invs)?),
            Value::Tensor(from_f64_like(dt, x.shape.clone(), sum)?),
        ],
    ))
}

/// What skip (simplified) layer normalization adds to each row and scales it by.
struct SkipRows<'a> {
    skip: &'a [f32],
    hidden: usize,
    eps: f32,
    simplified: bool,
    gamma: &'a [f32],
    beta: Option<&'a [f32]>,
    bias: Option<&'a [f32]>,
}

impl SkipRows<'_> {
    /// Skip (simplified) layer normalization of float32 (float16 widened) rows `x` as
    /// onnxruntime's CPU kernel computes it, operation for operation, so that results agree
    /// to the bit: each row's `input + skip (+ bias)` summed and squared-summed in float32
    /// in order, `√(Σv²/H + ε)` (less the squared mean unless simplified), then
    /// `(v − mean) / that · gamma (+ beta)`. Returns the result, the sums (when `want_sum`),
    /// the means (0 for RMS) and the inverse deviations.
    fn normalize(&self, x: &[f32], want_sum: bool) -> (Vec<f32>, Option<Vec<f32>>, Vec<f32>, Vec<f32>) {
        let Self { skip, hidden, eps, simplified, gamma, beta, bias } = *self;
        let mut y = vec![0f32; x.len()];
        let mut sums = want_sum.then(|| vec![0f32; x.len()]);
        let rows = x.len().checked_div(hidden).unwrap_or(0);
        let (mut means, mut invs) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        let h = hidden as f32;
        // The sums run in order, as onnxruntime's do; the scaling loop takes wide vectors.
        crate::simd::widest(
            #[inline(always)]
            || {
                for (r, (row, out)) in x.chunks(hidden.max(1)).zip(y.chunks_mut(hidden.max(1))).enumerate().take(rows) {
                    let (mut mean, mut square) = (0f32, 0f32);
                    // The skip repeats over the leading axes: its length is a multiple of the row's
                    // (checked by the caller), so each row's skip is one stretch of it.
                    let skip_row = if skip.is_empty() {
                        &[][..]
                    } else {
                        let at = (r * hidden) % skip.len();
                        &skip[at..at + hidden]
                    };
                    // The row's sums go to the output first and are normalized there in place.
                    for (i, (&v, s)) in row.iter().zip(out.iter_mut()).enumerate() {
                        let mut val = v;
                        if let Some(&k) = skip_row.get(i) {
                            val += k;
                        }
                        if let Some(b) = bias {
                            val += b[i];
                        }
                        *s = val;
                        mean += val;
                        square += val * val;
                    }
                    if let Some(sums) = &mut sums {
                        sums[r * hidden..(r + 1) * hidden].copy_from_slice(out);
                    }
                    mean /= h;
                    let deviation =
                        if simplified { (square / h + eps).sqrt() } else { (square / h - mean * mean + eps).sqrt() };
                    for (i, v) in out.iter_mut().enumerate() {
                        *v = if simplified {
                            *v / deviation * gamma[i]
                        } else {
                            let scaled = (*v - mean) / deviation * gamma[i];
                            beta.map_or(scaled, |b| scaled + b[i])
                        };
                    }
                    means.push(if simplified { 0.0 } else { mean });
                    invs.push(1.0 / deviation);
                }
            },
        );
        (y, sums, means, invs)
    }
}

/// GroupNorm (`with_skip`: SkipGroupNorm, which first adds `skip` and `bias` and also
/// returns that sum): X `[N, spatial…, C]` (`channels_last`, the default; else
/// `[N, C, spatial…]`), each entry's channels in `groups` groups, each group normalized
/// over its channels and positions (epsilon 1e-5 by default), scaled by gamma and shifted
/// by beta per channel, then SiLU when `activation` is 1. The skip has X's shape, or is
/// `[N, C]` or `[N, 1, …, 1, C]`, one value per entry and channel (channels last).
fn group_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>], with_skip: bool) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let groups = ctx
        .int("groups")
        .and_then(|g| usize::try_from(g).ok())
        .filter(|&g| g > 0)
        .ok_or(bad_attribute!("groups must be a positive number of groups"))?;
    let swish = match ctx.int("activation") {
        None | Some(0) => false,
        Some(1) => true,
        Some(a) => return Err(bad_attribute!("activation {a} is neither 0 (none) nor 1 (SiLU)")),
    };
    let last = ctx.int("channels_last").unwrap_or(1) != 0;
    if x.rank() < 2 {
        return Err(bad_input!("X of shape {:?} has no channels axis after the batch", x.shape));
    }
    let (batch, channels) = (x.shape[0], if last { x.shape[x.rank() - 1] } else { x.shape[1] });
    if x.is_empty() {
        // Nothing to normalize (and no group to loop over, however many are asked for).
        let empty = || Value::Tensor(Tensor::new(x.shape.clone(), x.data.as_ref().clone()));
        return Ok(named(ctx, if with_skip { vec![empty(), empty()] } else { vec![empty()] }));
    }
    if channels % groups != 0 {
        return Err(bad_input!("{channels} channels do not divide into {groups} groups"));
    }
    let gamma = per_hidden(Some(input(inputs, 1)?), "gamma", channels)?.unwrap_or_default();
    let beta = per_hidden(Some(input(inputs, 2)?), "beta", channels)?.unwrap_or_default();
    let positions = x.len().checked_div(batch * channels).unwrap_or(0);
    // Element (n, p, c) of the flat data.
    let at = |n: usize, p: usize, c: usize| {
        if last { (n * positions + p) * channels + c } else { (n * channels + c) * positions + p }
    };
    let mut sum = x.to_f64s()?;
    if with_skip {
        let skip = input(inputs, 3)?;
        let bias = per_hidden(optional(inputs, 4)?, "bias", channels)?;
        let per_entry = last
            && skip.shape.first() == Some(&batch)
            && skip.shape.last() == Some(&channels)
            && skip.len() == batch * channels
            && (skip.rank() == 2 || skip.rank() == x.rank());
        if skip.shape != x.shape && !per_entry {
            return Err(bad_input!(
                "skip has shape {:?}; it must be X's {:?}, [{batch}, {channels}] or [{batch}, 1, …, 1, {channels}]",
                skip.shape,
                x.shape
            ));
        }
        let skip = skip.to_f64s()?;
        for n in 0..batch {
            for p in 0..positions {
                for c in 0..channels {
                    let i = at(n, p, c);
                    let s = if per_entry && skip.len() != sum.len() { skip[n * channels + c] } else { skip[i] };
                    sum[i] += s + bias.as_ref().map_or(0.0, |b| b[c]);
                }
            }
        }
    }
    let mut y = sum.clone();
    let width = channels / groups;
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let elements = (width * positions) as f64;
    for n in 0..batch {
        for g in 0..groups {
            let members = || (0..positions).flat_map(move |p| (g * width..(g + 1) * width).map(move |c| (p, c)));
            let mean = members().map(|(p, c)| sum[at(n, p, c)]).sum::<f64>() / elements;
            let var = members().map(|(p, c)| (sum[at(n, p, c)] - mean).powi(2)).sum::<f64>() / elements;
            let inv = 1.0 / (var + eps).sqrt();
            for (p, c) in members() {
                let i = at(n, p, c);
                let v = (sum[i] - mean) * inv * gamma[c] + beta[c];
                y[i] = if swish { v / (1.0 + (-v).exp()) } else { v };
            }
        }
    }
    let dt = x.data_type();
    let mut out = vec![Value::Tensor(from_f64_like(dt, x.shape.clone(), y)?)];
    if with_skip {
        out.push(Value::Tensor(from_f64_like(dt, x.shape.clone(), sum)?));
    }
    Ok(named(ctx, out))
}

/// A table of embeddings `[rows, hidden]` and its values.
struct Table<'t> {
    rows: usize,
    hidden: usize,
    values: Elements<'t>,
}

/// An embedding table's values, read where they lie: a token reads one row of a table of a
/// vocabulary's rows (converting BERT's 30,522 × 768 words to f64 on every run took longer
/// than the rest of the model).
enum Elements<'t> {
    F32(&'t [f32]),
    F16(&'t [half::f16]),
    /// 8-bit values with their scale and zero point (QEmbedLayerNormalization's tables),
    /// dequantized in float32 as they are read.
    U8(&'t [u8], f32, i32),
    I8(&'t [i8], f32, i32),
    Other(Vec<f64>),
}

impl Elements<'_> {
    fn at(&self, i: usize) -> f64 {
        match self {
            Elements::F32(v) => f64::from(v[i]),
            Elements::F16(v) => f64::from(v[i]),
            Elements::U8(v, scale, zero) => f64::from((i32::from(v[i]) - zero) as f32 * scale),
            Elements::I8(v, scale, zero) => f64::from((i32::from(v[i]) - zero) as f32 * scale),
            Elements::Other(v) => v[i],
        }
    }
}

fn table<'t>(t: &'t Tensor, what: &str, hidden: Option<usize>) -> Result<Table<'t>, KernelError> {
    let values = match &*t.data {
        Data::F32(v) if t.layout.is_none() => Elements::F32(v),
        Data::F16(v) if t.layout.is_none() => Elements::F16(v),
        _ => Elements::Other(t.to_f64s()?),
    };
    sized_table(t, what, hidden, values)
}

/// A table of `values` with `t`'s shape, which must be `[rows, hidden]`.
fn sized_table<'t>(
    t: &Tensor,
    what: &str,
    hidden: Option<usize>,
    values: Elements<'t>,
) -> Result<Table<'t>, KernelError> {
    if t.rank() != 2 || hidden.is_some_and(|h| t.shape[1] != h) {
        return Err(bad_input!("{what} has shape {:?}; it must be [rows, hidden]", t.shape));
    }
    Ok(Table { rows: t.shape[0], hidden: t.shape[1], values })
}

/// EmbedLayerNormalization: for each token of `input_ids [batch, sequence]`, the sum of its
/// word embedding, its position's embedding (`position_ids`, `[batch, sequence]` or
/// `[1, sequence]`, or else its index in the sequence) and its segment's embedding (when
/// segments are given), normalized over the hidden axis, scaled by gamma and shifted by
/// beta. Outputs: the result, the mask index (per batch, how many of the mask's values are
/// 1, as onnxruntime's CPU kernel counts; zeros without a mask) and the sum.
fn embed_layer_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let word = input(inputs, 2)?;
    let hidden = if word.rank() == 2 { Some(word.shape[1]) } else { None };
    let words = table(word, "word_embedding", None)?;
    let positions = table(input(inputs, 3)?, "position_embedding", hidden)?;
    let segments = optional(inputs, 4)?.map(|e| table(e, "segment_embedding", hidden)).transpose()?;
    let gamma = input(inputs, 5)?.to_f64s()?;
    let beta = optional(inputs, 6)?.map(Tensor::to_f64s).transpose()?;
    let position_ids = optional(inputs, 8)?;
    let tables = Embeddings { words, positions, segments, gamma, beta };
    embed_and_normalize(ctx, inputs, tables, position_ids, word.data_type())
}

/// QEmbedLayerNormalization (onnxruntime's quantized EmbedLayerNormalization): its tables,
/// gamma and beta 8-bit (inputs 2 to 6), each with a scale (inputs 8 to 12) and a zero
/// point (inputs 13 to 17), dequantized in float32 (`(q − zero)·scale`), then
/// EmbedLayerNormalization's sum and normalization, positions by index. Outputs the
/// result (float32) and the mask index.
fn q_embed_layer_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let dequantized = |i: usize, what: &str| -> Result<Option<Tensor>, KernelError> {
        let Some(t) = optional(inputs, i)? else { return Ok(None) };
        let (q, _) = bytes(t, what)?;
        let scale = scale_of(input(inputs, i + 6)?, &format!("{what}'s scale"))?;
        let zero = zero_of(optional(inputs, i + 11)?, &format!("{what}'s zero point"))?;
        let values: Vec<f32> = q.iter().map(|&v| (v - zero) as f32 * scale).collect();
        Ok(Some(Tensor::new(t.shape.clone(), Data::F32(values.into()))))
    };
    let need = |t: Option<Tensor>, what: &str| t.ok_or_else(|| bad_input!("{what} is missing"));
    // The embedding tables read where they lie, a row at a time (dequantizing a whole
    // vocabulary's table on every run cost more than the rest of the model).
    let quantized = |i: usize, hidden: Option<usize>, what: &str| -> Result<Option<Table<'_>>, KernelError> {
        let Some(t) = optional(inputs, i)? else { return Ok(None) };
        let scale = scale_of(input(inputs, i + 6)?, &format!("{what}'s scale"))?;
        let zero = zero_of(optional(inputs, i + 11)?, &format!("{what}'s zero point"))?;
        let values = match &*t.data {
            Data::U8(v) => Elements::U8(v, scale, zero),
            Data::I8(v) => Elements::I8(v, scale, zero),
            _ => return Err(bad_input!("{what} is {}: uint8 or int8 expected", t.data_type().name())),
        };
        sized_table(t, what, hidden, values).map(Some)
    };
    let words = quantized(2, None, "word_embedding")?.ok_or_else(|| bad_input!("word_embedding is missing"))?;
    let hidden = Some(words.hidden);
    let positions =
        quantized(3, hidden, "position_embedding")?.ok_or_else(|| bad_input!("position_embedding is missing"))?;
    let segments = quantized(4, hidden, "segment_embedding")?;
    let gamma = need(dequantized(5, "gamma")?, "gamma")?.to_f64s()?;
    let beta = need(dequantized(6, "beta")?, "beta")?.to_f64s()?;
    let tables = Embeddings { words, positions, segments, gamma, beta: Some(beta) };
    let mut out = embed_and_normalize(ctx, inputs, tables, None, DataType::Float)?;
    out.truncate(2);
    Ok(out)
}

/// The tables of an embedding layer normalization, in f64: word, position and segment
/// embeddings `[rows, hidden]`, gamma and beta.
struct Embeddings<'t> {
    words: Table<'t>,
    positions: Table<'t>,
    segments: Option<Table<'t>>,
    gamma: Vec<f64>,
    beta: Option<Vec<f64>>,
}

/// The sum of each token's embeddings (`input_ids` input 0, `segment_ids` input 1, the
/// mask input 7), normalized; the outputs of type `dt` (see [`embed_layer_norm`]).
fn embed_and_normalize(
    ctx: &Ctx<'_>,
    inputs: &[Option<&Value>],
    tables: Embeddings<'_>,
    position_ids: Option<&Tensor>,
    dt: DataType,
) -> Result<Vec<Value>, KernelError> {
    let ids = input(inputs, 0)?;
    if ids.rank() != 2 {
        return Err(bad_input!("input_ids has shape {:?}; it must be [batch, sequence]", ids.shape));
    }
    let (batch, sequence) = (ids.shape[0], ids.shape[1]);
    let Embeddings { words, positions, segments, gamma, beta } = tables;
    let hidden = words.hidden;
    let segments = match (optional(inputs, 1)?, segments) {
        (Some(s), Some(e)) => {
            if s.shape != ids.shape {
                return Err(bad_input!("segment_ids has shape {:?}, input_ids {:?}", s.shape, ids.shape));
            }
            Some((s.to_i64s()?, e))
        }
        (None, None) => None,
        _ => return Err(bad_input!("segment_ids and segment_embedding come together or not at all")),
    };
    let per = |v: Vec<f64>, what: &str| {
        if v.len() == hidden {
            Ok(v)
        } else {
            Err(bad_input!("{what} holds {} values; it must be {hidden} (the hidden size)", v.len()))
        }
    };
    let gamma = per(gamma, "gamma")?;
    let beta = beta.map(|b| per(b, "beta")).transpose()?;
    let position_ids = match position_ids {
        Some(p) if p.shape == ids.shape || p.shape == [1, sequence] => Some(p.to_i64s()?),
        Some(p) => {
            return Err(bad_input!(
                "position_ids has shape {:?}; it must be [{batch}, {sequence}] or [1, {sequence}]",
                p.shape
            ));
        }
        None => None,
    };
    let tokens = count(&[batch, sequence, hidden])?;
    ctx.check_grown(tokens, ids.len())?;
    let row = |t: &Table, index: i64, what: &str| -> Result<usize, KernelError> {
        usize::try_from(index)
            .ok()
            .filter(|&i| i < t.rows)
            .ok_or_else(|| bad_input!("{what} {index} is out of range: the table has {} rows", t.rows))
    };
    let ids_values = ids.to_i64s()?;
    let mut sum = Vec::with_capacity(tokens);
    for (i, &id) in ids_values.iter().enumerate() {
        let w = row(&words, id, "word id")?;
        let position = match &position_ids {
            Some(p) => p[i % p.len()],
            None => (i % sequence) as i64,
        };
        let p = row(&positions, position, "position")?;
        let s = match &segments {
            Some((ids, table)) => Some((row(table, ids[i], "segment id")?, table)),
            None => None,
        };
        for h in 0..hidden {
            let mut v = words.values.at(w * hidden + h) + positions.values.at(p * hidden + h);
            if let Some((s, table)) = s {
                v += table.values.at(s * hidden + h);
            }
            sum.push(v);
        }
    }
    // The sum is the third output, which exports rarely name.
    let want_sum = ctx.node.outputs.get(2).is_some_and(|o| !o.is_empty());
    let (mut y, sum) = if want_sum { (sum.clone(), Some(sum)) } else { (sum, None) };
    if hidden > 0 {
        let eps = epsilon(ctx);
        for r in y.chunks_mut(hidden) {
            normalize(r, eps, false, &gamma, beta.as_deref());
        }
    }
    let mask_index: Vec<i64> = match optional(inputs, 7)? {
        Some(m) if m.shape == ids.shape => {
            let m = m.to_i64s()?;
            if sequence == 0 {
                vec![0; batch]
            } else {
                m.chunks(sequence).map(|r| r.iter().filter(|&&v| v == 1).count() as i64).collect()
            }
        }
        Some(m) => return Err(bad_input!("mask has shape {:?}, input_ids {:?}", m.shape, ids.shape)),
        None => vec![0; batch],
    };
    let shape = vec![batch, sequence, hidden];
    let mut outputs = vec![
        Value::Tensor(from_f64_like(dt, shape.clone(), y)?),
        Value::Tensor(integers_as(DataType::Int32, vec![batch], mask_index)),
    ];
    if let Some(sum) = sum {
        outputs.push(Value::Tensor(from_f64_like(dt, shape, sum)?));
    }
    Ok(named(ctx, outputs))
}
