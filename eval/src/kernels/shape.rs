//! Operators that move elements without computing new ones: reshaping (sharing the data),
//! transposing, slicing, gathering, concatenating, splitting, expanding, padding, and the
//! constants and shape queries.

use onnx_core::ir::AttributeValue;

use super::{Ctx, Kernel, axis, count, input, input_axis, one, optional};
use crate::broadcast;
use crate::error::{KernelError, bad_attribute, bad_input, limit, unsupported};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Reshape" => reshape,
        "Flatten" => flatten,
        "Squeeze" => squeeze,
        "Unsqueeze" => unsqueeze,
        "Transpose" => |ctx, i| copied(transposed(ctx, i)?),
        "Concat" => concat,
        "Slice" => |ctx, i| copied(sliced(ctx, i)?),
        "Gather" => gather,
        "GatherElements" => gather_elements,
        "Shape" => shape,
        "Size" => |_, i| one(Tensor::scalar(Data::I64(vec![input(i, 0)?.len() as i64].into()))),
        "Constant" => constant,
        "ConstantOfShape" => constant_of_shape,
        "Expand" => |ctx, i| copied(expanded(ctx, i)?),
        "Range" => range,
        "Tile" => tile,
        "Split" => split,
        "Pad" => pad,
        _ => return None,
    };
    Some(k)
}

/// The kernel of a node whose result only view-reading kernels read
/// ([`crate::registry::reads_views`]): its result stays a strided view of its input.
pub fn view_kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Transpose" => |ctx, i| one(transposed(ctx, i)?),
        "Slice" => |ctx, i| one(sliced(ctx, i)?),
        "Expand" => |ctx, i| one(expanded(ctx, i)?),
        _ => return None,
    };
    Some(k)
}

/// A view made by Transpose, Slice or Expand, copied row-major for readers of elements
/// (one copy from the first tensor of a chain of views).
fn copied(view: Tensor) -> Result<Vec<Value>, KernelError> {
    one(view.contiguous().into_owned())
}

/// The integers of input `i` (shapes, axes), or of attribute `attr` for older opsets.
fn ints_from(ctx: &Ctx<'_>, inputs: &[Option<&Value>], i: usize, attr: &str) -> Result<Option<Vec<i64>>, KernelError> {
    match optional(inputs, i)? {
        Some(t) => Ok(Some(t.to_i64s()?)),
        None => Ok(ctx.ints(attr).map(<[i64]>::to_vec)),
    }
}

fn dims(v: &[i64], what: &str) -> Result<Vec<usize>, KernelError> {
    v.iter().map(|&d| usize::try_from(d).map_err(|_| bad_input!("{what} has a negative size {d}"))).collect()
}

fn reshape(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let wanted = ints_from(ctx, inputs, 1, "shape")?.ok_or(bad_input!("Reshape needs a shape"))?;
    let allow_zero = ctx.int("allowzero").unwrap_or(0) != 0;
    let mut shape = Vec::with_capacity(wanted.len());
    let mut infer_at = None;
    for (i, &d) in wanted.iter().enumerate() {
        match d {
            -1 if infer_at.is_none() => {
                infer_at = Some(i);
                shape.push(1);
            }
            0 if !allow_zero => {
                shape.push(*t.shape.get(i).ok_or(bad_input!("shape copies an axis the input does not have"))?)
            }
            d => shape.push(usize::try_from(d).map_err(|_| bad_input!("shape holds {d}"))?),
        }
    }
    if let Some(i) = infer_at {
        let known = count(&shape)?;
        if known == 0 || t.len() % known != 0 {
            return Err(bad_input!("cannot reshape {:?} ({} elements) to {wanted:?}", t.shape, t.len()));
        }
        shape[i] = t.len() / known;
    }
    if count(&shape)? != t.len() {
        return Err(bad_input!("cannot reshape {:?} ({} elements) to {wanted:?}", t.shape, t.len()));
    }
    one(t.reshaped(shape))
}

fn flatten(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let a = ctx.int("axis").unwrap_or(1);
    let a = if a < 0 { a + t.rank() as i64 } else { a };
    let a = usize::try_from(a).ok().filter(|&a| a <= t.rank()).ok_or(bad_attribute!("axis out of range"))?;
    let outer = count(&t.shape[..a])?;
    one(t.reshaped(vec![outer, count(&t.shape[a..])?]))
}

fn squeeze(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let shape = match ints_from(ctx, inputs, 1, "axes")? {
        Some(axes) => {
            let axes = axes.iter().map(|&a| input_axis(a, t.rank())).collect::<Result<Vec<_>, _>>()?;
            if let Some(&a) = axes.iter().find(|&&a| t.shape[a] != 1) {
                return Err(bad_input!("axis {a} has size {}, not 1", t.shape[a]));
            }
            t.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect()
        }
        None => t.shape.iter().copied().filter(|&d| d != 1).collect(),
    };
    one(t.reshaped(shape))
}

fn unsqueeze(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let axes = ints_from(ctx, inputs, 1, "axes")?.ok_or(bad_input!("Unsqueeze needs axes"))?;
    let rank = t.rank() + axes.len();
    let mut axes = axes.iter().map(|&a| input_axis(a, rank)).collect::<Result<Vec<_>, _>>()?;
    axes.sort_unstable();
    if axes.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad_input!("axes repeat"));
    }
    let mut shape = t.shape.clone();
    for a in axes {
        shape.insert(a, 1);
    }
    one(t.reshaped(shape))
}

/// Transpose's result, as a view of its input.
fn transposed(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Tensor, KernelError> {
    let t = input(inputs, 0)?;
    let perm: Vec<usize> = match ctx.ints("perm") {
        Some(p) => p.iter().map(|&a| axis(a, t.rank())).collect::<Result<_, _>>()?,
        None => (0..t.rank()).rev().collect(),
    };
    let mut seen = perm.clone();
    seen.sort_unstable();
    if seen != (0..t.rank()).collect::<Vec<_>>() {
        return Err(bad_attribute!("perm {perm:?} is not a permutation of the {} axes", t.rank()));
    }
    Ok(crate::view::transpose(t, &perm))
}

fn concat(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let parts: Vec<&Tensor> = (0..inputs.len()).map(|i| input(inputs, i)).collect::<Result<_, _>>()?;
    let first = parts.first().ok_or(bad_input!("Concat needs inputs"))?;
    let a = axis(ctx.int("axis").ok_or(bad_attribute!("Concat needs 'axis'"))?, first.rank())?;
    let mut shape = first.shape.clone();
    shape[a] = 0;
    for p in &parts {
        if p.rank() != first.rank() || p.shape.iter().enumerate().any(|(i, &d)| i != a && d != first.shape[i]) {
            return Err(bad_input!("shapes {:?} and {:?} do not concatenate on axis {a}", first.shape, p.shape));
        }
        shape[a] = shape[a].checked_add(p.shape[a]).ok_or(limit!("the concatenated axis overflows"))?;
    }
    let total = count(&shape)?;
    // An empty result may declare any number of rows: nothing to copy.
    let outer = if total == 0 { 0 } else { count(&shape[..a])? };
    let blocks: Vec<(&Data, usize)> =
        parts.iter().map(|p| Ok((&*p.data, count(&p.shape[a..])?))).collect::<Result<_, KernelError>>()?;
    one(Tensor::new(shape, Data::interleave(&blocks, outer)?))
}

/// Slice's result: a view of its input when every step is positive, else a copy.
fn sliced(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Tensor, KernelError> {
    let t = input(inputs, 0)?;
    let (starts, ends, axes, steps) = if ctx.opset >= 10 {
        (
            input(inputs, 1)?.to_i64s()?,
            input(inputs, 2)?.to_i64s()?,
            optional(inputs, 3)?.map(Tensor::to_i64s).transpose()?,
            optional(inputs, 4)?.map(Tensor::to_i64s).transpose()?,
        )
    } else {
        (
            ctx.ints("starts").ok_or(bad_attribute!("Slice needs starts"))?.to_vec(),
            ctx.ints("ends").ok_or(bad_attribute!("Slice needs ends"))?.to_vec(),
            ctx.ints("axes").map(<[i64]>::to_vec),
            None,
        )
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(bad_input!("starts, ends, axes and steps differ in length"));
    }
    // Per axis: first index, step and count.
    let mut plan: Vec<(i64, i64, usize)> = t.shape.iter().map(|&d| (0, 1, d)).collect();
    for k in 0..starts.len() {
        let a = input_axis(axes[k], t.rank())?;
        let d = t.shape[a] as i64;
        let step = steps[k];
        if step == 0 {
            return Err(bad_input!("a step is 0"));
        }
        let clamp = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
        let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
        let (start, end) = if step > 0 {
            (clamp(norm(starts[k]), 0, d), clamp(norm(ends[k]), 0, d))
        } else {
            (clamp(norm(starts[k]), -1, d - 1), clamp(norm(ends[k]), -1, d - 1))
        };
        // The count of start, start + step, … before end (in i128: steps may be ±2^63).
        let (span, step_len) = if step > 0 {
            (i128::from(end) - i128::from(start), i128::from(step))
        } else {
            (i128::from(start) - i128::from(end), -i128::from(step))
        };
        let n = ((span + step_len - 1) / step_len).max(0);
        plan[a] = (start, step, usize::try_from(n).map_err(|_| limit!("the slice is too long"))?);
    }
    let shape: Vec<usize> = plan.iter().map(|p| p.2).collect();
    if count(&shape)? == 0 {
        return Ok(Tensor::new(shape, Data::empty(t.data_type(), 0)?));
    }
    if plan.iter().all(|&(_, step, _)| step > 0) {
        // Each start lies inside its axis (the count is not 0), and steps fit in usize.
        let along: Vec<(usize, usize, usize)> =
            plan.iter().map(|&(start, step, n)| (start as usize, step as usize, n)).collect();
        return Ok(crate::view::slice(t, &along));
    }
    let t = t.contiguous();
    let strides = broadcast::strides(&t.shape);
    // Per axis, the offset of each index taken (start + i·step, inside the axis).
    let along: Vec<Vec<Option<usize>>> = plan
        .iter()
        .zip(&strides)
        .map(|(&(start, step, n), &s)| (0..n as i64).map(|i| Some((start + i * step) as usize * s)).collect())
        .collect();
    let picked = broadcast::offsets_by_axis(&along);
    Ok(Tensor::new(shape, t.data.pick(picked.into_iter().flatten())))
}

fn gather(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (t, idx) = (input(inputs, 0)?, input(inputs, 1)?);
    let a = axis(ctx.int("axis").unwrap_or(0), t.rank())?;
    let d = t.shape[a] as i64;
    let indices = idx
        .to_i64s()?
        .into_iter()
        .map(|i| {
            let j = if i < 0 { i + d } else { i };
            usize::try_from(j)
                .ok()
                .filter(|&j| (j as i64) < d)
                .ok_or_else(|| bad_input!("index {i} is out of range for size {d}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut shape = t.shape[..a].to_vec();
    shape.extend_from_slice(&idx.shape);
    shape.extend_from_slice(&t.shape[a + 1..]);
    // Each index copies a slice: many indices into a large slice make a large result.
    let total = count(&shape)?;
    ctx.check_grown(total, t.len().max(idx.len()))?;
    if total == 0 {
        return one(Tensor::new(shape, Data::empty(t.data_type(), 0)?));
    }
    let outer = count(&t.shape[..a])?;
    let inner = count(&t.shape[a + 1..])?;
    let mut picked = Vec::with_capacity(total);
    for o in 0..outer {
        for &i in &indices {
            let start = (o * t.shape[a] + i) * inner;
            picked.extend(start..start + inner);
        }
    }
    one(Tensor::new(shape, t.data.pick(picked.into_iter())))
}

fn gather_elements(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (t, idx) = (input(inputs, 0)?, input(inputs, 1)?);
    let a = axis(ctx.int("axis").unwrap_or(0), t.rank())?;
    let picked = element_offsets(t, idx, a)?;
    one(Tensor::new(idx.shape.clone(), t.data.pick(picked.into_iter())))
}

/// For GatherElements and ScatterElements: for each element of `idx` (same rank as `data`),
/// the offset in `data` of the element it designates: its own position, with the
/// coordinate along `a` replaced by its value.
pub fn element_offsets(data: &Tensor, idx: &Tensor, a: usize) -> Result<Vec<usize>, KernelError> {
    if idx.rank() != data.rank() {
        return Err(bad_input!("indices and data differ in rank"));
    }
    let strides = broadcast::strides(&data.shape);
    let index_strides = broadcast::strides(&idx.shape);
    let d = data.shape[a] as i64;
    let mut offsets = Vec::with_capacity(idx.len());
    for (n, i) in idx.to_i64s()?.into_iter().enumerate() {
        let j = if i < 0 { i + d } else { i };
        if !(0..d).contains(&j) {
            return Err(bad_input!("index {i} is out of range for size {d}"));
        }
        let mut offset = 0;
        for ax in 0..idx.rank() {
            let c = if ax == a { j as usize } else { (n / index_strides[ax]) % idx.shape[ax] };
            if c >= data.shape[ax] {
                return Err(bad_input!("indices reach past the data"));
            }
            offset += c * strides[ax];
        }
        offsets.push(offset);
    }
    Ok(offsets)
}

fn shape(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let r = t.rank() as i64;
    let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let start = clamp(ctx.int("start").unwrap_or(0));
    let end = clamp(ctx.int("end").unwrap_or(r));
    let dims: Vec<i64> = t.shape[start..end.max(start)].iter().map(|&d| d as i64).collect();
    one(Tensor::new(vec![dims.len()], Data::I64(dims.into())))
}

fn constant(ctx: &Ctx<'_>, _: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    if let Some(t) = ctx.tensor("value")? {
        return one(t);
    }
    let attr = |name: &str| ctx.node.attribute(name).and_then(|a| a.value());
    let t = match (attr("value_float"), attr("value_floats"), attr("value_int"), attr("value_ints")) {
        (Some(AttributeValue::Float(f)), ..) => Tensor::scalar(Data::F32(vec![f].into())),
        (_, Some(AttributeValue::Floats(f)), ..) => Tensor::new(vec![f.len()], Data::F32(f.to_vec().into())),
        (_, _, Some(AttributeValue::Int(i)), _) => Tensor::scalar(Data::I64(vec![i].into())),
        (_, _, _, Some(AttributeValue::Ints(i))) => Tensor::new(vec![i.len()], Data::I64(i.to_vec().into())),
        _ => match (attr("value_string"), attr("value_strings")) {
            (Some(AttributeValue::String(s)), _) => Tensor::scalar(Data::Str(vec![s.as_bytes().to_vec()])),
            (_, Some(AttributeValue::Strings(s))) => {
                Tensor::new(vec![s.len()], Data::Str(s.iter().map(|x| x.as_bytes().to_vec()).collect()))
            }
            _ => return Err(unsupported!("Constant has no value attribute this evaluator reads")),
        },
    };
    one(t)
}

fn constant_of_shape(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let shape = dims(&input(inputs, 0)?.to_i64s()?, "the shape")?;
    let n = count(&shape)?;
    ctx.check_elements(n)?;
    let fill = ctx.tensor("value")?.unwrap_or_else(|| Tensor::new(vec![1], Data::F32(vec![0.0].into())));
    if fill.len() != 1 {
        return Err(bad_attribute!("'value' must hold one element"));
    }
    one(Tensor::new(shape, fill.data.pick(std::iter::repeat_n(0, n))))
}

/// Expand's result, as a view of its input (checked against the run's limits as if made:
/// a reader of elements will make it).
fn expanded(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Tensor, KernelError> {
    let t = input(inputs, 0)?;
    let wanted = dims(&input(inputs, 1)?.to_i64s()?, "the shape")?;
    let shape = broadcast::shape(&[&t.shape, &wanted])?;
    ctx.check_elements(count(&shape)?)?;
    Ok(crate::view::expand(t, &shape))
}

fn range(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (s, l, d) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let (start, limit, delta) = (s.to_f64s()?, l.to_f64s()?, d.to_f64s()?);
    let (start, limit, delta) = match (start.first(), limit.first(), delta.first()) {
        (Some(&a), Some(&b), Some(&c)) => (a, b, c),
        _ => return Err(bad_input!("Range takes three scalars")),
    };
    if delta == 0.0 {
        return Err(bad_input!("delta is 0"));
    }
    let n = ((limit - start) / delta).ceil().max(0.0);
    if !n.is_finite() || n > ctx.limits.max_tensor_elements as f64 {
        return Err(limit!("the range would hold {n} elements"));
    }
    let n = n as usize;
    // Integers exactly: the count from integer division (rounded up), each value a
    // wrapping step from the start, as numpy's arange.
    if let (Ok(a), Ok(b), Ok(c)) = (s.to_i64s(), l.to_i64s(), d.to_i64s())
        && let (Some(&a), Some(&b), Some(&c)) = (a.first(), b.first(), c.first())
    {
        let (span, c128) = (i128::from(b) - i128::from(a), i128::from(c));
        let n = usize::try_from(((span + c128 - c128.signum()) / c128).max(0)).unwrap_or(usize::MAX);
        if n > ctx.limits.max_tensor_elements {
            return Err(limit!("the range would hold {n} elements"));
        }
        let values = (0..n as i64).map(|i| a.wrapping_add(i.wrapping_mul(c))).collect();
        return one(crate::cast::integers_as(s.data_type(), vec![n], values));
    }
    let values: Vec<f64> = match &*s.data {
        Data::F32(_) => {
            let (a, c) = (start as f32, delta as f32);
            (0..n).map(|i| f64::from(a + i as f32 * c)).collect()
        }
        _ => (0..n).map(|i| start + i as f64 * delta).collect(),
    };
    one(crate::kernels::common::numeric_like(s.data_type(), vec![n], values)?)
}

fn tile(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let repeats = dims(&input(inputs, 1)?.to_i64s()?, "repeats")?;
    if repeats.len() != t.rank() {
        return Err(bad_input!("repeats and the input differ in rank"));
    }
    let shape: Vec<usize> = t
        .shape
        .iter()
        .zip(&repeats)
        .map(|(&d, &r)| d.checked_mul(r))
        .collect::<Option<_>>()
        .ok_or(limit!("overflow"))?;
    let n = count(&shape)?;
    ctx.check_elements(n)?;
    let strides = broadcast::strides(&t.shape);
    let out_strides = broadcast::strides(&shape);
    let picked = (0..n)
        .map(|i| (0..shape.len()).map(|ax| ((i / out_strides[ax]) % shape[ax] % t.shape[ax]) * strides[ax]).sum());
    one(Tensor::new(shape.clone(), t.data.pick(picked)))
}

fn split(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let a = axis(ctx.int("axis").unwrap_or(0), t.rank())?;
    let outputs = ctx.node.outputs.len();
    let total = t.shape[a];
    let sizes: Vec<usize> = match ints_from(ctx, inputs, 1, "split")? {
        Some(s) => dims(&s, "split")?,
        None => {
            let parts = match ctx.int("num_outputs") {
                None => outputs,
                // One part per output: the spec asks for as many as the node has.
                Some(n) => usize::try_from(n)
                    .ok()
                    .filter(|&n| (1..=outputs.max(1)).contains(&n))
                    .ok_or_else(|| bad_attribute!("num_outputs is {n}, the node has {outputs} outputs"))?,
            };
            let each = total.div_ceil(parts.max(1));
            (0..parts).map(|k| each.min(total.saturating_sub(k * each))).collect()
        }
    };
    if sizes.iter().try_fold(0usize, |sum, &s| sum.checked_add(s)) != Some(total) {
        return Err(bad_input!("split sizes {sizes:?} do not add up to {total}"));
    }
    // An empty input may declare any number of rows: nothing to copy.
    let outer = if t.is_empty() { 0 } else { count(&t.shape[..a])? };
    let inner = count(&t.shape[a + 1..])?;
    let mut start = 0;
    let mut out = Vec::new();
    for size in sizes {
        let picked = (0..outer).flat_map(|o| {
            let from = (o * total + start) * inner;
            from..from + size * inner
        });
        let mut shape = t.shape.clone();
        shape[a] = size;
        out.push(Value::Tensor(Tensor::new(shape, t.data.pick(picked))));
        start += size;
    }
    Ok(out)
}

fn pad(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let t = input(inputs, 0)?;
    let pads = ints_from(ctx, inputs, 1, "pads")?.ok_or(bad_input!("Pad needs pads"))?;
    let mode = ctx.string("mode").unwrap_or("constant");
    let rank = t.rank();
    let axes: Vec<usize> = match optional(inputs, 3)? {
        Some(a) => a.to_i64s()?.iter().map(|&x| input_axis(x, rank)).collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(bad_input!("{} pads for {} axes", pads.len(), axes.len()));
    }
    let mut before = vec![0i64; rank];
    let mut after = vec![0i64; rank];
    for (k, &a) in axes.iter().enumerate() {
        before[a] = pads[k];
        after[a] = pads[k + axes.len()];
        // A negative pad removes elements, at most the whole axis.
        let d = i64::try_from(t.shape[a]).unwrap_or(i64::MAX);
        if before[a] < -d || after[a] < -d {
            return Err(bad_input!("pads {} and {} remove more than axis {a}'s {}", before[a], after[a], t.shape[a]));
        }
    }
    let shape: Vec<usize> = (0..rank)
        .map(|a| {
            let size = i128::from(before[a]) + i128::from(after[a]) + t.shape[a] as i128;
            usize::try_from(size)
                .map_err(|_| limit!("pads {} and {} make axis {a} of size {size}", before[a], after[a]))
        })
        .collect::<Result<_, _>>()?;
    let n = count(&shape)?;
    ctx.check_elements(n)?;
    if n == 0 {
        // An empty result: its other axes may be as long as the pads make them (2^36), and
        // the per-axis index lists below would be that long.
        return one(Tensor::new(shape, Data::empty(t.data_type(), 0)?));
    }
    let fill = match optional(inputs, 2)? {
        Some(v) if ctx.opset >= 11 && v.len() != 1 => {
            return Err(bad_input!("constant_value holds {} values, not one", v.len()));
        }
        Some(v) if ctx.opset >= 11 => Some(v.clone()),
        _ => None,
    };
    let fill_value = ctx.float("value").unwrap_or(0.0);
    let strides = broadcast::strides(&t.shape);
    // Per axis, the input index each output index copies, or none (the constant).
    let along: Vec<Vec<Option<usize>>> = (0..rank)
        .map(|a| {
            let d = t.shape[a] as i64;
            (0..shape[a] as i64)
                .map(|j| {
                    let c = j - before[a];
                    let c = if (0..d).contains(&c) {
                        Some(c)
                    } else {
                        match mode {
                            "edge" if d > 0 => Some(c.clamp(0, d - 1)),
                            "reflect" if d > 1 => {
                                let period = 2 * (d - 1);
                                let m = c.rem_euclid(period);
                                Some(if m < d { m } else { period - m })
                            }
                            "wrap" if d > 0 => Some(c.rem_euclid(d)),
                            _ => None,
                        }
                    };
                    c.map(|c| c as usize * strides[a])
                })
                .collect()
        })
        .collect();
    let source = broadcast::offsets_by_axis(&along);
    let fill = match fill {
        Some(f) => f,
        None => crate::kernels::common::numeric_like(t.data_type(), vec![1], vec![f64::from(fill_value)])?,
    };
    let mut joined = (*t.data).clone();
    joined.extend_from(&fill.data)?;
    let fill_at = t.len();
    one(Tensor::new(shape, joined.pick(source.into_iter().map(|s| s.unwrap_or(fill_at)))))
}
