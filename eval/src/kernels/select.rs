//! Operators that select, scatter or rearrange elements by index or by a rule: Trilu,
//! CumSum/CumProd, TopK, OneHot, the Scatter and GatherND family, Compress, NonZero,
//! EyeLike, DepthToSpace/SpaceToDepth, ReverseSequence, Unique.

use std::collections::HashMap;

use super::{Ctx, Kernel, axis, count, input, input_axis, one, optional};
use crate::broadcast::strides;
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::kernels::common::dtype_attr;
use crate::kernels::common::numeric_like;
use crate::number::{Number, narrowed_half, widened_half};
use crate::value::{Data, Tensor, Value};
use crate::with_number;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Trilu" => trilu,
        "CenterCropPad" => center_crop_pad,
        "CumSum" | "CumProd" => cumulative,
        "TopK" => top_k,
        "OneHot" => one_hot,
        "ScatterElements" | "Scatter" => scatter_elements,
        "ScatterND" => scatter_nd,
        "GatherND" => gather_nd,
        "Compress" => compress,
        "NonZero" => non_zero,
        "EyeLike" => eye_like,
        "DepthToSpace" | "SpaceToDepth" => depth_space,
        "ReverseSequence" => reverse_sequence,
        "Unique" => unique,
        "NonMaxSuppression" => non_max_suppression,
        "BitCast" => bit_cast,
        _ => return None,
    };
    Some(k)
}

/// `t`'s elements followed by one zero (false for booleans), and where that zero is: a
/// gather from it can fill any position with zero.
fn with_zero(t: &Tensor) -> Result<(Data, usize), KernelError> {
    let zero = numeric_like(t.data_type(), vec![1], vec![0.0])
        .or_else(|_| Ok::<_, KernelError>(Tensor::new(vec![1], Data::Bool(vec![false]))))?;
    let mut joined = (*t.data).clone();
    joined.extend_from(&zero.data)?;
    Ok((joined, t.len()))
}

/// CenterCropPad: each listed axis cropped or zero-padded to its new size, centred (the
/// odd element goes to the end).
fn center_crop_pad(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let sizes = input(inputs, 1)?.to_i64s()?;
    let rank = t.rank();
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => a.iter().map(|&a| axis(a, rank)).collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    if axes.len() != sizes.len() {
        return Err(bad_input!("shape has {} values for {} axes", sizes.len(), axes.len()));
    }
    let mut out_shape = t.shape.clone();
    // Per axis: output index o reads input index o + shift (negative when padding).
    let mut shift = vec![0i64; rank];
    for (&a, &size) in axes.iter().zip(&sizes) {
        let size = usize::try_from(size).map_err(|_| bad_input!("size {size} is negative"))?;
        let dim = t.shape[a];
        shift[a] = if size <= dim { ((dim - size) / 2) as i64 } else { -(((size - dim) / 2) as i64) };
        out_shape[a] = size;
    }
    let total = count(&out_shape)?;
    ctx.check_elements(total)?;
    let (joined, zero_at) = with_zero(t)?;
    let in_strides = crate::broadcast::strides(&t.shape);
    let picked = (0..total).map(|flat| {
        let mut rest = flat;
        let mut at = 0usize;
        for a in (0..rank).rev() {
            let o = (rest % out_shape[a]) as i64;
            rest /= out_shape[a];
            let i = o + shift[a];
            if i < 0 || i >= t.shape[a] as i64 {
                return zero_at;
            }
            at += i as usize * in_strides[a];
        }
        at
    });
    one(Tensor::new(out_shape.clone(), joined.pick(picked)))
}

fn trilu(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    if t.rank() < 2 {
        return Err(bad_input!("Trilu needs a matrix"));
    }
    let k = match optional(inputs, 1)? {
        Some(k) => k.to_i64s()?.first().copied().unwrap_or(0),
        None => 0,
    };
    let upper = ctx.int("upper").unwrap_or(1) != 0;
    let (rows, cols) = (t.shape[t.rank() - 2], t.shape[t.rank() - 1]);
    let (joined, zero_at) = with_zero(t)?;
    let picked = (0..t.len()).map(|i| {
        let (r, c) = (((i / cols.max(1)) % rows.max(1)) as i64, (i % cols.max(1)) as i64);
        let keep = if upper { c - r >= k } else { c - r <= k };
        if keep { i } else { zero_at }
    });
    one(Tensor::new(t.shape.clone(), joined.pick(picked)))
}

fn cumulative(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let a = input_axis(input(inputs, 1)?.to_i64s()?.first().copied().ok_or(bad_input!("axis is empty"))?, t.rank())?;
    let exclusive = ctx.int("exclusive").unwrap_or(0) != 0;
    let reverse = ctx.int("reverse").unwrap_or(0) != 0;
    let product = ctx.op() == "CumProd";
    let (outer, n, inner) = (count(&t.shape[..a])?, t.shape[a], count(&t.shape[a + 1..])?);
    let dims = (outer, n, inner);
    let data = match widened_half(&t.data) {
        Some((v, dt)) => narrowed_half(&accumulated(&v, dims, product, exclusive, reverse), dt),
        None => with_number!(&*t.data, v => Number::data(accumulated(v, dims, product, exclusive, reverse)),
            other => return Err(bad_input!("cannot accumulate {} values", other.data_type().name()))),
    };
    one(Tensor::new(t.shape.clone(), data))
}

/// The running sums (or products) along the middle axis of `v`, in its own type: integers
/// exactly, wrapping as numpy's cumsum does.
fn accumulated<T: Number>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    product: bool,
    exclusive: bool,
    reverse: bool,
) -> Vec<T> {
    let mut out = vec![T::ZERO; v.len()];
    // An empty input may declare any number of rows: nothing to accumulate.
    let outer = if v.is_empty() { 0 } else { outer };
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = if product { T::ONE } else { T::ZERO };
            for step in 0..n {
                let k = if reverse { n - 1 - step } else { step };
                let at = (o * n + k) * inner + i;
                if exclusive {
                    out[at] = acc;
                }
                acc = if product { acc.mul(v[at]) } else { acc.add(v[at]) };
                if !exclusive {
                    out[at] = acc;
                }
            }
        }
    }
    out
}

fn top_k(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let k = if ctx.opset >= 10 {
        input(inputs, 1)?.to_i64s()?.first().copied().ok_or(bad_input!("k is empty"))?
    } else {
        ctx.int("k").ok_or(bad_attribute!("k is missing"))?
    };
    let a = axis(ctx.int("axis").unwrap_or(-1), t.rank())?;
    let largest = ctx.int("largest").unwrap_or(1) != 0;
    let n = t.shape[a];
    let k = usize::try_from(k).ok().filter(|&k| k <= n).ok_or_else(|| bad_input!("k = {k} for an axis of {n}"))?;
    let (outer, inner) = (count(&t.shape[..a])?, count(&t.shape[a + 1..])?);
    let mut shape = t.shape.clone();
    shape[a] = k;
    if t.is_empty() {
        // No rows to sort (and the other axes may be of any size); k ≤ n keeps it empty.
        return Ok(vec![
            Value::Tensor(Tensor::new(shape.clone(), Data::empty(t.data_type(), 0)?)),
            Value::Tensor(Tensor::new(shape, Data::I64(Vec::new().into()))),
        ]);
    }
    let dims = (outer, n, inner);
    let result = match widened_half(&t.data) {
        Some((v, _)) => top_positions(&v, dims, k, largest),
        None => with_number!(&*t.data, v => top_positions(v, dims, k, largest),
            other => return Err(bad_input!("no order on {} values", other.data_type().name()))),
    };
    let (picked, indices): (Vec<usize>, Vec<i64>) = result.into_iter().unzip();
    Ok(vec![
        Value::Tensor(Tensor::new(shape.clone(), t.data.pick(picked.into_iter()))),
        Value::Tensor(Tensor::new(shape, Data::I64(indices.into()))),
    ])
}

/// The `k` largest (or smallest) of each row along the middle axis, compared in the
/// elements' own type (int64 exactly): (position in `v`, index along the axis), row by row.
fn top_positions<T: PartialOrd + Copy>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    k: usize,
    largest: bool,
) -> Vec<(usize, i64)> {
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut result = vec![(0usize, 0i64); outer * k * inner];
    for o in 0..outer {
        for i in 0..inner {
            order.clear();
            order.extend(0..n);
            let at = |j: usize| (o * n + j) * inner + i;
            // Ties keep the lower index first, as onnx's reference does (a stable sort).
            order.sort_by(|&x, &y| {
                let (p, q) = (v[at(x)], v[at(y)]);
                let ord = p.partial_cmp(&q).unwrap_or(std::cmp::Ordering::Equal);
                if largest { ord.reverse() } else { ord }
            });
            for (r, &j) in order.iter().take(k).enumerate() {
                result[(o * k + r) * inner + i] = (at(j), j as i64);
            }
        }
    }
    result
}

fn one_hot(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (indices, depth, values) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let depth = depth.to_f64s()?.first().copied().ok_or(bad_input!("depth is empty"))? as i64;
    let depth = usize::try_from(depth).map_err(|_| bad_input!("depth {depth}"))?;
    if values.len() != 2 {
        return Err(bad_input!("values must hold [off, on]"));
    }
    let rank = indices.rank() + 1;
    let a = axis(ctx.int("axis").unwrap_or(-1), rank)?;
    let mut shape = indices.shape.clone();
    shape.insert(a, depth);
    let n = count(&shape)?;
    ctx.check_elements(n)?;
    let idx = indices.to_f64s()?;
    let (outer, inner) = (count(&indices.shape[..a])?, count(&indices.shape[a..])?);
    let picked = (0..n).map(|p| {
        let o = p / (depth * inner);
        let d = (p / inner) % depth;
        let i = p % inner;
        let mut want = idx[o * inner + i] as i64;
        if want < 0 {
            want += depth as i64;
        }
        usize::from(want == d as i64)
    });
    let _ = outer;
    one(Tensor::new(shape, values.data.pick(picked)))
}

/// How a scatter combines the existing element with the update.
fn reduction(ctx: &Ctx<'_>) -> Result<fn(f64, f64) -> f64, KernelError> {
    Ok(match ctx.string("reduction").unwrap_or("none") {
        "none" => |_, u| u,
        "add" => |a, u| a + u,
        "mul" => |a, u| a * u,
        "max" => f64::max,
        "min" => f64::min,
        other => return Err(bad_attribute!("unknown reduction '{other}'")),
    })
}

/// Writes `updates` into a copy of `data` at `targets` (offsets), combined by the reduction;
/// strings and bools only replace.
fn scatter_into(
    ctx: &Ctx<'_>,
    data: &Tensor,
    targets: &[usize],
    updates: &Tensor,
    per_target: usize,
) -> Result<Vec<Value>, KernelError> {
    let combine = reduction(ctx)?;
    let plain = ctx.string("reduction").unwrap_or("none") == "none";
    if plain || matches!(&*data.data, Data::Str(_) | Data::Bool(_)) {
        // Later updates of one target win, as in onnx's reference.
        let mut out = (*data.data).clone();
        let pairs =
            targets.iter().enumerate().flat_map(|(u, &t)| (0..per_target).map(move |j| (t + j, u * per_target + j)));
        out.assign(pairs, &updates.data)?;
        return one(Tensor::new(data.shape.clone(), out));
    }
    let mut v = data.to_f64s()?;
    let u = updates.to_f64s()?;
    for (k, &t) in targets.iter().enumerate() {
        for j in 0..per_target {
            v[t + j] = combine(v[t + j], u[k * per_target + j]);
        }
    }
    one(numeric_like(data.data_type(), data.shape.clone(), v)?)
}

fn scatter_elements(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (data, idx, updates) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let a = axis(ctx.int("axis").unwrap_or(0), data.rank())?;
    if idx.shape != updates.shape || idx.rank() != data.rank() {
        return Err(bad_input!("indices and updates must have one shape, of the data's rank"));
    }
    let targets = crate::kernels::shape::element_offsets(data, idx, a)?;
    scatter_into(ctx, data, &targets, updates, 1)
}

/// For GatherND and ScatterND: the offset of each index tuple's slice, and the slice size.
/// The first `batch` axes of data and indices must agree; each tuple (the last axis of the
/// indices) indexes the axes after them, and an empty tuple takes the whole batch entry.
fn nd_offsets(
    ctx: &Ctx<'_>,
    data: &Tensor,
    idx: &Tensor,
    batch: usize,
) -> Result<(Vec<usize>, usize, usize), KernelError> {
    let last = *idx.shape.last().ok_or(bad_input!("indices need an axis"))?;
    if batch >= idx.rank() || batch.checked_add(last).is_none_or(|used| used > data.rank()) {
        return Err(bad_input!(
            "index tuples of {last} after {batch} batch axes do not fit data of rank {} and indices of rank {}",
            data.rank(),
            idx.rank()
        ));
    }
    if data.shape[..batch] != idx.shape[..batch] {
        return Err(bad_input!("the batch axes of data {:?} and indices {:?} differ", data.shape, idx.shape));
    }
    let slice = count(&data.shape[batch + last..])?;
    let ds = strides(&data.shape);
    let per_batch_data = count(&data.shape[batch..])?;
    let tuples = idx.to_i64s()?;
    let tuple_count = count(&idx.shape[..idx.rank() - 1])?;
    // Each tuple selects a slice: the result (and the list of tuples) may be large.
    ctx.check_grown(tuple_count.saturating_mul(slice.max(1)), data.len().max(idx.len()))?;
    let per_batch_tuples = count(&idx.shape[batch..idx.rank() - 1])?;
    let mut offsets = Vec::with_capacity(tuple_count);
    for t in 0..tuple_count {
        let tuple = &tuples[t * last..(t + 1) * last];
        let b = t.checked_div(per_batch_tuples).unwrap_or(0);
        let mut offset = b * per_batch_data;
        for (k, &i) in tuple.iter().enumerate() {
            let d = data.shape[batch + k] as i64;
            let j = if i < 0 { i + d } else { i };
            if !(0..d).contains(&j) {
                return Err(bad_input!("index {i} is out of range for size {d}"));
            }
            offset += j as usize * ds[batch + k];
        }
        offsets.push(offset);
    }
    Ok((offsets, slice, last))
}

fn gather_nd(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (data, idx) = (input(inputs, 0)?, input(inputs, 1)?);
    let batch =
        usize::try_from(ctx.int("batch_dims").unwrap_or(0)).map_err(|_| bad_attribute!("negative batch_dims"))?;
    let (offsets, slice, last) = nd_offsets(ctx, data, idx, batch)?;
    let mut shape = idx.shape[..idx.rank() - 1].to_vec();
    shape.extend_from_slice(&data.shape[batch + last..]);
    let picked = offsets.iter().flat_map(|&o| o..o + slice).collect::<Vec<_>>();
    one(Tensor::new(shape, data.data.pick(picked.into_iter())))
}

fn scatter_nd(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (data, idx, updates) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let (offsets, slice, _) = nd_offsets(ctx, data, idx, 0)?;
    if updates.len() != offsets.len() * slice {
        return Err(bad_input!("updates do not match the indices"));
    }
    scatter_into(ctx, data, &offsets, updates, slice)
}

fn compress(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (t, cond) = (input(inputs, 0)?, input(inputs, 1)?);
    let Data::Bool(keep) = &*cond.data else { return Err(bad_input!("the condition must be bool")) };
    match ctx.int("axis") {
        None => {
            let picked: Vec<usize> = (0..t.len()).filter(|&i| keep.get(i).copied().unwrap_or(false)).collect();
            one(Tensor::new(vec![picked.len()], t.data.pick(picked.into_iter())))
        }
        Some(a) => {
            let a = axis(a, t.rank())?;
            let (outer, n, inner) = (count(&t.shape[..a])?, t.shape[a], count(&t.shape[a + 1..])?);
            // The condition names positions along the axis: no more of them than it has.
            let kept: Vec<usize> = (0..n.min(keep.len())).filter(|&k| keep[k]).collect();
            // An empty input may declare any number of rows: nothing to copy.
            let outer = if t.is_empty() { 0 } else { outer };
            let picked = (0..outer)
                .flat_map(|o| kept.iter().flat_map(move |&k| ((o * n + k) * inner)..((o * n + k + 1) * inner)))
                .collect::<Vec<_>>();
            let mut shape = t.shape.clone();
            shape[a] = kept.len();
            one(Tensor::new(shape, t.data.pick(picked.into_iter())))
        }
    }
}

fn non_zero(_: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let nonzero: Vec<usize> = match &*t.data {
        Data::Str(s) => (0..s.len()).filter(|&i| !s[i].is_empty()).collect(),
        _ => t.to_f64s()?.iter().enumerate().filter(|(_, v)| **v != 0.0).map(|(i, _)| i).collect(),
    };
    let s = strides(&t.shape);
    let mut out = Vec::with_capacity(t.rank() * nonzero.len());
    for (stride, size) in s.iter().zip(&t.shape) {
        out.extend(nonzero.iter().map(|&i| ((i / stride) % size) as i64));
    }
    one(Tensor::new(vec![t.rank(), nonzero.len()], Data::I64(out.into())))
}

fn eye_like(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    if t.rank() != 2 {
        return Err(bad_input!("EyeLike takes a matrix"));
    }
    let k = ctx.int("k").unwrap_or(0);
    let dt = dtype_attr(ctx, "dtype", t.data_type())?;
    let cols = t.shape[1];
    let v = (0..t.len()).map(|i| if (i % cols) as i64 - (i / cols) as i64 == k { 1.0 } else { 0.0 }).collect();
    if dt == onnx_core::ir::DataType::Bool {
        return one(Tensor::new(
            t.shape.clone(),
            Data::Bool((0..t.len()).map(|i| (i % cols) as i64 - (i / cols) as i64 == k).collect()),
        ));
    }
    one(numeric_like(dt, t.shape.clone(), v)?)
}

fn depth_space(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    if t.rank() != 4 {
        return Err(bad_input!("expected [N, C, H, W]"));
    }
    let b = usize::try_from(ctx.int("blocksize").ok_or(bad_attribute!("blocksize is required"))?)
        .ok()
        .filter(|&b| b > 0)
        .ok_or(bad_attribute!("blocksize must be positive"))?;
    let [n, c, h, w] = [t.shape[0], t.shape[1], t.shape[2], t.shape[3]];
    let crd = ctx.string("mode") == Some("CRD");
    let s = strides(&t.shape);
    let too_large = || limit!("blocksize {b} is too large for input {:?}", t.shape);
    let bb = b.checked_mul(b).ok_or_else(too_large)?;
    let (shape, picked): (Vec<usize>, Vec<usize>) = if ctx.op() == "DepthToSpace" {
        if c % bb != 0 {
            return Err(bad_input!("{c} channels do not divide by blocksize² = {bb}"));
        }
        let oc = c / bb;
        let shape = vec![n, oc, h.checked_mul(b).ok_or_else(too_large)?, w.checked_mul(b).ok_or_else(too_large)?];
        count(&shape)?;
        if t.is_empty() {
            // Nothing to move (and the other axes may be of any size).
            return one(Tensor::new(shape, Data::empty(t.data_type(), 0)?));
        }
        let mut picked = Vec::with_capacity(t.len());
        for i0 in 0..n {
            for ch in 0..oc {
                for y in 0..h * b {
                    for x in 0..w * b {
                        let (by, bx) = (y % b, x % b);
                        let src_c = if crd { ch * b * b + by * b + bx } else { (by * b + bx) * oc + ch };
                        picked.push(i0 * s[0] + src_c * s[1] + (y / b) * s[2] + (x / b));
                    }
                }
            }
        }
        (shape, picked)
    } else {
        if h % b != 0 || w % b != 0 {
            return Err(bad_input!("height and width must divide by blocksize"));
        }
        let shape = vec![n, c.checked_mul(bb).ok_or_else(too_large)?, h / b, w / b];
        count(&shape)?;
        if t.is_empty() {
            // Nothing to move (and the other axes may be of any size).
            return one(Tensor::new(shape, Data::empty(t.data_type(), 0)?));
        }
        let mut picked = Vec::with_capacity(t.len());
        for i0 in 0..n {
            for oc in 0..c * b * b {
                let (block, ch) = if crd { (oc % (b * b), oc / (b * b)) } else { (oc / c, oc % c) };
                let (by, bx) = (block / b, block % b);
                for y in 0..h / b {
                    for x in 0..w / b {
                        picked.push(i0 * s[0] + ch * s[1] + (y * b + by) * s[2] + (x * b + bx));
                    }
                }
            }
        }
        (shape, picked)
    };
    one(Tensor::new(shape, t.data.pick(picked.into_iter())))
}

fn reverse_sequence(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (t, lens) = (input(inputs, 0)?, input(inputs, 1)?.to_i64s()?);
    let time = axis(ctx.int("time_axis").unwrap_or(0), t.rank())?;
    let batch = axis(ctx.int("batch_axis").unwrap_or(1), t.rank())?;
    let s = strides(&t.shape);
    let picked = (0..t.len()).map(|i| {
        let (tt, bb) = ((i / s[time]) % t.shape[time], (i / s[batch]) % t.shape[batch]);
        let len = lens.get(bb).copied().unwrap_or(0).clamp(0, t.shape[time] as i64) as usize;
        if tt < len { i - tt * s[time] + (len - 1 - tt) * s[time] } else { i }
    });
    one(Tensor::new(t.shape.clone(), t.data.pick(picked)))
}

/// Unique: the distinct values (or slices along `axis`), sorted or in order of first
/// appearance, with where each first appears, which distinct value each element is, and how
/// often each appears.
fn unique(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let sorted = ctx.int("sorted").unwrap_or(1) != 0;
    let (flat, a) = match ctx.int("axis") {
        Some(a) => (false, axis(a, t.rank())?),
        None => (true, 0),
    };
    let shape = if flat { vec![t.len()] } else { t.shape.clone() };
    let (outer, n, inner) = (count(&shape[..a])?, shape[a], count(&shape[a + 1..])?);
    // One key, inverse index and count per position along the axis, however empty the
    // slices are; an empty input's slices hold nothing (whatever its other axes).
    ctx.check_grown(n, t.len())?;
    let outer = if t.is_empty() { 0 } else { outer };
    // Each slice along the axis as its element offsets, compared by the values there.
    let slice = |k: usize| (0..outer).flat_map(move |o| ((o * n + k) * inner)..((o * n + k + 1) * inner));
    let keys: Vec<Vec<u64>> = match &*t.data {
        Data::Str(s) => {
            let mut table: Vec<&Vec<u8>> = s.iter().collect();
            table.sort();
            table.dedup();
            (0..n).map(|k| slice(k).map(|i| table.binary_search(&&s[i]).unwrap_or(0) as u64).collect()).collect()
        }
        _ => {
            let v = t.to_f64s()?;
            // Order-preserving keys of f64 (total order), so slices sort as their values do.
            let key = |x: f64| {
                let bits = x.to_bits();
                if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
            };
            (0..n).map(|k| slice(k).map(|i| key(v[i])).collect()).collect()
        }
    };
    let mut first: Vec<usize> = Vec::new();
    let mut inverse = vec![0usize; n];
    let mut counts: Vec<i64> = Vec::new();
    // Each distinct key's number, found by hashing: comparing every key with every distinct
    // one before it took quadratic time.
    let mut numbers: HashMap<&[u64], usize> = HashMap::with_capacity(n);
    for (k, key) in keys.iter().enumerate() {
        match numbers.get(key.as_slice()) {
            Some(&u) => {
                inverse[k] = u;
                counts[u] += 1;
            }
            None => {
                numbers.insert(key, first.len());
                inverse[k] = first.len();
                first.push(k);
                counts.push(1);
            }
        }
    }
    let mut order: Vec<usize> = (0..first.len()).collect();
    if sorted {
        order.sort_by(|&x, &y| keys[first[x]].cmp(&keys[first[y]]));
    }
    let mut rank = vec![0usize; order.len()];
    for (new, &old) in order.iter().enumerate() {
        rank[old] = new;
    }
    let mut picked: Vec<usize> = Vec::with_capacity(t.len());
    for o in 0..outer {
        for &u in &order {
            picked.extend(((o * n + first[u]) * inner)..((o * n + first[u] + 1) * inner));
        }
    }
    let mut y_shape = shape.clone();
    y_shape[a] = order.len();
    let y = Tensor::new(y_shape, t.data.pick(picked.into_iter()));
    let indices = Tensor::new(vec![order.len()], Data::I64(order.iter().map(|&u| first[u] as i64).collect()));
    let inverse = Tensor::new(vec![n], Data::I64(inverse.iter().map(|&u| rank[u] as i64).collect()));
    let counts = Tensor::new(vec![order.len()], Data::I64(order.iter().map(|&u| counts[u]).collect()));
    let mut out = vec![Value::Tensor(y), Value::Tensor(indices), Value::Tensor(inverse), Value::Tensor(counts)];
    out.truncate(ctx.node.outputs.len().max(1));
    Ok(out)
}

/// NonMaxSuppression: per batch and class, boxes above the score threshold, best first,
/// each kept unless it overlaps a kept one by more than the IoU threshold.
fn non_max_suppression(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (boxes, scores) = (input(inputs, 0)?, input(inputs, 1)?);
    if boxes.rank() != 3
        || scores.rank() != 3
        || boxes.shape[2] != 4
        || boxes.shape[0] != scores.shape[0]
        || boxes.shape[1] != scores.shape[2]
    {
        return Err(bad_input!("boxes {:?} and scores {:?} do not agree", boxes.shape, scores.shape));
    }
    let scalar = |i: usize| -> Result<Option<f64>, KernelError> {
        Ok(optional(inputs, i)?.map(Tensor::to_f64s).transpose()?.and_then(|v| v.first().copied()))
    };
    let max_boxes = scalar(2)?.unwrap_or(0.0).max(0.0) as usize;
    let iou_threshold = scalar(3)?.unwrap_or(0.0);
    let score_threshold = scalar(4)?;
    let center = ctx.int("center_point_box").unwrap_or(0) != 0;
    let (bv, sv) = (boxes.to_f64s()?, scores.to_f64s()?);
    let (batches, classes, n) = (scores.shape[0], scores.shape[1], scores.shape[2]);
    // Without scores there is nothing to select (and batches and classes may be any size).
    let batches = if sv.is_empty() { 0 } else { batches };
    // [y1, x1, y2, x2] with y1 ≤ y2 and x1 ≤ x2.
    let corners = |b: usize, i: usize| -> [f64; 4] {
        let v = &bv[(b * n + i) * 4..][..4];
        if center {
            let (xc, yc, w, h) = (v[0], v[1], v[2], v[3]);
            [yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0]
        } else {
            [v[0].min(v[2]), v[1].min(v[3]), v[0].max(v[2]), v[1].max(v[3])]
        }
    };
    let iou = |a: [f64; 4], b: [f64; 4]| -> f64 {
        let h = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
        let w = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
        let inter = h * w;
        let union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
        if union <= 0.0 { 0.0 } else { inter / union }
    };
    let mut selected: Vec<i64> = Vec::new();
    for b in 0..batches {
        for c in 0..classes {
            let score = |i: usize| sv[(b * classes + c) * n + i];
            let mut candidates: Vec<usize> = (0..n).filter(|&i| score_threshold.is_none_or(|t| score(i) > t)).collect();
            candidates.sort_by(|&x, &y| score(y).total_cmp(&score(x)));
            let mut kept: Vec<usize> = Vec::new();
            for i in candidates {
                if kept.len() >= max_boxes {
                    break;
                }
                if kept.iter().all(|&k| iou(corners(b, k), corners(b, i)) <= iou_threshold) {
                    kept.push(i);
                    selected.extend([b as i64, c as i64, i as i64]);
                }
            }
        }
    }
    let count = selected.len() / 3;
    one(Tensor::new(vec![count, 3], Data::I64(selected.into())))
}

/// BitCast: the same bytes read as another type of the same width.
fn bit_cast(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let to = dtype_attr(ctx, "to", t.data_type())?;
    if to.bits() != t.data_type().bits() || to.bits() % 8 != 0 || matches!(&*t.data, Data::Str(_)) {
        return Err(bad_attribute!("cannot reinterpret {} as {}", t.data_type().name(), to.name()));
    }
    let mut ir = t.to_ir(None);
    onnx_core::ir::tensor_data::typed_to_raw(&mut ir)
        .or_else(|e| if ir.raw_data.is_some() { Ok(()) } else { Err(KernelError::unsupported(e)) })?;
    ir.data_type = Some(to.code());
    one(Tensor::from_ir(&ir)?)
}
