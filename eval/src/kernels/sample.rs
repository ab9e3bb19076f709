//! Sampling at computed coordinates: GridSample (nearest, linear and cubic interpolation
//! in any number of spatial dimensions, zeros/border/reflection padding), AffineGrid,
//! which makes the grids it samples, RoiAlign (regions pooled from bilinear samples) and
//! DeformConv (a convolution whose taps are moved by learned offsets).

use super::{Ctx, Kernel, count, input, one};
use crate::error::{KernelError, bad_attribute, bad_input, limit, unsupported};
use crate::kernels::common::numeric_like;
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "GridSample" => grid_sample,
        "AffineGrid" => affine_grid,
        "RoiAlign" => roi_align,
        "DeformConv" => deform_conv,
        _ => return None,
    };
    Some(k)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Nearest,
    Linear,
    Cubic,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Padding {
    Zeros,
    Border,
    Reflection,
}

/// One channel's spatial data and how positions outside it read.
struct Image<'a> {
    data: &'a [f64],
    dims: &'a [usize],
    strides: Vec<usize>,
    padding: Padding,
    /// The coordinate range reflection folds into, per dimension.
    low: Vec<f64>,
    high: Vec<f64>,
}

impl Image<'_> {
    /// The value at integer position `at` (any integers: padding decides outside).
    fn at(&self, at: &[i64]) -> f64 {
        let mut flat = 0usize;
        for (d, &i) in at.iter().enumerate() {
            let len = self.dims[d] as i64;
            let i = match self.padding {
                Padding::Zeros if i < 0 || i >= len => return 0.0,
                Padding::Zeros => i,
                Padding::Border => i.clamp(0, len - 1),
                Padding::Reflection => (reflect(i as f64, self.low[d], self.high[d]) as i64).clamp(0, len - 1),
            };
            flat += i as usize * self.strides[d];
        }
        self.data[flat]
    }

    /// Interpolates over dimensions `d..`, with positions before `d` fixed in `at`.
    fn interpolate(&self, x: &[f64], mode: Mode, at: &mut Vec<i64>) -> f64 {
        let d = at.len();
        if d == x.len() {
            return self.at(at);
        }
        let base = x[d].floor();
        let t = x[d] - base;
        // A coordinate far outside (or infinite) saturates; its taps all read as padding.
        let (first, weights): (i64, Vec<f64>) = match mode {
            Mode::Linear => (base as i64, vec![1.0 - t, t]),
            _ => ((base as i64).saturating_sub(1), cubic_weights(t).to_vec()),
        };
        let mut sum = 0.0;
        for (k, w) in weights.iter().enumerate() {
            at.push(first.saturating_add(k as i64));
            sum += w * self.interpolate(x, mode, at);
            at.pop();
        }
        sum
    }
}

/// Folds `x` into `[low, high]` as a mirror does.
fn reflect(x: f64, low: f64, high: f64) -> f64 {
    let range = high - low;
    if range <= 0.0 {
        return low;
    }
    if x < low {
        let dx = low - x;
        let n = (dx / range) as i64;
        let r = dx - n as f64 * range;
        if n % 2 == 0 { low + r } else { high - r }
    } else if x > high {
        let dx = x - high;
        let n = (dx / range) as i64;
        let r = dx - n as f64 * range;
        if n % 2 == 0 { high - r } else { low + r }
    } else {
        x
    }
}

/// The four weights of cubic convolution (a = −0.75) at fractional offset `t`.
fn cubic_weights(t: f64) -> [f64; 4] {
    let a = -0.75;
    let w = |x: f64| {
        let x = x.abs();
        if x <= 1.0 {
            ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        } else if x < 2.0 {
            ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        } else {
            0.0
        }
    };
    [w(t + 1.0), w(t), w(1.0 - t), w(2.0 - t)]
}

fn grid_sample(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, grid) = (input(inputs, 0)?, input(inputs, 1)?);
    let spatial =
        x.rank().checked_sub(2).filter(|&s| s >= 1).ok_or(bad_input!("GridSample needs X of rank 3 or more"))?;
    let (n, c) = (x.shape[0], x.shape[1]);
    if grid.rank() != spatial + 2 || grid.shape[0] != n || grid.shape[spatial + 1] != spatial {
        return Err(bad_input!("grid of shape {:?} does not fit X of shape {:?}", grid.shape, x.shape));
    }
    let mode = match ctx.string("mode").unwrap_or(if ctx.opset >= 20 { "linear" } else { "bilinear" }) {
        "nearest" => Mode::Nearest,
        "linear" | "bilinear" => Mode::Linear,
        "cubic" | "bicubic" => Mode::Cubic,
        other => return Err(bad_attribute!("mode '{other}' is not one GridSample has")),
    };
    let padding = match ctx.string("padding_mode").unwrap_or("zeros") {
        "zeros" => Padding::Zeros,
        "border" => Padding::Border,
        "reflection" => Padding::Reflection,
        other => return Err(bad_attribute!("padding_mode '{other}' is not one GridSample has")),
    };
    let align = ctx.int("align_corners").unwrap_or(0) != 0;
    let dims = &x.shape[2..];
    let out_dims = &grid.shape[1..=spatial];
    let points = count(out_dims)?;
    let mut out_shape = vec![n, c];
    out_shape.extend_from_slice(out_dims);
    let total = count(&out_shape)?;
    ctx.check_elements(total)?;
    if total == 0 {
        // Nothing to sample (and the batch and channels may be of any size).
        return one(numeric_like(x.data_type(), out_shape, Vec::new())?);
    }
    if dims.contains(&0) {
        return Err(bad_input!("X of shape {:?} has an empty spatial axis to sample from", x.shape));
    }
    let (values, coords) = (x.to_f64s()?, grid.to_f64s()?);
    let plane = count(dims)?;
    let (low, high): (Vec<f64>, Vec<f64>) =
        dims.iter().map(|&l| if align { (0.0, l as f64 - 1.0) } else { (-0.5, l as f64 - 0.5) }).unzip();
    let mut out = Vec::with_capacity(count(&out_shape)?);
    for b in 0..n {
        for ch in 0..c {
            let data = &values[(b * c + ch) * plane..(b * c + ch + 1) * plane];
            let image = Image {
                data,
                dims,
                strides: crate::broadcast::strides(dims),
                padding,
                low: low.clone(),
                high: high.clone(),
            };
            for p in 0..points {
                // The grid lists coordinates innermost dimension first (x = width).
                let g = &coords[(b * points + p) * spatial..(b * points + p + 1) * spatial];
                let mut at: Vec<f64> = g
                    .iter()
                    .rev()
                    .zip(dims)
                    .map(|(&v, &len)| {
                        let len = len as f64;
                        if align { (v + 1.0) / 2.0 * (len - 1.0) } else { ((v + 1.0) * len - 1.0) / 2.0 }
                    })
                    .collect();
                if mode == Mode::Nearest {
                    at.iter_mut().for_each(|v| *v = v.round_ties_even());
                }
                for (d, v) in at.iter_mut().enumerate() {
                    if *v < low[d] || *v > high[d] {
                        match padding {
                            Padding::Border => *v = v.clamp(0.0, dims[d] as f64 - 1.0),
                            Padding::Reflection => *v = reflect(*v, low[d], high[d]),
                            Padding::Zeros => {}
                        }
                    }
                }
                out.push(if mode == Mode::Nearest {
                    let at: Vec<i64> = at.iter().map(|&v| v as i64).collect();
                    image.at(&at)
                } else {
                    image.interpolate(&at, mode, &mut Vec::with_capacity(spatial))
                });
            }
        }
    }
    one(numeric_like(x.data_type(), out_shape, out)?)
}

/// AffineGrid: the sampling grid of an affine transform: for each output position, the
/// normalized coordinates ([-1, 1]) of its source, `theta` applied to the position's own.
fn affine_grid(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (theta, size) = (input(inputs, 0)?, input(inputs, 1)?.to_i64s()?);
    let spatial =
        size.len().checked_sub(2).filter(|s| (2..=3).contains(s)).ok_or(bad_input!("size must have 4 or 5 values"))?;
    let sizes: Vec<usize> = size
        .iter()
        .map(|&v| usize::try_from(v).map_err(|_| bad_input!("size {v} is negative")))
        .collect::<Result<_, _>>()?;
    let n = sizes[0];
    if theta.shape != [n, spatial, spatial + 1] {
        return Err(bad_input!("theta of shape {:?} does not fit size {size:?}", theta.shape));
    }
    let align = ctx.int("align_corners").unwrap_or(0) != 0;
    let dims = &sizes[2..];
    let points = count(dims)?;
    let mut out_shape = vec![n];
    out_shape.extend_from_slice(dims);
    out_shape.push(spatial);
    ctx.check_elements(count(&out_shape)?)?;
    // Normalized coordinate of index i of a dimension of length l.
    let normal = |i: usize, l: usize| {
        let (i, l) = (i as f64, l as f64);
        if align { if l > 1.0 { -1.0 + 2.0 * i / (l - 1.0) } else { -1.0 } } else { (2.0 * i - (l - 1.0)) / l }
    };
    let t = theta.to_f64s()?;
    let strides = crate::broadcast::strides(dims);
    let mut out = Vec::with_capacity(count(&out_shape)?);
    for b in 0..n {
        let m = &t[b * spatial * (spatial + 1)..(b + 1) * spatial * (spatial + 1)];
        for p in 0..points {
            // The position's coordinates, innermost dimension first (x, y, z), then 1.
            let mut own: Vec<f64> = (0..spatial).rev().map(|d| normal((p / strides[d]) % dims[d], dims[d])).collect();
            own.push(1.0);
            for row in m.chunks_exact(spatial + 1) {
                out.push(row.iter().zip(&own).map(|(a, b)| a * b).sum());
            }
        }
    }
    one(numeric_like(theta.data_type(), out_shape, out)?)
}

/// RoiAlign: each region of interest divided into output_height × output_width bins, each
/// bin the average (or maximum) of a grid of bilinear samples, as onnxruntime and onnx's
/// reference compute it (the maximum is of each sample's weighted corners).
fn roi_align(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, rois, batch) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?.to_i64s()?);
    let [n, c, height, width] = x.shape[..] else { return Err(bad_input!("X of shape {:?} is not 4-D", x.shape)) };
    if height == 0 || width == 0 {
        return Err(bad_input!("X has an empty spatial dimension"));
    }
    let regions = rois.shape.first().copied().unwrap_or(0);
    if rois.shape != [regions, 4] || batch.len() != regions {
        return Err(bad_input!("rois {:?} and batch_indices of {} do not fit", rois.shape, batch.len()));
    }
    let dim = |name: &str| usize::try_from(ctx.int(name).unwrap_or(1)).ok().filter(|&d| d > 0);
    let (oh, ow) = (
        dim("output_height").ok_or(bad_attribute!("bad output_height"))?,
        dim("output_width").ok_or(bad_attribute!("bad output_width"))?,
    );
    let ratio = ctx.int("sampling_ratio").unwrap_or(0).max(0) as usize;
    let scale = f64::from(ctx.float("spatial_scale").unwrap_or(1.0));
    let max_mode = match ctx.string("mode").unwrap_or("avg") {
        "avg" => false,
        "max" => true,
        other => return Err(bad_attribute!("mode '{other}' is not avg or max")),
    };
    let default_mode = if ctx.opset >= 16 { "half_pixel" } else { "output_half_pixel" };
    let half_pixel = ctx.string("coordinate_transformation_mode").unwrap_or(default_mode) == "half_pixel";
    let out_shape = vec![regions, c, oh, ow];
    ctx.check_elements(count(&out_shape)?)?;
    let (values, boxes) = (x.to_f64s()?, rois.to_f64s()?);
    let (h, w) = (height as f64, width as f64);
    // Each region's sampling grid per bin, from sampling_ratio or the region's size: the
    // samples of every region and bin together are bounded like a tensor's elements.
    let mut grids = Vec::with_capacity(regions);
    let mut samples_total = 0usize;
    for r in 0..regions {
        let offset = if half_pixel { 0.5 } else { 0.0 };
        let [x1, y1, x2, y2] = [0, 1, 2, 3].map(|k| boxes[r * 4 + k] * scale - offset);
        let (mut rw, mut rh) = (x2 - x1, y2 - y1);
        if !half_pixel {
            (rw, rh) = (rw.max(1.0), rh.max(1.0));
        }
        let adaptive = |extent: f64, bins: usize| {
            let g = (extent / bins as f64).ceil().max(0.0);
            // NaN (from infinite coordinates) takes no samples.
            if g.is_nan() {
                0
            } else if g >= usize::MAX as f64 {
                usize::MAX
            } else {
                g as usize
            }
        };
        let grid_h = if ratio > 0 { ratio } else { adaptive(rh, oh) };
        let grid_w = if ratio > 0 { ratio } else { adaptive(rw, ow) };
        let samples = count(&[c, oh, ow, grid_h, grid_w])
            .ok()
            .and_then(|n| samples_total.checked_add(n))
            .filter(|&n| n <= ctx.limits.max_tensor_elements)
            .ok_or_else(|| {
                limit!(
                    "region {r} samples a {grid_h}×{grid_w} grid per bin: more samples than the limit of {}",
                    ctx.limits.max_tensor_elements
                )
            })?;
        samples_total = samples;
        grids.push((x1, y1, rw, rh, grid_h, grid_w));
    }
    let mut out = Vec::with_capacity(count(&out_shape)?);
    for (r, &(x1, y1, rw, rh, grid_h, grid_w)) in grids.iter().enumerate() {
        let b = usize::try_from(batch[r])
            .ok()
            .filter(|&b| b < n)
            .ok_or(bad_input!("batch index {} is out of range", batch[r]))?;
        let (bin_h, bin_w) = (rh / oh as f64, rw / ow as f64);
        let samples = grid_h.saturating_mul(grid_w).max(1) as f64;
        for ch in 0..c {
            let plane = &values[(b * c + ch) * height * width..][..height * width];
            for ph in 0..oh {
                for pw in 0..ow {
                    let mut acc = if max_mode { f64::NEG_INFINITY } else { 0.0 };
                    let mut any = false;
                    for iy in 0..grid_h {
                        let y = y1 + ph as f64 * bin_h + (iy as f64 + 0.5) * bin_h / grid_h as f64;
                        for ix in 0..grid_w {
                            let xx = x1 + pw as f64 * bin_w + (ix as f64 + 0.5) * bin_w / grid_w as f64;
                            any = true;
                            let corners = bilinear_corners(plane, height, width, y, xx, h, w);
                            if max_mode {
                                acc = corners.iter().fold(acc, |m, &v| m.max(v));
                            } else {
                                acc += corners.iter().sum::<f64>();
                            }
                        }
                    }
                    out.push(match (max_mode, any) {
                        (_, false) => 0.0,
                        (true, true) => acc,
                        (false, true) => acc / samples,
                    });
                }
            }
        }
    }
    one(numeric_like(x.data_type(), out_shape, out)?)
}

/// The two grid positions around coordinate `v` (at least 0) along an axis of `len`, and
/// the weight of the upper one; past the last position both are the last, weight 0.
fn neighbours(v: f64, len: usize) -> (usize, usize, f64) {
    let v = v.max(0.0);
    let low = v as usize;
    if low >= len - 1 { (len - 1, len - 1, 0.0) } else { (low, low + 1, v - low as f64) }
}

/// The four weighted corner values of a bilinear sample at (y, x) of a plane (all zero
/// outside [-1, size]).
fn bilinear_corners(plane: &[f64], height: usize, width: usize, y: f64, x: f64, h: f64, w: f64) -> [f64; 4] {
    if y < -1.0 || y > h || x < -1.0 || x > w {
        return [0.0; 4];
    }
    let (y_low, y_high, ly) = neighbours(y, height);
    let (x_low, x_high, lx) = neighbours(x, width);
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    [
        hy * hx * plane[y_low * width + x_low],
        hy * lx * plane[y_low * width + x_high],
        ly * hx * plane[y_high * width + x_low],
        ly * lx * plane[y_high * width + x_high],
    ]
}

/// DeformConv (2-D): each kernel tap samples the input bilinearly (zeros outside) at its
/// usual position moved by the tap's offset for that output position and offset group,
/// weighted by the optional mask; then the usual grouped convolution sum and bias.
fn deform_conv(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let (x, w, offset) = (input(inputs, 0)?, input(inputs, 1)?, input(inputs, 2)?);
    let (bias, mask) = (super::optional(inputs, 3)?, super::optional(inputs, 4)?);
    let ([n, ic, ih, iw], [oc, icg, kh, kw], [_, _, oh, ow]) = (&x.shape[..], &w.shape[..], &offset.shape[..]) else {
        return Err(unsupported!("DeformConv is implemented for 2-D images (X, W and offset of rank 4)"));
    };
    let (n, ic, ih, iw, oc, icg, kh, kw, oh, ow) = (*n, *ic, *ih, *iw, *oc, *icg, *kh, *kw, *oh, *ow);
    let positive = |name: &str| usize::try_from(ctx.int(name).unwrap_or(1)).ok().filter(|&v| v > 0);
    let group = positive("group").ok_or(bad_attribute!("group must be positive"))?;
    let groups_off = positive("offset_group").ok_or(bad_attribute!("offset_group must be positive"))?;
    if icg.checked_mul(group) != Some(ic) || oc % group != 0 || ic % groups_off != 0 {
        return Err(bad_input!(
            "channels do not divide: X {:?}, W {:?}, group {group}, offset_group {groups_off}",
            x.shape,
            w.shape
        ));
    }
    let taps = count(&[kh, kw])?;
    let offset_channels = count(&[groups_off, 2, taps])?;
    if offset.shape != [n, offset_channels, oh, ow] {
        return Err(bad_input!("offset of shape {:?} does not fit", offset.shape));
    }
    if mask.is_some_and(|m| m.shape != [n, offset_channels / 2, oh, ow]) {
        return Err(bad_input!("the mask's shape does not fit"));
    }
    let ints = |name: &str, default: i64, len: usize| -> Result<Vec<i64>, KernelError> {
        match ctx.ints(name) {
            Some(v) if v.len() == len => Ok(v.to_vec()),
            Some(v) => Err(bad_attribute!("{name} has {} values, {len} expected", v.len())),
            None => Ok(vec![default; len]),
        }
    };
    let (dil, stride, pads) = (ints("dilations", 1, 2)?, ints("strides", 1, 2)?, ints("pads", 0, 4)?);
    let out_shape = vec![n, oc, oh, ow];
    let total = count(&out_shape)?;
    ctx.check_elements(total)?;
    if total == 0 {
        // Nothing to compute (and the batch and channels may be of any size).
        return one(numeric_like(x.data_type(), out_shape, Vec::new())?);
    }
    let (xv, wv, off) = (x.to_f64s()?, w.to_f64s()?, offset.to_f64s()?);
    let mv = mask.map(|m| m.to_f64s()).transpose()?;
    let bv = bias.map(|b| b.to_f64s()).transpose()?;
    let (ocg, icpo) = (oc / group, ic / groups_off);
    let dims = [ih, iw];
    let mut out = vec![0.0; count(&out_shape)?];
    let mut at = Vec::with_capacity(2);
    for b in 0..n {
        for o in 0..oc {
            let g = o / ocg;
            for i in 0..oh {
                for j in 0..ow {
                    let mut sum = bv.as_ref().and_then(|v| v.get(o)).copied().unwrap_or(0.0);
                    for c in g * icg..(g + 1) * icg {
                        let og = c / icpo;
                        let plane = &xv[(b * ic + c) * ih * iw..][..ih * iw];
                        let image = Image {
                            data: plane,
                            dims: &dims,
                            strides: vec![iw, 1],
                            padding: Padding::Zeros,
                            low: vec![0.0, 0.0],
                            high: vec![ih as f64 - 1.0, iw as f64 - 1.0],
                        };
                        for ki in 0..kh {
                            for kj in 0..kw {
                                let tap = ki * kw + kj;
                                let off_at =
                                    |d: usize| ((((b * groups_off + og) * taps + tap) * 2 + d) * oh + i) * ow + j;
                                // In i128: strides, pads and dilations are any i64.
                                let base = |o: usize, d: usize, k: usize| {
                                    (o as i128 * i128::from(stride[d]) - i128::from(pads[d])
                                        + k as i128 * i128::from(dil[d])) as f64
                                };
                                let y = base(i, 0, ki) + off[off_at(0)];
                                let xx = base(j, 1, kj) + off[off_at(1)];
                                let m = mv
                                    .as_ref()
                                    .map_or(1.0, |m| m[(((b * groups_off + og) * taps + tap) * oh + i) * ow + j]);
                                at.clear();
                                let v = image.interpolate(&[y, xx], Mode::Linear, &mut at);
                                sum += v * wv[((o * icg + (c - g * icg)) * kh + ki) * kw + kj] * m;
                            }
                        }
                    }
                    out[((b * oc + o) * oh + i) * ow + j] = sum;
                }
            }
        }
    }
    one(numeric_like(x.data_type(), out_shape, out)?)
}
