//! Resize (and Upsample), as the spec defines it: separable per axis. For each axis and
//! each output index, the input coordinate it maps back to (by the coordinate
//! transformation mode), the neighbouring input indices (edge values beyond the ends) and
//! their weights (nearest, linear or cubic, stretched when antialiasing a downscale); an
//! output element is the weighted sum over the product of its axes' neighbours.

use super::{Ctx, Kernel, count, input, optional};
use crate::broadcast::strides;
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::kernels::common::numeric_like;
use crate::value::{Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "Resize" | "Upsample" => resize,
        _ => return None,
    };
    Some(k)
}

/// How one axis is resampled.
struct Axis {
    input: usize,
    output: usize,
    scale: f64,
    roi: (f64, f64),
}

/// The settings shared by every axis.
struct Settings<'a> {
    mode: &'a str,
    coordinates: &'a str,
    nearest: &'a str,
    cubic_a: f64,
    exclude_outside: bool,
    antialias: bool,
}

fn resize(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let x = input(inputs, 0)?;
    let rank = x.rank();
    let legacy = ctx.op() == "Upsample" || ctx.opset < 11;
    let (roi, scales, sizes) = if legacy {
        let scales = match optional(inputs, 1)? {
            Some(s) => Some(s.to_f64s()?),
            None => ctx.node.attribute("scales").and_then(|a| match a.value() {
                Some(onnx_core::ir::AttributeValue::Floats(f)) => Some(f.iter().map(|&v| f64::from(v)).collect()),
                _ => None,
            }),
        };
        (None, scales, None)
    } else {
        let given = |i: usize| optional(inputs, i).map(|t| t.filter(|t| !t.is_empty()));
        (
            given(1)?.map(Tensor::to_f64s).transpose()?,
            given(2)?.map(Tensor::to_f64s).transpose()?,
            given(3)?.map(Tensor::to_i64s).transpose()?,
        )
    };
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => a.iter().map(|&v| super::axis(v, rank)).collect::<Result<_, _>>()?,
        None => (0..rank).collect(),
    };
    let mut plan: Vec<Axis> =
        x.shape.iter().map(|&d| Axis { input: d, output: d, scale: 1.0, roi: (0.0, 1.0) }).collect();
    let coordinates =
        if legacy { "asymmetric" } else { ctx.string("coordinate_transformation_mode").unwrap_or("half_pixel") };
    if let Some(roi) = &roi
        && coordinates == "tf_crop_and_resize"
    {
        if roi.len() != 2 * axes.len() {
            return Err(bad_input!("roi has {} values for {} axes", roi.len(), axes.len()));
        }
        for (k, &a) in axes.iter().enumerate() {
            plan[a].roi = (roi[k], roi[k + axes.len()]);
        }
    }
    match (scales, sizes) {
        (Some(scales), _) => {
            if scales.len() != axes.len() {
                return Err(bad_input!("{} scales for {} axes", scales.len(), axes.len()));
            }
            for (k, &a) in axes.iter().enumerate() {
                let p = &mut plan[a];
                if scales[k].partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    return Err(bad_input!("scale {} is not positive", scales[k]));
                }
                p.scale = scales[k];
                let extent = if coordinates == "tf_crop_and_resize" { p.roi.1 - p.roi.0 } else { 1.0 };
                p.output = (p.input as f64 * extent * p.scale).floor() as usize;
            }
        }
        (None, Some(sizes)) => {
            if sizes.len() != axes.len() {
                return Err(bad_input!("{} sizes for {} axes", sizes.len(), axes.len()));
            }
            let lengths: Vec<usize> = plan.iter().map(|p| p.input).collect();
            let ratio = |k: usize| sizes[k] as f64 / lengths[axes[k]] as f64;
            let policy = ctx.string("keep_aspect_ratio_policy").unwrap_or("stretch");
            let common = match policy {
                "not_larger" => Some((0..axes.len()).map(ratio).fold(f64::INFINITY, f64::min)),
                "not_smaller" => Some((0..axes.len()).map(ratio).fold(0.0, f64::max)),
                _ => None,
            };
            for (k, &a) in axes.iter().enumerate() {
                let p = &mut plan[a];
                match common {
                    Some(s) => {
                        p.scale = s;
                        p.output = (s * p.input as f64 + 0.5).floor() as usize;
                    }
                    None => {
                        p.output = usize::try_from(sizes[k]).map_err(|_| bad_input!("size {}", sizes[k]))?;
                        p.scale = ratio(k);
                    }
                }
            }
        }
        (None, None) => return Err(bad_input!("Resize needs scales or sizes")),
    }
    let settings = Settings {
        mode: ctx.string("mode").unwrap_or("nearest"),
        coordinates,
        nearest: if legacy { "floor" } else { ctx.string("nearest_mode").unwrap_or("round_prefer_floor") },
        cubic_a: f64::from(ctx.float("cubic_coeff_a").unwrap_or(-0.75)),
        exclude_outside: ctx.int("exclude_outside").unwrap_or(0) != 0,
        antialias: ctx.int("antialias").unwrap_or(0) != 0,
    };
    let extrapolation = f64::from(ctx.float("extrapolation_value").unwrap_or(0.0));
    let out_shape: Vec<usize> = plan.iter().map(|p| p.output).collect();
    let total = count(&out_shape)?;
    ctx.check_elements(total)?;
    if total == 0 {
        // Nothing to sample (and the other axes may be of any size).
        return Ok(vec![Value::Tensor(numeric_like(x.data_type(), out_shape, Vec::new())?)]);
    }
    // Per axis, per output index: the (input index, weight) pairs, or None to extrapolate.
    // An antialiased downscale reads more input per output the smaller its scale.
    for p in &plan {
        let per_output =
            footprint(p, &settings).ok_or_else(|| bad_input!("scale {} is too small to resample", p.scale))?;
        ctx.check_elements(p.output.saturating_mul(per_output))
            .map_err(|e| e.map_message(|m| format!("{m} (resampling taps)")))?;
    }
    let taps: Vec<Vec<Option<Taps>>> =
        plan.iter().map(|p| (0..p.output).map(|o| axis_taps(p, o, &settings)).collect()).collect::<Result<_, _>>()?;
    let (in_strides, out_strides) = (strides(&x.shape), strides(&out_shape));
    // Every output reads one input element whole (nearest, or an axis left as it is): a
    // gather in the input's own type, its offsets built axis by axis.
    let single: Option<Vec<Vec<Option<usize>>>> = taps
        .iter()
        .zip(&in_strides)
        .map(|(axis, &stride)| {
            axis.iter()
                .map(|t| {
                    // Nearest lists its two neighbours, one of weight 0.
                    let mut read = t.as_ref()?.iter().filter(|(_, w)| *w != 0.0);
                    match (read.next(), read.next()) {
                        (Some(&(at, 1.0)), None) => Some(Some(at * stride)),
                        _ => None,
                    }
                })
                .collect::<Option<Vec<_>>>()
        })
        .collect();
    // Each output row's start from the outer axes, then the last axis's offsets along it,
    // read lazily: a list of every output's offset (16 bytes each, as options) was most of
    // an upsampling's time.
    if let Some(along) = single
        && let Some((last, outer)) = along.split_last()
    {
        let row: Vec<usize> = last.iter().flatten().copied().collect();
        let starts = crate::broadcast::offsets_by_axis(outer);
        let offsets = starts.into_iter().flatten().flat_map(|start| row.iter().map(move |&at| start + at));
        return Ok(vec![Value::Tensor(crate::value::Tensor::new(out_shape, x.data.pick(offsets)))]);
    }
    let v = x.to_f64s()?;
    let mut out = Vec::with_capacity(total);
    for i in 0..total {
        let per_axis: Option<Vec<&Taps>> =
            (0..rank).map(|a| taps[a][(i / out_strides[a]) % out_shape[a]].as_ref()).collect();
        let Some(per_axis) = per_axis.filter(|taps| taps.iter().all(|t| !t.is_empty())) else {
            out.push(extrapolation);
            continue;
        };
        // The weighted sum over the product of every axis' taps.
        let mut sum = 0.0;
        let mut index = vec![0usize; rank];
        'product: loop {
            let (mut offset, mut weight) = (0, 1.0);
            for a in 0..rank {
                let (at, w) = per_axis[a][index[a]];
                offset += at * in_strides[a];
                weight *= w;
            }
            if weight != 0.0 {
                sum += weight * v[offset];
            }
            for a in (0..rank).rev() {
                index[a] += 1;
                if index[a] < per_axis[a].len() {
                    continue 'product;
                }
                index[a] = 0;
            }
            break;
        }
        out.push(sum);
    }
    Ok(vec![Value::Tensor(numeric_like(x.data_type(), out_shape, out)?)])
}

/// The input elements one output index reads along one axis, with their weights.
type Taps = Vec<(usize, f64)>;

/// How many input positions each output index of axis `p` reads (before any falls outside),
/// or `None` when an antialiased downscale is so small that the count passes `i64`.
fn footprint(p: &Axis, settings: &Settings<'_>) -> Option<usize> {
    if p.output == p.input && p.scale == 1.0 && settings.coordinates != "tf_crop_and_resize" {
        return Some(1);
    }
    let antialias = settings.antialias && p.scale < 1.0;
    // The filter's reach on each side, in input positions: 1 (linear) or 2 (cubic), over
    // the scale when antialiasing.
    let reach = match settings.mode {
        "linear" if antialias => 1.0 / p.scale,
        "cubic" if antialias => 2.0 / p.scale,
        "cubic" => return Some(4),
        _ => return Some(2),
    };
    let taps = 2.0 * (reach.floor() + 1.0);
    (taps.is_finite() && taps < 2f64.powi(62)).then_some(taps as usize)
}

/// The input coordinate output index `o` maps back to, or None outside the crop.
fn source(p: &Axis, o: usize, mode: &str) -> Option<f64> {
    let (o, length, out) = (o as f64, p.input as f64, p.output as f64);
    let s = p.scale;
    Some(match mode {
        "asymmetric" => o / s,
        "align_corners" => {
            // The output width before rounding down, as onnx's reference divides by.
            let width = s * length;
            if width <= 1.0 { 0.0 } else { o * (length - 1.0) / (width - 1.0) }
        }
        "pytorch_half_pixel" => {
            if p.output > 1 {
                (o + 0.5) / s - 0.5
            } else {
                0.0
            }
        }
        "half_pixel_symmetric" => {
            let adjustment = out / (s * length);
            let center = length / 2.0;
            center * (1.0 - adjustment) + (o + 0.5) / s - 0.5
        }
        "tf_crop_and_resize" => {
            let (start, end) = p.roi;
            let x = if p.output > 1 {
                start * (length - 1.0) + o * (end - start) * (length - 1.0) / (out - 1.0)
            } else {
                0.5 * (start + end) * (length - 1.0)
            };
            if x < 0.0 || x > length - 1.0 {
                return None;
            }
            x
        }
        _ => (o + 0.5) / s - 0.5,
    })
}

fn axis_taps(p: &Axis, o: usize, settings: &Settings<'_>) -> Result<Option<Taps>, KernelError> {
    if p.input == 0 {
        return Err(bad_input!("cannot resize an empty axis"));
    }
    // An axis left as it is reads its own element.
    if p.output == p.input && p.scale == 1.0 && settings.coordinates != "tf_crop_and_resize" {
        return Ok(Some(vec![(o, 1.0)]));
    }
    let Some(x) = source(p, o, settings.coordinates) else { return Ok(None) };
    let floor = x.floor();
    // In (0, 1]: an integral coordinate counts as the right end of the interval on its left.
    let ratio = if x == floor { 1.0 } else { x - floor };
    let antialias = settings.antialias && p.scale < 1.0;
    let coeffs: Vec<f64> = match settings.mode {
        "nearest" => {
            let right = match settings.nearest {
                _ if x == floor => true,
                "round_prefer_ceil" => ratio >= 0.5,
                "floor" => false,
                "ceil" => true,
                _ => ratio > 0.5,
            };
            if right { vec![0.0, 1.0] } else { vec![1.0, 0.0] }
        }
        "linear" if antialias => {
            let start = (-1.0 / p.scale).floor() as i64 + 1;
            let footprint = 2 - 2 * start;
            let c: Vec<f64> = (start..start + footprint)
                .map(|k| (1.0 - ((k as f64 - ratio) * p.scale).abs()).clamp(0.0, 1.0))
                .collect();
            normalized(c)
        }
        "linear" => vec![1.0 - ratio, ratio],
        "cubic" if antialias => {
            let start = (-2.0 / p.scale).floor() as i64 + 1;
            let end = 2 - start;
            normalized((start..end).map(|k| cubic(p.scale * (k as f64 - ratio), settings.cubic_a)).collect())
        }
        "cubic" => {
            let a = settings.cubic_a;
            vec![cubic(ratio + 1.0, a), cubic(ratio, a), cubic(1.0 - ratio, a), cubic(2.0 - ratio, a)]
        }
        other => return Err(bad_attribute!("unknown mode '{other}'")),
    };
    let n = coeffs.len();
    let indices = neighbours(x, n);
    let limit = p.input as i64;
    let mut taps: Vec<(usize, f64)> = Vec::with_capacity(n);
    let mut kept = Vec::with_capacity(n);
    for (&i, &c) in indices.iter().zip(&coeffs) {
        let inside = (0..limit).contains(&i);
        if settings.exclude_outside && !inside {
            continue;
        }
        kept.push(c);
        taps.push((i.clamp(0, limit - 1) as usize, c));
    }
    if settings.exclude_outside {
        let sum: f64 = kept.iter().sum();
        if sum != 0.0 {
            for t in &mut taps {
                t.1 /= sum;
            }
        }
    }
    Ok(Some(taps))
}

/// The `n` integers nearest `x`, ties to the lower, in increasing order.
fn neighbours(x: f64, n: usize) -> Vec<i64> {
    let base = x.floor() as i64;
    let reach = n as i64 + 1;
    let mut candidates: Vec<i64> = (base - reach..=base + reach).collect();
    candidates.sort_by(|&a, &b| (x - a as f64).abs().total_cmp(&(x - b as f64).abs()).then(a.cmp(&b)));
    candidates.truncate(n);
    candidates.sort_unstable();
    candidates
}

fn normalized(c: Vec<f64>) -> Vec<f64> {
    let sum: f64 = c.iter().sum();
    if sum == 0.0 { c } else { c.into_iter().map(|v| v / sum).collect() }
}

/// The cubic convolution kernel with coefficient `a`.
fn cubic(x: f64, a: f64) -> f64 {
    let x = x.abs();
    if x < 1.0 {
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    } else {
        0.0
    }
}
