//! Image and sampling operators: Resize and Upsample, GridSample, AffineGrid, RoiAlign,
//! Col2Im, MaxUnpool, ImageDecoder.

use super::{Ctx, Outputs, Rule};
use crate::infer::types::{Known, dim, known_dim, unknown_dim, unknown_dims};
use crate::infer::types::{first_known, narrow, normalize_axis, tensor_of};
use crate::ir::{DataType, Dimension};

pub fn rule(op: &str) -> Option<Rule> {
    let rule: Rule = match op {
        "Resize" | "Upsample" => |ctx| of_input_type(ctx, resize(ctx.op(), ctx)),
        "GridSample" => |ctx| of_input_type(ctx, grid_sample(ctx)),
        "AffineGrid" => |ctx| of_input_type(ctx, affine_grid(ctx)),
        // [num_rois, C, output_height, output_width].
        "RoiAlign" => |ctx| {
            let rois = ctx.dims(1).and_then(|d| d.first()).or_else(|| ctx.dims(2).and_then(|d| d.first()));
            let channels = ctx.dims(0).and_then(|d| d.get(1));
            let dims = vec![
                rois.cloned().unwrap_or_default(),
                channels.cloned().unwrap_or_default(),
                dim(ctx.int("output_height").unwrap_or(1)),
                dim(ctx.int("output_width").unwrap_or(1)),
            ];
            of_input_type(ctx, Some(dims))
        },
        "Col2Im" => |ctx| of_input_type(ctx, col2im(ctx)),
        "MaxUnpool" => |ctx| of_input_type(ctx, max_unpool(ctx)),
        // Height, width and channels are in the encoded image.
        "ImageDecoder" => |_| Some(Outputs::one(tensor_of(Some(DataType::Uint8 as i32), Some(vec![unknown_dim(); 3])))),
        _ => return None,
    };
    Some(rule)
}

/// A tensor of input 0's element type and of these dims.
fn of_input_type(ctx: &Ctx<'_, '_>, dims: Option<Vec<Dimension>>) -> Option<Outputs> {
    Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
}

/// [N, C, spatial dims of the grid…].
fn grid_sample(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let (x, grid) = (ctx.dims(0)?, ctx.dims(1)?);
    if x.len() != grid.len() || x.len() < 3 {
        return None;
    }
    let mut out = vec![first_known(&x[0], &grid[0]), x[1].clone()];
    out.extend_from_slice(&grid[1..grid.len() - 1]);
    Some(out)
}

/// `size` is [N, C, H, W] (2-D grid [N, H, W, 2]) or [N, C, D, H, W] (3-D, [N, D, H, W, 3]).
fn affine_grid(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let count = ctx.dims(1).and_then(|d| d.first()).and_then(known_dim)?;
    let size: Vec<Dimension> = match ctx.value(1) {
        Some(k) => k.as_dims(),
        None => unknown_dims(count)?,
    };
    let spatial = match size.len() {
        4 => 2,
        5 => 3,
        _ => return None,
    };
    // theta is [N, 2, 3] or [N, 3, 4]; of another rank, nothing can be said.
    if ctx.dims(0).is_some_and(|d| d.len() != 3) {
        return None;
    }
    let theta_batch = ctx.dims(0).and_then(|d| d.first()).cloned().unwrap_or_default();
    let mut out = vec![first_known(&size[0], &theta_batch)];
    out.extend_from_slice(&size[2..]);
    out.push(dim(spatial));
    Some(out)
}

/// [N, C / prod(block_shape), image_shape…].
fn col2im(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let input = ctx.dims(0)?;
    let spatial = ctx.dims(1).and_then(|d| d.first()).and_then(known_dim)?;
    let image: Vec<Dimension> = match ctx.value(1) {
        Some(k) => k.as_dims(),
        None => unknown_dims(spatial)?,
    };
    let block = ctx.value(2).and_then(Known::ints).and_then(|b| b.iter().try_fold(1i64, |a, &v| a.checked_mul(v)));
    let channels = match (input.get(1).and_then(known_dim), block) {
        (Some(c), Some(b)) if b > 0 => dim(c / b),
        _ => unknown_dim(),
    };
    let mut out = vec![input.first().cloned().unwrap_or_default(), channels];
    out.extend(image);
    Some(out)
}

/// The given `output_shape`, or each spatial dim undone: `stride·(in−1) + kernel − pads`.
fn max_unpool(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let x = ctx.dims(0)?;
    if ctx.has_input(2) {
        return match ctx.value(2) {
            Some(k) => Some(k.as_dims()),
            None => Some(vec![unknown_dim(); x.len()]),
        };
    }
    let spatial = x.len().checked_sub(2)?;
    let kernel = ctx.ints("kernel_shape")?;
    let strides = ctx.ints("strides").map_or_else(|| vec![1; spatial], <[_]>::to_vec);
    let pads = ctx.ints("pads").map_or_else(|| vec![0; 2 * spatial], <[_]>::to_vec);
    let channels = ctx.dims(1).and_then(|d| d.get(1)).cloned().unwrap_or_default();
    let mut out = vec![x[0].clone(), channels];
    for i in 0..spatial {
        let size = (|| {
            let n = i128::from(known_dim(&x[i + 2])?);
            let wide = |v: Option<&i64>| v.copied().map(i128::from);
            narrow(
                wide(strides.get(i))? * (n - 1) + wide(kernel.get(i))?
                    - wide(pads.get(i))?
                    - wide(pads.get(i + spatial))?,
            )
        })();
        out.push(size.map_or_else(unknown_dim, dim));
    }
    Some(out)
}

/// Resize and Upsample: each axis `sizes` names takes that size; otherwise each axis is
/// scaled, `floor(size · scale)`. Scales must be constants; sizes may be computed in the
/// graph. `axes` (opset 18) limits both to some axes; `keep_aspect_ratio_policy` turns
/// sizes into one common scale.
fn resize(op: &str, ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let x = ctx.dims(0)?;
    let rank = x.len();
    let modern = op == "Resize" && ctx.opset >= 11;
    let axes: Vec<usize> = match ctx.ints("axes") {
        Some(a) => a.iter().map(|&a| normalize_axis(a, rank)).collect::<Option<_>>()?,
        None => (0..rank).collect(),
    };
    let mut out = vec![unknown_dim(); rank];
    // Sizes computed at run time still tell which axes keep their size.
    let sizes = if modern && ctx.has_input(3) {
        ctx.value(3).map(|k| k.as_dims()).or_else(|| {
            let count = ctx.dims(3).and_then(|d| d.first()).and_then(known_dim)?;
            unknown_dims(count)
        })
    } else {
        None
    };
    if let Some(mut sizes) = sizes.filter(|s| !s.is_empty()) {
        if sizes.len() != axes.len() {
            return Some(out);
        }
        if let Some(policy @ ("not_larger" | "not_smaller")) = ctx.string("keep_aspect_ratio_policy") {
            sizes = keep_aspect_ratio(policy == "not_larger", x, &axes, &sizes);
        }
        for (i, d) in x.iter().enumerate() {
            out[i] = match axes.iter().position(|&a| a == i) {
                Some(k) if known_dim(&sizes[k]).is_none_or(|v| v > 0) => sizes[k].clone(),
                Some(_) => unknown_dim(),
                None => d.clone(),
            };
        }
        return Some(out);
    }
    let scales = match (op, ctx.opset) {
        ("Upsample", ..9) => ctx.node.attribute("scales").and_then(|a| a.value()).and_then(|v| match v {
            crate::ir::AttributeValue::Floats(f) => Some(f.to_vec()),
            _ => None,
        }),
        _ => ctx.float_values(if modern { 2 } else { 1 }),
    };
    let Some(scales) = scales.filter(|s| s.len() == axes.len()) else {
        return Some(out);
    };
    for (i, d) in x.iter().enumerate() {
        let scale = axes.iter().position(|&a| a == i).map_or(1.0, |k| scales[k]);
        out[i] = match known_dim(d) {
            Some(n) => dim((n as f64 * f64::from(scale)).floor() as i64),
            None if scale == 1.0 => d.clone(),
            None => unknown_dim(),
        };
    }
    Some(out)
}

/// Sizes under a kept aspect ratio: one scale for all axes, the smallest (`not_larger`) or
/// largest of the per-axis ratios, each size rounded from it.
fn keep_aspect_ratio(not_larger: bool, x: &[Dimension], axes: &[usize], sizes: &[Dimension]) -> Vec<Dimension> {
    let ratios: Option<Vec<f64>> =
        axes.iter().zip(sizes).map(|(&a, s)| Some(known_dim(s)? as f64 / known_dim(&x[a])? as f64)).collect();
    let Some(ratios) = ratios else {
        return vec![unknown_dim(); sizes.len()];
    };
    let pick = if not_larger { f64::min } else { f64::max };
    let Some(scale) = ratios.into_iter().reduce(pick) else {
        return sizes.to_vec();
    };
    axes.iter()
        .map(|&a| known_dim(&x[a]).map_or_else(unknown_dim, |n| dim((scale * n as f64).round() as i64)))
        .collect()
}
