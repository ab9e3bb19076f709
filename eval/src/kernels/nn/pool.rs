//! Pooling: MaxPool, AveragePool, LpPool and the global pools.

use super::{Window, taps, taps_within_padding, window};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::kernels::{Ctx, count, input, one};
use crate::value::{Data, Tensor, Value};

pub(super) fn pool(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    if x.rank() < 3 {
        return Err(bad_input!("pooling of a rank-{} input", x.rank()));
    }
    let kernel: Vec<usize> = ctx
        .ints("kernel_shape")
        .ok_or(bad_attribute!("kernel_shape is required"))?
        .iter()
        .map(|&v| v.max(1) as usize)
        .collect();
    let spatial = &x.shape[2..];
    if kernel.len() != spatial.len() {
        return Err(bad_attribute!("kernel_shape does not match the spatial axes"));
    }
    let win = window(ctx, spatial, kernel, true)?;
    let mut shape = x.shape[..2].to_vec();
    shape.extend_from_slice(&win.out);
    let out_count = count(&shape)?;
    ctx.check_grown(out_count, x.len())?;
    let op = ctx.op();
    if out_count == 0 {
        let mut result = vec![Value::Tensor(numeric_like(x.data_type(), shape.clone(), Vec::new())?)];
        if op == "MaxPool" && ctx.node.outputs.len() > 1 {
            result.push(Value::Tensor(Tensor::new(shape, Data::I64(Vec::new().into()))));
        }
        return Ok(result);
    }
    let planes = x.shape[0] * x.shape[1];
    let in_size = count(spatial)?;
    // The maximum of float32 values is one of them: found in float32, without widening
    // the input and narrowing the result (a third of a GoogLeNet's time went there).
    if let (Data::F32(xv), "MaxPool", 1) = (&*x.data, op, ctx.node.outputs.len())
        && spatial.len() == 2
        && win.dilations.iter().all(|&d| d == 1)
    {
        return one(Tensor::new(shape, Data::F32(max_pool_2d(xv, planes, spatial, &win).into())));
    }
    let taps = taps(ctx, &win, spatial)?;
    if let (Data::F32(xv), "MaxPool", 1) = (&*x.data, op, ctx.node.outputs.len()) {
        let mut out = Vec::with_capacity(planes * taps.len());
        for plane in xv.chunks(in_size.max(1)).take(planes) {
            out.extend(taps.iter().map(|tap| {
                tap.iter().flatten().fold(f32::NEG_INFINITY, |best, &at| {
                    let v = plane[at as usize];
                    if v > best { v } else { best }
                })
            }));
        }
        return one(Tensor::new(shape, Data::F32(out.into())));
    }
    let xv = x.to_f64s()?;
    let include_pad = ctx.int("count_include_pad").unwrap_or(0) != 0;
    let p = ctx.int("p").unwrap_or(2) as f64;
    let mut out = Vec::with_capacity(planes * taps.len());
    let divisors = if include_pad { taps_within_padding(&win) } else { Vec::new() };
    let mut indices = Vec::new();
    // MaxPool's indices count within a plane in row-major order, or with storage_order 1 in
    // column-major order (the first spatial axis fastest).
    let column_major = ctx.int("storage_order").unwrap_or(0) == 1;
    let row_strides = crate::broadcast::strides(spatial);
    let index_in = |at: usize| -> usize {
        if !column_major {
            return at;
        }
        let mut stride = 1;
        let mut flat = 0;
        for (d, &len) in spatial.iter().enumerate() {
            flat += (at / row_strides[d]) % len.max(1) * stride;
            stride *= len;
        }
        flat
    };
    for plane in 0..planes {
        let base = plane * in_size;
        for (o, tap) in taps.iter().enumerate() {
            let present = tap.iter().flatten().map(|&at| (at as usize, xv[base + at as usize]));
            out.push(match op {
                "MaxPool" => {
                    let (mut best, mut best_at) = (f64::NEG_INFINITY, 0);
                    for (at, v) in present {
                        if v > best {
                            (best, best_at) = (v, at);
                        }
                    }
                    indices.push((base + index_in(best_at)) as i64);
                    best
                }
                "LpPool" => present.map(|(_, v)| v.abs().powf(p)).sum::<f64>().powf(1.0 / p),
                _ => {
                    let (sum, n) = present.fold((0.0, 0usize), |(s, n), (_, v)| (s + v, n + 1));
                    let n = if include_pad { divisors[o] } else { n };
                    if n == 0 { 0.0 } else { sum / n as f64 }
                }
            });
        }
    }
    let mut result = vec![Value::Tensor(numeric_like(x.data_type(), shape.clone(), out)?)];
    if op == "MaxPool" && ctx.node.outputs.len() > 1 {
        result.push(Value::Tensor(Tensor::new(shape, Data::I64(indices.into()))));
    }
    Ok(result)
}

/// The input positions `lo..hi` along one axis under window `o` (empty in padding only).
fn window_span(o: usize, stride: usize, begin: usize, kernel: usize, len: usize) -> std::ops::Range<usize> {
    let start = (o * stride) as i64 - begin as i64;
    let lo = start.clamp(0, len as i64) as usize;
    let hi = (start + kernel as i64).clamp(0, len as i64) as usize;
    lo..hi.max(lo)
}

/// 2-D max pooling of float32 planes without dilation, in two passes: the maximum along
/// each row under every horizontal window, then the maximum of those rows under every
/// vertical window. Both read contiguous runs, where the tap list reads one offset per
/// kernel position. NaN never wins, as in the general path. The planes are cut into shares
/// for the cores.
fn max_pool_2d(xv: &[f32], planes: usize, spatial: &[usize], win: &Window) -> Vec<f32> {
    let (in_plane, out_plane) = (spatial[0] * spatial[1], win.out[0] * win.out[1]);
    let mut out = vec![f32::NEG_INFINITY; planes * out_plane];
    // A plane costs about a comparison per input value and kernel tap along each axis.
    let cost = in_plane.saturating_mul(win.kernel[0] + win.kernel[1]);
    crate::shares::over_units(&mut out, out_plane, cost, |first, part| {
        let input = &xv[(first * in_plane).min(xv.len())..];
        crate::simd::widest(
            #[inline(always)]
            || max_pool_2d_passes(input, part, spatial, win),
        )
    });
    out
}

/// [`max_pool_2d`] of the planes of `xv` into `out` (as many planes as `out` holds, its
/// values negative infinity).
#[inline(always)]
fn max_pool_2d_passes(xv: &[f32], out: &mut [f32], spatial: &[usize], win: &Window) {
    let larger = |best: f32, v: f32| if v > best { v } else { best };
    let (h, w) = (spatial[0], spatial[1]);
    let (oh, ow) = (win.out[0], win.out[1]);
    if win.strides == [1, 1] && (oh, ow) == (h, w) {
        return same_size_max_pool(xv, out, (h, w), win);
    }
    let columns: Vec<std::ops::Range<usize>> =
        (0..ow).map(|o| window_span(o, win.strides[1], win.begin[1], win.kernel[1], w)).collect();
    // The windows wholly inside the row: there the pass is one strided sweep per tap.
    let (stride, begin, kernel) = (win.strides[1], win.begin[1], win.kernel[1]);
    let inside = |o: &usize| o * stride >= begin && o * stride - begin + kernel <= w;
    let first = (0..ow).find(inside).unwrap_or(ow);
    let last = (first..ow).take_while(inside).last().map_or(first, |o| o + 1);
    let mut rows = vec![f32::NEG_INFINITY; h * ow];
    for (plane, result) in xv.chunks((h * w).max(1)).zip(out.chunks_mut((oh * ow).max(1))) {
        for (row, maxima) in plane.chunks(w.max(1)).zip(rows.chunks_mut(ow.max(1))) {
            for o in (0..first).chain(last..ow) {
                maxima[o] = row[columns[o].clone()].iter().copied().fold(f32::NEG_INFINITY, larger);
            }
            let middle = &mut maxima[first..last];
            middle.fill(f32::NEG_INFINITY);
            for k in (0..kernel).take_while(|_| first < last) {
                let from = first * stride + k - begin;
                if stride == 1 {
                    let taps = &row[from..from + middle.len()];
                    middle.iter_mut().zip(taps).for_each(|(m, &v)| *m = larger(*m, v));
                } else {
                    let taps = row[from..].iter().step_by(stride);
                    middle.iter_mut().zip(taps).for_each(|(m, &v)| *m = larger(*m, v));
                }
            }
        }
        for (o, line) in result.chunks_mut(ow.max(1)).enumerate() {
            for r in window_span(o, win.strides[0], win.begin[0], win.kernel[0], h) {
                let maxima = &rows[r * ow..(r + 1) * ow];
                line.iter_mut().zip(maxima).for_each(|(best, &v)| *best = larger(*best, v));
            }
        }
    }
}

/// Max pooling with stride 1 whose output is the input's size (an inception block's 3×3
/// pool): each pass is a sweep over the whole plane per kernel tap, the plane shifted by
/// the tap (small planes no longer pay a loop per row); the horizontal sweep also reads
/// across row ends, so the few columns within the kernel of a row's ends are done again
/// window by window. Into `out`, as in [`max_pool_2d_passes`].
#[inline(always)]
fn same_size_max_pool(xv: &[f32], out: &mut [f32], (h, w): (usize, usize), win: &Window) {
    let larger = |best: f32, v: f32| if v > best { v } else { best };
    let len = h * w;
    // `target[i] = max(target[i], source[i + shift])` wherever `i + shift` is in the plane.
    let sweep = |target: &mut [f32], source: &[f32], shift: isize| {
        let (from, to) = if shift < 0 { (shift.unsigned_abs(), len) } else { (0, len - (shift as usize).min(len)) };
        if from < to {
            let shifted = &source[(from as isize + shift) as usize..(to as isize + shift) as usize];
            target[from..to].iter_mut().zip(shifted).for_each(|(t, &v)| *t = larger(*t, v));
        }
    };
    let (kh, kw) = (win.kernel[0], win.kernel[1]);
    let (bh, bw) = (win.begin[0] as isize, win.begin[1] as isize);
    let edges: Vec<usize> =
        (0..w).filter(|&c| (c as isize) < bw || c as isize + kw as isize - bw > w as isize).collect();
    let mut rows = vec![f32::NEG_INFINITY; len];
    for (plane, result) in xv.chunks(len.max(1)).zip(out.chunks_mut(len.max(1))) {
        rows.fill(f32::NEG_INFINITY);
        for t in 0..kw as isize {
            sweep(&mut rows, plane, t - bw);
        }
        for (row, maxima) in plane.chunks(w.max(1)).zip(rows.chunks_mut(w.max(1))) {
            for &c in &edges {
                let span = window_span(c, 1, win.begin[1], kw, w);
                maxima[c] = row[span].iter().copied().fold(f32::NEG_INFINITY, larger);
            }
        }
        for t in 0..kh as isize {
            sweep(result, &rows, (t - bh) * w as isize);
        }
    }
}

pub(super) fn global_pool(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    if x.rank() < 2 {
        return Err(bad_input!("global pooling needs batch and channel axes"));
    }
    // An empty input may declare any batch and channels: one output each.
    let planes = count(&x.shape[..2])?;
    ctx.check_grown(planes, x.len())?;
    let size = count(&x.shape[2..])?;
    // One value per plane, its spatial axes kept as ones.
    let mut shape = x.shape[..2].to_vec();
    shape.extend(std::iter::repeat_n(1, x.rank() - 2));
    // The average of float32 planes: summed in f64 where they lie, without a copy.
    if let (Data::F32(xs), "GlobalAveragePool") = (&*x.data, ctx.op()) {
        let out = (0..planes)
            .map(|p| (xs[p * size..(p + 1) * size].iter().map(|&v| f64::from(v)).sum::<f64>() / size as f64) as f32)
            .collect::<Vec<f32>>();
        return one(Tensor::new(shape, Data::F32(out.into())));
    }
    let xv = x.to_f64s()?;
    // GlobalLpPool's norm order: an int from version 2 on, a float in version 1.
    let order = ctx.int("p").map(|p| p as f64).or_else(|| ctx.float("p").map(f64::from)).unwrap_or(2.0);
    if ctx.op() == "GlobalLpPool" && !(order > 0.0 && order.is_finite()) {
        return Err(bad_attribute!("p = {order}: the norm order of GlobalLpPool must be positive"));
    }
    let out = (0..planes)
        .map(|p| {
            let plane = &xv[p * size..(p + 1) * size];
            match ctx.op() {
                "GlobalMaxPool" => plane.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                "GlobalLpPool" => plane.iter().map(|v| v.abs().powf(order)).sum::<f64>().powf(1.0 / order),
                _ => plane.iter().sum::<f64>() / size as f64,
            }
        })
        .collect();
    one(numeric_like(x.data_type(), shape, out)?)
}

#[cfg(test)]
mod tests {
    use super::max_pool_2d;
    use crate::kernels::nn::Window;

    /// The two-pass max pooling (and its same-size sweep) gives the maximum under every
    /// window by its definition, for kernels, strides and pads (uneven ones included)
    /// over small and odd planes, with NaN among the values.
    #[test]
    fn two_pass_max_pooling_is_the_definition() {
        let larger = |best: f32, v: f32| if v > best { v } else { best };
        let mut checked = 0;
        for (h, w) in [(1, 1), (2, 5), (5, 7), (7, 3), (13, 13)] {
            let values: Vec<f32> =
                (0..2 * h * w).map(|i| if i % 11 == 7 { f32::NAN } else { ((i * 37 % 23) as f32) - 11.0 }).collect();
            for (kh, kw) in [(1, 1), (2, 2), (3, 3), (2, 3), (5, 5)] {
                for stride in [1, 2, 3] {
                    for (before, after) in [(0, 0), (1, 1), (0, 1), (1, 0), (2, 2)] {
                        if before >= kh.min(kw) || after >= kh.min(kw) {
                            continue;
                        }
                        let size = |len: usize, k: usize| (len + before + after).checked_sub(k).map(|s| s / stride + 1);
                        let (Some(oh), Some(ow)) = (size(h, kh), size(w, kw)) else { continue };
                        let win = Window {
                            kernel: vec![kh, kw],
                            strides: vec![stride, stride],
                            dilations: vec![1, 1],
                            begin: vec![before, before],
                            padded: vec![h + before + after, w + before + after],
                            out: vec![oh, ow],
                        };
                        let got = max_pool_2d(&values, 2, &[h, w], &win);
                        let mut want = Vec::new();
                        for plane in values.chunks(h * w) {
                            for oy in 0..oh {
                                for ox in 0..ow {
                                    let mut best = f32::NEG_INFINITY;
                                    for ky in 0..kh {
                                        for kx in 0..kw {
                                            let (y, x) = (
                                                (oy * stride + ky) as i64 - before as i64,
                                                (ox * stride + kx) as i64 - before as i64,
                                            );
                                            if (0..h as i64).contains(&y) && (0..w as i64).contains(&x) {
                                                best = larger(best, plane[y as usize * w + x as usize]);
                                            }
                                        }
                                    }
                                    want.push(best);
                                }
                            }
                        }
                        let same =
                            got.len() == want.len() && got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(
                            same,
                            "{h}x{w} kernel {kh}x{kw} stride {stride} pads {before},{after}: {got:?} vs {want:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} geometries");
    }
}
