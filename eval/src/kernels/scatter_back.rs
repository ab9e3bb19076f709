//! Writing values back into place: Col2Im (the inverse of im2col: blocks summed into an
//! image), MaxUnpool (values put back where MaxPool found them) and TensorScatter (an
//! update written into a cache along an axis, at a position per batch).

use super::{Ctx, Kernel, axis, count, input, one, optional};
use crate::broadcast::strides;
use crate::error::{KernelError, bad_attribute, bad_input, limit};
use crate::kernels::common::numeric_like;
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Col2Im" => col2im,
        "MaxUnpool" => max_unpool,
        "TensorScatter" => tensor_scatter,
        _ => return None,
    };
    Some(k)
}

fn sizes(v: Vec<i64>, what: &str) -> Result<Vec<usize>, KernelError> {
    v.into_iter().map(|x| usize::try_from(x).map_err(|_| bad_input!("{what} holds {x}, which is negative"))).collect()
}

/// An integer-list attribute of one value per spatial dimension, or `default` for each.
fn per_dim(ctx: &Ctx<'_>, name: &str, dims: usize, default: i64) -> Result<Vec<i64>, KernelError> {
    match ctx.ints(name) {
        Some(v) if v.len() == dims => Ok(v.to_vec()),
        Some(v) => Err(bad_attribute!("{name} has {} values for {dims} dimensions", v.len())),
        None => Ok(vec![default; dims]),
    }
}

fn col2im(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let image = sizes(input(inputs, 1)?.to_i64s()?, "image_shape")?;
    let block = sizes(input(inputs, 2)?.to_i64s()?, "block_shape")?;
    let dims = image.len();
    if block.len() != dims || x.rank() != 3 {
        return Err(bad_input!("Col2Im needs input [N, C·∏block, L] and image and block shapes of one length"));
    }
    let (dil, stride) = (per_dim(ctx, "dilations", dims, 1)?, per_dim(ctx, "strides", dims, 1)?);
    let pads = match ctx.ints("pads") {
        Some(p) if p.len() == 2 * dims => p.to_vec(),
        Some(p) => return Err(bad_attribute!("pads has {} values for {dims} dimensions", p.len())),
        None => vec![0; 2 * dims],
    };
    if dil.iter().chain(&stride).any(|&v| v < 1) || pads.iter().any(|&p| p < 0) {
        return Err(bad_attribute!(
            "dilations {dil:?} and strides {stride:?} must be positive, pads {pads:?} not negative"
        ));
    }
    let k = count(&block)?;
    let (n, ck, l) = (x.shape[0], x.shape[1], x.shape[2]);
    if k == 0 || ck % k != 0 {
        return Err(bad_input!("{ck} channels are not a multiple of the block's {k} elements"));
    }
    let c = ck / k;
    // Blocks along each dimension (in i128: sizes and attributes are any i64). Every
    // position a block reaches then lies inside the padded image, which fits an i64.
    let blocks: Vec<usize> = (0..dims)
        .map(|d| {
            let span = i128::from(dil[d]) * (block[d] as i128 - 1) + 1;
            let padded = image[d] as i128 + i128::from(pads[d]) + i128::from(pads[d + dims]);
            if padded > i128::from(i64::MAX) {
                return Err(limit!("the padded image is too large along dimension {d}"));
            }
            let room = padded - span;
            Ok(if room < 0 { 0 } else { (room / i128::from(stride[d]) + 1) as usize })
        })
        .collect::<Result<_, KernelError>>()?;
    if count(&blocks)? != l {
        return Err(bad_input!("the input holds {l} blocks, the shapes give {}", count(&blocks)?));
    }
    let mut out_shape = vec![n, c];
    out_shape.extend_from_slice(&image);
    ctx.check_elements(count(&out_shape)?)?;
    let plane = count(&image)?;
    let (image_strides, block_strides, blocks_strides) = (strides(&image), strides(&block), strides(&blocks));
    let values = x.to_f64s()?;
    let mut out = vec![0.0; n * c * plane];
    // An empty input has no blocks to add (and its other axes may be of any size).
    let n = if values.is_empty() { 0 } else { n };
    for b in 0..n {
        for ch in 0..c {
            for kf in 0..k {
                for lf in 0..l {
                    let mut at = 0usize;
                    let inside = (0..dims).all(|d| {
                        let ki = ((kf / block_strides[d]) % block[d]) as i64;
                        let li = ((lf / blocks_strides[d]) % blocks[d]) as i64;
                        let pos = li * stride[d] - pads[d] + ki * dil[d];
                        at += pos.max(0) as usize * image_strides[d];
                        (0..image[d] as i64).contains(&pos)
                    });
                    if inside {
                        out[(b * c + ch) * plane + at] += values[((b * ck) + ch * k + kf) * l + lf];
                    }
                }
            }
        }
    }
    one(numeric_like(x.data_type(), out_shape, out)?)
}

/// MaxUnpool: X's values at the flat positions MaxPool reported, in an output of the
/// pooled input's size; a larger `output_shape` keeps each position's coordinates (the
/// extra rows and columns stay zero).
fn max_unpool(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, indices) = (input(inputs, 0)?, input(inputs, 1)?.to_i64s()?);
    if indices.len() != x.len() {
        return Err(bad_input!("the indices and X differ in size"));
    }
    let dims = x.rank().checked_sub(2).ok_or(bad_input!("MaxUnpool needs X of rank 3 or more"))?;
    let kernel = ctx.ints("kernel_shape").ok_or(bad_attribute!("kernel_shape is missing"))?.to_vec();
    if kernel.len() != dims {
        return Err(bad_attribute!("kernel_shape has {} values for {dims} dimensions", kernel.len()));
    }
    let stride = per_dim(ctx, "strides", dims, 1)?;
    let pads = match ctx.ints("pads") {
        Some(p) if p.len() == 2 * dims => p.to_vec(),
        _ => vec![0; 2 * dims],
    };
    let mut inferred = x.shape[..2].to_vec();
    for d in 0..dims {
        // In i128: sizes and attributes are any i64.
        let size =
            (x.shape[d + 2] as i128 - 1) * i128::from(stride[d]) - i128::from(pads[d]) - i128::from(pads[d + dims])
                + i128::from(kernel[d]);
        inferred.push(usize::try_from(size).map_err(|_| bad_input!("output dimension {size} is out of range"))?);
    }
    let out_shape = match optional(inputs, 2)? {
        Some(shape) => sizes(shape.to_i64s()?, "output_shape")?,
        None => inferred.clone(),
    };
    if out_shape.len() != inferred.len() || out_shape.iter().zip(&inferred).any(|(o, i)| o < i) {
        return Err(bad_input!("output_shape {out_shape:?} is smaller than the unpooled {inferred:?}"));
    }
    let total = count(&out_shape)?;
    ctx.check_elements(total)?;
    let (from, to) = (strides(&inferred), strides(&out_shape));
    let limit = count(&inferred)?;
    let mut out = vec![0.0; total];
    for (&i, v) in indices.iter().zip(x.to_f64s()?) {
        let i = usize::try_from(i).ok().filter(|&i| i < limit).ok_or(bad_input!("index {i} is outside the output"))?;
        let slot: usize = (0..inferred.len()).map(|d| ((i / from[d]) % inferred[d]) * to[d]).sum();
        out[slot] = v;
    }
    one(numeric_like(x.data_type(), out_shape, out)?)
}

fn tensor_scatter(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (cache, update) = (input(inputs, 0)?, input(inputs, 1)?);
    let rank = cache.rank();
    let ax = axis(ctx.int("axis").unwrap_or(-2), rank)?;
    if ax == 0 || update.rank() != rank {
        return Err(bad_input!("the update must have the cache's rank, and the axis cannot be the batch axis"));
    }
    if (0..rank).any(|d| d != ax && update.shape[d] != cache.shape[d]) {
        return Err(bad_input!("update {:?} does not fit cache {:?} outside axis {ax}", update.shape, cache.shape));
    }
    let batch = cache.shape[0];
    // Without write indices every batch entry writes at 0 (an empty cache may declare any
    // batch, so no list of zeros is made).
    let starts = match optional(inputs, 2)? {
        Some(w) if w.len() != batch => return Err(bad_input!("{} write indices for a batch of {batch}", w.len())),
        Some(w) => w.to_i64s()?,
        None => Vec::new(),
    };
    let circular = match ctx.string("mode").unwrap_or("linear") {
        "linear" => false,
        "circular" => true,
        other => return Err(bad_attribute!("mode '{other}' is not linear or circular")),
    };
    let max = cache.shape[ax];
    let (cache_strides, update_strides) = (strides(&cache.shape), strides(&update.shape));
    let mut target: Vec<usize> = (0..cache.len()).collect();
    // Each update element goes to its cache position; the cache is the data, the update's
    // elements appended after it.
    for (u, slot) in (0..update.len()).zip(cache.len()..) {
        let mut at = 0usize;
        for d in 0..rank {
            let i = (u / update_strides[d]) % update.shape[d];
            let i = if d == ax {
                let b = (u / update_strides[0]) % batch;
                // In i128: a write index may be any i64.
                let p = i128::from(starts.get(b).copied().unwrap_or(0)) + i as i128;
                let p = if circular { p.rem_euclid(max.max(1) as i128) } else { p };
                usize::try_from(p)
                    .ok()
                    .filter(|&p| p < max)
                    .ok_or(bad_input!("write position {p} is past the cache"))?
            } else {
                i
            };
            at += i * cache_strides[d];
        }
        target[at] = slot;
    }
    let mut joined = (*cache.data).clone();
    joined.extend_from(&update.data)?;
    one(crate::value::Tensor::new(cache.shape.clone(), joined.pick(target.into_iter())))
}
