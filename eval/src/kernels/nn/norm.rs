//! Normalization: BatchNormalization, LayerNormalization, InstanceNormalization,
//! RMSNormalization, GroupNormalization, LpNormalization, MeanVarianceNormalization, LRN.

use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::kernels::{Ctx, count, input, one, optional};
use crate::value::{Data, Tensor, Value};

/// Inference mode: `(x - mean) / sqrt(var + epsilon) * scale + bias` per channel.
pub(super) fn batch_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let [scale, bias, mean, var] = [1, 2, 3, 4].map(|i| input(inputs, i).and_then(Tensor::to_f64s));
    let (scale, bias, mut mean, mut var) = (scale?, bias?, mean?, var?);
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let channels = *x.shape.get(1).unwrap_or(&1);
    if [&scale, &bias, &mean, &var].iter().any(|v| v.len() != channels) {
        return Err(bad_input!("per-channel inputs do not have {channels} values"));
    }
    let inner = count(&x.shape[2.min(x.rank())..])?;
    let training = ctx.int("training_mode").unwrap_or(0) != 0;
    // Inference on float32: one scale and shift per channel (in f64), each element
    // computed in f64 and rounded once, without an f64 copy of the tensor.
    if let (Data::F32(xs), false) = (&*x.data, training) {
        let gains: Vec<f64> = (0..channels).map(|c| scale[c] / (var[c] + eps).sqrt()).collect();
        let shifts: Vec<f64> = (0..channels).map(|c| bias[c] - mean[c] * gains[c]).collect();
        let mut out = vec![0.0f32; xs.len()];
        for (i, (plane, y)) in xs.chunks(inner.max(1)).zip(out.chunks_mut(inner.max(1))).enumerate() {
            let (g, b) = (gains[i % channels.max(1)], shifts[i % channels.max(1)]);
            crate::simd::widest(
                #[inline(always)]
                || {
                    for (o, &e) in y.iter_mut().zip(plane) {
                        *o = (f64::from(e) * g + b) as f32;
                    }
                },
            );
        }
        return one(Tensor::new(x.shape.clone(), Data::F32(out.into())));
    }
    let mut v = x.to_f64s()?;
    // Training mode normalizes with the batch's own mean and (biased) variance per channel,
    // and also returns the running statistics moved towards them by `1 − momentum`.
    let mut running = None;
    if training {
        let momentum = f64::from(ctx.float("momentum").unwrap_or(0.9));
        let per_channel = (v.len() / channels.max(1)).max(1) as f64;
        let (mut sums, mut squares) = (vec![0.0; channels], vec![0.0; channels]);
        for (i, e) in v.iter().enumerate() {
            sums[(i / inner.max(1)) % channels] += e;
        }
        let batch_mean: Vec<f64> = sums.iter().map(|s| s / per_channel).collect();
        for (i, e) in v.iter().enumerate() {
            let c = (i / inner.max(1)) % channels;
            squares[c] += (e - batch_mean[c]).powi(2);
        }
        let batch_var: Vec<f64> = squares.iter().map(|s| s / per_channel).collect();
        let moved = |old: &[f64], new: &[f64]| {
            old.iter().zip(new).map(|(o, n)| o * momentum + n * (1.0 - momentum)).collect::<Vec<_>>()
        };
        running = Some((moved(&mean, &batch_mean), moved(&var, &batch_var)));
        (mean, var) = (batch_mean, batch_var);
    }
    for (i, e) in v.iter_mut().enumerate() {
        let c = (i / inner) % channels;
        *e = (*e - mean[c]) / (var[c] + eps).sqrt() * scale[c] + bias[c];
    }
    let y = Value::Tensor(numeric_like(x.data_type(), x.shape.clone(), v)?);
    match running {
        Some((m, r)) => Ok(vec![
            y,
            Value::Tensor(numeric_like(x.data_type(), vec![channels], m)?),
            Value::Tensor(numeric_like(x.data_type(), vec![channels], r)?),
        ]),
        None => Ok(vec![y]),
    }
}

pub(super) fn layer_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let a = crate::kernels::axis(ctx.int("axis").unwrap_or(-1), x.rank())?;
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let (outer, inner) = (count(&x.shape[..a])?, count(&x.shape[a..])?);
    // One mean and one deviation per row: an empty input may still have many rows.
    ctx.check_grown(outer, x.len())?;
    let scale = input(inputs, 1)?;
    let bias = optional(inputs, 2)?;
    let norm_shape = &x.shape[a..];
    if let Some(out) = layer_norm_f32(ctx, x, a, (scale, bias), (outer, inner), eps)? {
        return Ok(out);
    }
    let s = broadcast_to(scale, norm_shape, x)?;
    let b = match bias {
        Some(b) => broadcast_to(b, norm_shape, x)?,
        None => vec![0.0; s.len()],
    };
    let mut v = x.to_f64s()?;
    let (mut means, mut inv_stds) = (Vec::with_capacity(outer), Vec::with_capacity(outer));
    for o in 0..outer {
        let row = &mut v[o * inner..(o + 1) * inner];
        let mean = row.iter().sum::<f64>() / inner as f64;
        let var = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / inner as f64;
        let inv = 1.0 / (var + eps).sqrt();
        for (k, e) in row.iter_mut().enumerate() {
            *e = (*e - mean) * inv * s[k] + b[k];
        }
        means.push(mean);
        inv_stds.push(inv);
    }
    let mut out = vec![Value::Tensor(numeric_like(x.data_type(), x.shape.clone(), v)?)];
    let mut reduced = x.shape[..a].to_vec();
    reduced.extend(std::iter::repeat_n(1, x.rank() - a));
    let stash = if ctx.int("stash_type").unwrap_or(1) == 1 { onnx_core::ir::DataType::Float } else { x.data_type() };
    if ctx.node.outputs.len() > 1 {
        out.push(Value::Tensor(numeric_like(stash, reduced.clone(), means)?));
    }
    if ctx.node.outputs.len() > 2 {
        out.push(Value::Tensor(numeric_like(stash, reduced, inv_stds)?));
    }
    Ok(out)
}

/// LayerNormalization of float32 rows with float32 scale and bias of a row's shape (every
/// transformer's): the general path's arithmetic (f64 from the float32 values, rounded
/// once), with each row's sums taken in eight lanes and every loop compiled for the widest
/// vectors, and no f64 copy of the tensor. A running f64 sum per row, one addition waiting
/// on the last, made ten LayerNormalizations of a 384-wide transformer 2 ms of its run.
/// `None` for other types or broadcast scales, which the general path takes.
fn layer_norm_f32(
    ctx: &Ctx<'_>,
    x: &Tensor,
    axis: usize,
    (scale, bias): (&Tensor, Option<&Tensor>),
    (outer, inner): (usize, usize),
    eps: f64,
) -> Result<Option<Vec<Value>>, KernelError> {
    let row_shaped = |t: &Tensor| t.shape == x.shape[axis..];
    let (Data::F32(v), Data::F32(s)) = (&*x.data, &*scale.data) else { return Ok(None) };
    let b = match bias.map(|b| (b, &*b.data)) {
        None => None,
        Some((b, Data::F32(bv))) if row_shaped(b) => Some(bv),
        Some(_) => return Ok(None),
    };
    if !row_shaped(scale) || x.is_empty() {
        return Ok(None);
    }
    let mut out = vec![0f32; v.len()];
    let (mut means, mut inv_stds) = (Vec::with_capacity(outer), Vec::with_capacity(outer));
    for (row, dest) in v.chunks(inner.max(1)).zip(out.chunks_mut(inner.max(1))) {
        let (mean, inv) = crate::simd::widest(
            #[inline(always)]
            || {
                let mean = lane_sum(row, |x| x) / inner as f64;
                let var = lane_sum(row, |x| (x - mean) * (x - mean)) / inner as f64;
                let inv = 1.0 / (var + eps).sqrt();
                match b {
                    Some(b) => {
                        for (((o, &x), &s), &b) in dest.iter_mut().zip(row).zip(s.iter()).zip(b.iter()) {
                            *o = ((f64::from(x) - mean) * inv * f64::from(s) + f64::from(b)) as f32;
                        }
                    }
                    None => {
                        for ((o, &x), &s) in dest.iter_mut().zip(row).zip(s.iter()) {
                            *o = ((f64::from(x) - mean) * inv * f64::from(s)) as f32;
                        }
                    }
                }
                (mean, inv)
            },
        );
        means.push(mean);
        inv_stds.push(inv);
    }
    let mut values = vec![Value::Tensor(Tensor::new(x.shape.clone(), Data::F32(out.into())))];
    let mut reduced = x.shape[..axis].to_vec();
    reduced.extend(std::iter::repeat_n(1, x.rank() - axis));
    // The stash type is float32 either way (stash_type 1, or the input's).
    if ctx.node.outputs.len() > 1 {
        values.push(Value::Tensor(numeric_like(onnx_core::ir::DataType::Float, reduced.clone(), means)?));
    }
    if ctx.node.outputs.len() > 2 {
        values.push(Value::Tensor(numeric_like(onnx_core::ir::DataType::Float, reduced, inv_stds)?));
    }
    Ok(Some(values))
}

/// The sum of `f` of each value in f64, in eight lanes (one addition need not wait on
/// the last, and the lanes fill a vector register).
#[inline(always)]
fn lane_sum(row: &[f32], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = row.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().map(|&x| f(f64::from(x))).sum();
    for c in chunks {
        for l in 0..8 {
            acc[l] += f(f64::from(c[l]));
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// `t`'s values broadcast to `shape`, the shape of each row of `x`: none when `x` is empty
/// (no row reads them, and its rows may declare any size).
fn broadcast_to(t: &Tensor, shape: &[usize], x: &Tensor) -> Result<Vec<f64>, KernelError> {
    let v = t.to_f64s()?;
    if crate::broadcast::shape(&[&t.shape, shape])? != shape {
        return Err(bad_input!("shape {:?} does not broadcast to {shape:?}", t.shape));
    }
    if x.is_empty() {
        return Ok(Vec::new());
    }
    Ok(crate::broadcast::offsets(shape, &crate::broadcast::input_strides(&t.shape, shape)).map(|i| v[i]).collect())
}

pub(super) fn instance_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (scale, bias) = (input(inputs, 1)?.to_f64s()?, input(inputs, 2)?.to_f64s()?);
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let channels = *x.shape.get(1).ok_or(bad_input!("InstanceNormalization needs a channel axis"))?;
    if scale.len() != channels || bias.len() != channels {
        return Err(bad_input!("scale and bias need one value per channel"));
    }
    let size = count(&x.shape[2..])?;
    let mut v = x.to_f64s()?;
    for (p, plane) in v.chunks_mut(size.max(1)).enumerate() {
        let c = p % channels;
        let mean = plane.iter().sum::<f64>() / size as f64;
        let var = plane.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / size as f64;
        for e in plane.iter_mut() {
            *e = (*e - mean) / (var + eps).sqrt() * scale[c] + bias[c];
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), v)?)
}

pub(super) fn rms_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let a = crate::kernels::axis(ctx.int("axis").unwrap_or(-1), x.rank())?;
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let inner = count(&x.shape[a..])?;
    let s = broadcast_to(input(inputs, 1)?, &x.shape[a..], x)?;
    let mut v = x.to_f64s()?;
    let mut inv_stds = Vec::new();
    for row in v.chunks_mut(inner.max(1)) {
        let mean_square = row.iter().map(|x| x * x).sum::<f64>() / inner as f64;
        let inv = 1.0 / (mean_square + eps).sqrt();
        for (k, e) in row.iter_mut().enumerate() {
            *e = *e * inv * s[k];
        }
        inv_stds.push(inv);
    }
    let mut out = vec![Value::Tensor(numeric_like(x.data_type(), x.shape.clone(), v)?)];
    // onnxruntime's SimplifiedLayerNormalization may also give each row's inverse deviation.
    if ctx.node.outputs.len() > 1 {
        let mut reduced = x.shape[..a].to_vec();
        reduced.extend(std::iter::repeat_n(1, x.rank() - a));
        let stash =
            if ctx.int("stash_type").unwrap_or(1) == 1 { onnx_core::ir::DataType::Float } else { x.data_type() };
        // Rows of no element (an axis of size 0) have no chunk above: their mean square is 0.
        inv_stds.resize(count(&reduced)?, 1.0 / eps.sqrt());
        out.push(Value::Tensor(numeric_like(stash, reduced, inv_stds)?));
    }
    Ok(out)
}

/// Channels in `num_groups` groups, each normalized over its channels and spatial axes;
/// scale and bias per channel (opset 21) or per group (opset 18).
pub(super) fn group_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let (scale, bias) = (input(inputs, 1)?.to_f64s()?, input(inputs, 2)?.to_f64s()?);
    let groups = usize::try_from(ctx.int("num_groups").ok_or(bad_attribute!("num_groups is required"))?)
        .ok()
        .filter(|&g| g > 0)
        .ok_or(bad_attribute!("num_groups must be positive"))?;
    let eps = f64::from(ctx.float("epsilon").unwrap_or(1e-5));
    let channels = *x.shape.get(1).ok_or(bad_input!("GroupNormalization needs a channel axis"))?;
    if channels % groups != 0 {
        return Err(bad_input!("{channels} channels do not divide into {groups} groups"));
    }
    let per_group = channels / groups;
    // Scale and bias come per channel (opset 21) or per group (opset 18).
    for (name, values) in [("scale", &scale), ("bias", &bias)] {
        if values.len() != channels && values.len() != groups {
            return Err(bad_input!(
                "{name} holds {} values, not {channels} (channels) or {groups} (groups)",
                values.len()
            ));
        }
    }
    if scale.len() != bias.len() {
        return Err(bad_input!("scale holds {} values and bias {}", scale.len(), bias.len()));
    }
    let size = count(&x.shape[2..])?;
    let mut v = x.to_f64s()?;
    for (gi, group) in v.chunks_mut(per_group.saturating_mul(size).max(1)).enumerate() {
        let g = gi % groups;
        let n = group.len() as f64;
        let mean = group.iter().sum::<f64>() / n;
        let var = group.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        for (k, e) in group.iter_mut().enumerate() {
            let c = g * per_group + k / size.max(1);
            let (s, b) = if scale.len() == channels { (scale[c], bias[c]) } else { (scale[g], bias[g]) };
            *e = (*e - mean) / (var + eps).sqrt() * s + b;
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), v)?)
}

pub(super) fn lp_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let a = crate::kernels::axis(ctx.int("axis").unwrap_or(-1), x.rank())?;
    let p = ctx.int("p").unwrap_or(2);
    if x.is_empty() {
        // Nothing to normalize (and the other axes may be of any size).
        return one(x.clone());
    }
    let (outer, n, inner) = (count(&x.shape[..a])?, x.shape[a], count(&x.shape[a + 1..])?);
    let mut v = x.to_f64s()?;
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let norm = if p == 1 {
                (0..n).map(|k| v[at(k)].abs()).sum::<f64>()
            } else {
                (0..n).map(|k| v[at(k)] * v[at(k)]).sum::<f64>().sqrt()
            };
            for k in 0..n {
                v[at(k)] = if norm == 0.0 { 0.0 } else { v[at(k)] / norm };
            }
        }
    }
    one(numeric_like(x.data_type(), x.shape.clone(), v)?)
}

pub(super) fn mean_variance_norm(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => a.iter().map(|&v| crate::kernels::axis(v, x.rank())).collect::<Result<_, _>>()?,
        None => vec![0, 2, 3].into_iter().filter(|&a| a < x.rank()).collect(),
    };
    if x.is_empty() {
        // No groups to normalize (and the kept axes may be of any size).
        return one(x.clone());
    }
    let strides = crate::broadcast::strides(&x.shape);
    let kept: Vec<usize> = (0..x.rank()).filter(|a| !axes.contains(a)).collect();
    let key = |i: usize| -> usize { kept.iter().fold(0, |k, &a| k * x.shape[a] + (i / strides[a]) % x.shape[a]) };
    let groups = kept.iter().map(|&a| x.shape[a]).product::<usize>().max(1);
    let v = x.to_f64s()?;
    let (mut sum, mut square, mut n) = (vec![0.0; groups], vec![0.0; groups], vec![0usize; groups]);
    for (i, &e) in v.iter().enumerate() {
        let k = key(i);
        sum[k] += e;
        square[k] += e * e;
        n[k] += 1;
    }
    let out = v
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            let k = key(i);
            let mean = sum[k] / n[k] as f64;
            let var = square[k] / n[k] as f64 - mean * mean;
            (e - mean) / (var.max(0.0).sqrt() + 1e-9)
        })
        .collect();
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}

pub(super) fn lrn(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let size = usize::try_from(ctx.int("size").ok_or(bad_attribute!("size is required"))?)
        .ok()
        .filter(|&s| s > 0)
        .ok_or(bad_attribute!("size must be positive"))?;
    let (alpha, beta, bias) = (
        f64::from(ctx.float("alpha").unwrap_or(1e-4)),
        f64::from(ctx.float("beta").unwrap_or(0.75)),
        f64::from(ctx.float("bias").unwrap_or(1.0)),
    );
    if x.rank() < 2 {
        return Err(bad_input!("LRN needs [N, C, …]"));
    }
    if x.is_empty() {
        // Nothing to normalize (and the other axes may be of any size).
        return one(x.clone());
    }
    let dims = (x.shape[0], x.shape[1], count(&x.shape[2..])?);
    let params = LrnParams { size, alpha, beta, bias };
    // Float32 is read and written as it is: widened copies of the input, its squares and
    // the output were most of the time (fresh pages for each).
    if let Data::F32(v) = &*x.data {
        return one(Tensor::new(x.shape.clone(), Data::F32(lrn_values(v, dims, &params, |y| y as f32).into())));
    }
    let out = lrn_values(&x.to_f64s()?, dims, &params, |y| y);
    one(numeric_like(x.data_type(), x.shape.clone(), out)?)
}

struct LrnParams {
    size: usize,
    alpha: f64,
    beta: f64,
    bias: f64,
}

/// LRN over `[n, c, inner]` values, computed in f64 and narrowed once by `narrow`:
/// `x / (bias + alpha/size · Σ x²)^beta`, the sum over the channels around each one. The
/// planes are cut into shares for the cores.
fn lrn_values<T: Copy + Into<f64> + Sync, O: Copy + Default + Send>(
    v: &[T],
    (n, c, inner): (usize, usize, usize),
    p: &LrnParams,
    narrow: impl Fn(f64) -> O + Sync,
) -> Vec<O> {
    let (before, after) = ((p.size - 1) / 2, (p.size - 1).div_ceil(2));
    let scale = p.alpha / p.size as f64;
    let (c, inner) = (c.max(1), inner.max(1));
    let mut out = vec![O::default(); n * c * inner];
    // A plane costs a square per channel of the window and a division and two roots a value.
    let cost = inner.saturating_mul(p.size.min(c) + 8);
    crate::shares::over_units(&mut out, inner, cost, |first, part| {
        let mut window = vec![0.0f64; inner];
        // Compiled for the widest vectors: square roots and divisions are most of the work.
        crate::simd::widest(
            #[inline(always)]
            || {
                for (i, plane_out) in part.chunks_mut(inner).enumerate() {
                    let (b, ch) = ((first + i) / c, (first + i) % c);
                    let (lo, hi) = (ch.saturating_sub(before), ch.saturating_add(after).min(c - 1));
                    // The squares of the channels around `ch`, summed plane by plane in
                    // channel order.
                    window.fill(0.0);
                    for k in lo..=hi {
                        let plane = &v[(b * c + k) * inner..(b * c + k + 1) * inner];
                        window.iter_mut().zip(plane).for_each(|(sum, &x)| {
                            let x: f64 = x.into();
                            *sum += x * x;
                        });
                    }
                    let at = (b * c + ch) * inner;
                    let values = plane_out.iter_mut().zip(&v[at..at + inner]).zip(&window);
                    // `b^0.75` (every LRN of AlexNet and GoogLeNet) as `√b·√√b`: two square
                    // roots, which vectorize, for a `powf` per element (within an ulp of it).
                    if p.beta == 0.75 {
                        for ((o, &x), &square) in values {
                            let base = p.bias + scale * square;
                            *o = narrow(x.into() / (base.sqrt() * base.sqrt().sqrt()));
                        }
                    } else {
                        for ((o, &x), &square) in values {
                            *o = narrow(x.into() / (p.bias + scale * square).powf(p.beta));
                        }
                    }
                }
            },
        );
    });
    out
}
