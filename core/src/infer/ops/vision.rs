//! Image and sampling operators: GridSample, AffineGrid, RoiAlign, Col2Im, MaxUnpool,
//! ImageDecoder.

use super::{Ctx, Outputs, tensor_of};
use crate::infer::env::{Known, dim, known_dim, unknown_dim};
use crate::ir::{DataType, Dimension};

pub fn infer(op: &str, ctx: &Ctx<'_, '_>) -> Option<Outputs> {
    let dims = match op {
        "GridSample" => grid_sample(ctx),
        "AffineGrid" => affine_grid(ctx),
        // [num_rois, C, output_height, output_width].
        "RoiAlign" => {
            let rois = ctx.dims(1).and_then(|d| d.first()).or_else(|| ctx.dims(2).and_then(|d| d.first()));
            let channels = ctx.dims(0).and_then(|d| d.get(1));
            Some(vec![
                rois.cloned().unwrap_or_default(),
                channels.cloned().unwrap_or_default(),
                dim(ctx.int("output_height").unwrap_or(1)),
                dim(ctx.int("output_width").unwrap_or(1)),
            ])
        }
        "Col2Im" => col2im(ctx),
        "MaxUnpool" => max_unpool(ctx),
        // Height, width and channels are in the encoded image.
        "ImageDecoder" => {
            return Some(Outputs::one(tensor_of(Some(DataType::Uint8 as i32), Some(vec![unknown_dim(); 3]))));
        }
        _ => return None,
    };
    Some(Outputs::one(tensor_of(ctx.elem(0), dims)))
}

/// The first of two dims that says something (a size or a name), else unknown.
fn unify(a: &Dimension, b: &Dimension) -> Dimension {
    if a.value.is_some() { a.clone() } else { b.clone() }
}

/// [N, C, spatial dims of the grid…].
fn grid_sample(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let (x, grid) = (ctx.dims(0)?, ctx.dims(1)?);
    if x.len() != grid.len() || x.len() < 3 {
        return None;
    }
    let mut out = vec![unify(&x[0], &grid[0]), x[1].clone()];
    out.extend_from_slice(&grid[1..grid.len() - 1]);
    Some(out)
}

/// `size` is [N, C, H, W] (2-D grid [N, H, W, 2]) or [N, C, D, H, W] (3-D, [N, D, H, W, 3]).
fn affine_grid(ctx: &Ctx<'_, '_>) -> Option<Vec<Dimension>> {
    let count = ctx.dims(1).and_then(|d| d.first()).and_then(known_dim)?;
    let size: Vec<Dimension> = match ctx.value(1) {
        Some(k) => k.as_dims(),
        None => vec![unknown_dim(); usize::try_from(count).ok()?],
    };
    let spatial = match size.len() {
        4 => 2,
        5 => 3,
        _ => return None,
    };
    let theta_batch = ctx.dims(0).and_then(|d| d.first()).cloned().unwrap_or_default();
    let mut out = vec![unify(&size[0], &theta_batch)];
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
        None => vec![unknown_dim(); usize::try_from(spatial).ok()?],
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
            let n = known_dim(&x[i + 2])?;
            strides
                .get(i)?
                .checked_mul(n - 1)?
                .checked_add(*kernel.get(i)?)?
                .checked_sub(pads.get(i)? + pads.get(i + spatial)?)
        })();
        out.push(size.map_or_else(unknown_dim, dim));
    }
    Some(out)
}
