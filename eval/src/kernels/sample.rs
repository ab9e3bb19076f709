//! Sampling at computed coordinates: GridSample (nearest, linear and cubic interpolation
//! in any number of spatial dimensions, zeros/border/reflection padding) and AffineGrid,
//! which makes the grids it samples.

use super::elementwise::numeric_like;
use super::{Ctx, Kernel, count, input, one};
use crate::value::Value;

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "GridSample" => grid_sample,
        "AffineGrid" => affine_grid,
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
        let (first, weights): (i64, Vec<f64>) = match mode {
            Mode::Linear => (base as i64, vec![1.0 - t, t]),
            _ => (base as i64 - 1, cubic_weights(t).to_vec()),
        };
        let mut sum = 0.0;
        for (k, w) in weights.iter().enumerate() {
            at.push(first + k as i64);
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

fn grid_sample(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, String> {
    let (x, grid) = (input(inputs, 0)?, input(inputs, 1)?);
    let spatial = x.rank().checked_sub(2).filter(|&s| s >= 1).ok_or("GridSample needs X of rank 3 or more")?;
    let (n, c) = (x.shape[0], x.shape[1]);
    if grid.rank() != spatial + 2 || grid.shape[0] != n || grid.shape[spatial + 1] != spatial {
        return Err(format!("grid of shape {:?} does not fit X of shape {:?}", grid.shape, x.shape));
    }
    let mode = match ctx.string("mode").unwrap_or(if ctx.opset >= 20 { "linear" } else { "bilinear" }) {
        "nearest" => Mode::Nearest,
        "linear" | "bilinear" => Mode::Linear,
        "cubic" | "bicubic" => Mode::Cubic,
        other => return Err(format!("mode '{other}' is not one GridSample has")),
    };
    let padding = match ctx.string("padding_mode").unwrap_or("zeros") {
        "zeros" => Padding::Zeros,
        "border" => Padding::Border,
        "reflection" => Padding::Reflection,
        other => return Err(format!("padding_mode '{other}' is not one GridSample has")),
    };
    let align = ctx.int("align_corners").unwrap_or(0) != 0;
    let dims = &x.shape[2..];
    let out_dims = &grid.shape[1..=spatial];
    let points = count(out_dims)?;
    let mut out_shape = vec![n, c];
    out_shape.extend_from_slice(out_dims);
    ctx.check_elements(count(&out_shape)?)?;
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
fn affine_grid(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, String> {
    let (theta, size) = (input(inputs, 0)?, input(inputs, 1)?.to_i64s()?);
    let spatial = size.len().checked_sub(2).filter(|s| (2..=3).contains(s)).ok_or("size must have 4 or 5 values")?;
    let sizes: Vec<usize> = size
        .iter()
        .map(|&v| usize::try_from(v).map_err(|_| format!("size {v} is negative")))
        .collect::<Result<_, _>>()?;
    let n = sizes[0];
    if theta.shape != [n, spatial, spatial + 1] {
        return Err(format!("theta of shape {:?} does not fit size {size:?}", theta.shape));
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
