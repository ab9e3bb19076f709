//! A float Conv of a DequantizeLinear output by a dequantized 8-bit constant weight (the QDQ
//! form of onnxruntime's static quantizer) run as the 8-bit convolution it stands for, as
//! onnxruntime fuses it into QLinearConv: the weight packed once when the plan is made as
//! the B of an 8-bit product (`[channels·taps, filters]`), the input's integers recovered
//! from its dequantized values, the patches laid out a row per output position (padding
//! holds the zero point, which stands for 0), the int32 sums scaled per filter by
//! `scale_x·scale_w` and the bias added. What [`crate::kernels::dequantized_product`] does
//! for MatMul; the same bound holds (the exact sum, rounded once). One group only; others,
//! and processors without VNNI, take the float convolution.

use super::{Taps, Window};
use crate::int8::{Operand, PackedB, RowsA, tensor_bytes};
use crate::kernels::dequantized_product::{DequantizedA, DequantizedB, a_parameters};
use crate::kernels::{Ctx, Prepared};
use crate::value::{Data, Tensor};

/// What the plan makes of the two DequantizeLinear nodes' constants.
#[derive(Debug)]
pub struct DequantizedConv {
    a_inverse_scale: f32,
    /// The input's zero point in the unsigned form.
    a_zero: i32,
    /// The weight as `[channels·taps, filters]`.
    w: PackedB,
    /// `scale_x · scale_w` per filter.
    filter_scales: Vec<f32>,
}

/// Output positions whose patches are laid out at once: the rows of one 8-bit product.
const POSITIONS_TILE: usize = 512;

/// Convolutions of fewer multiply-adds keep the float path: the byte conversion, the taps
/// table and the transposed write cost more there than the float GEMM (a QDQ ResNet's 6
/// convolutions of about 60,000 multiply-adds each took 0.052 ms through this path against
/// 0.033 through the float one).
const MIN_MULTIPLY_ADDS: usize = 1 << 18;

/// The prepared form and its bytes, or `None` when the pair is not of the form taken here.
pub fn prepare(a: &DequantizedA<'_>, b: &DequantizedB<'_>) -> Option<(Prepared, usize)> {
    let (a_inverse_scale, a_zero, sa) = a_parameters(a)?;
    let w = b.weight;
    if w.rank() < 3 {
        return None;
    }
    let (filters, k) = (w.shape[0], w.len() / w.shape[0].max(1));
    let (bytes, signed) = tensor_bytes(w)?;
    let Data::F32(sw) = &*b.scale.data else { return None };
    let sw = &sw[..b.scale.len()];
    // One scale, or one per filter (DequantizeLinear's axis 0).
    let per_filter = sw.len() != 1;
    if per_filter && (b.scale.rank() != 1 || sw.len() != filters || (b.axis != 0 && b.axis != -(w.rank() as i64))) {
        return None;
    }
    let zw: Vec<i32> = match b.zero {
        Some(z) => match crate::int8::tensor_integers(z)? {
            (v, s) if s == signed && v.len() == sw.len() => v,
            _ => return None,
        },
        None => vec![0],
    };
    // The weight transposed: a row per channel and tap, a column per filter.
    let mut transposed = vec![0u8; bytes.len()];
    for (f, row) in bytes.chunks_exact(k.max(1)).enumerate() {
        for (i, &v) in row.iter().enumerate() {
            transposed[i * filters + f] = v;
        }
    }
    let packed = PackedB::new(&Operand { bytes: &transposed, signed, zero: &zw }, (k, filters))?;
    let filter_scales: Vec<f32> = (0..filters).map(|f| sa * sw[if per_filter { f } else { 0 }]).collect();
    let bytes = packed.bytes() + 4 * filters;
    let form = DequantizedConv { a_inverse_scale, a_zero, w: packed, filter_scales };
    Some((std::sync::Arc::new(form) as Prepared, bytes))
}

/// The convolution of `x` (`[batch, channels, spatial…]`) through the prepared form, when
/// the node has one that fits; `None` sends the caller to the float convolution.
pub(super) fn run(
    ctx: &Ctx<'_>,
    (x, weight_filters): (&Tensor, usize),
    (win, spatial): (&Window, &[usize]),
    bias: Option<&[f64]>,
) -> Option<Result<Vec<f32>, crate::KernelError>> {
    let form = ctx.prepared?.as_any().downcast_ref::<DequantizedConv>()?;
    let Data::F32(xv) = &*x.data else { return None };
    let (k, filters) = form.w.shape();
    let (batch, channels) = (x.shape[0], x.shape[1]);
    let taps_per_channel = win.kernel.iter().product::<usize>();
    let positions: usize = win.out.iter().product();
    if channels * taps_per_channel != k
        || filters != weight_filters
        || batch.saturating_mul(positions).saturating_mul(k).saturating_mul(filters) < MIN_MULTIPLY_ADDS
        || x.placement() != (0, crate::broadcast::strides(&x.shape))
    {
        return None;
    }
    Some(convolve(ctx, form, &xv[..x.len()], (batch, channels), (win, spatial), bias))
}

fn convolve(
    ctx: &Ctx<'_>,
    form: &DequantizedConv,
    x: &[f32],
    (batch, channels): (usize, usize),
    (win, spatial): (&Window, &[usize]),
    bias: Option<&[f64]>,
) -> Result<Vec<f32>, crate::KernelError> {
    let (k, filters) = form.w.shape();
    let taps: Taps = super::taps(ctx, win, spatial)?;
    let (positions, per_channel) = (taps.len(), k / channels.max(1));
    let in_size = x.len() / (batch * channels).max(1);
    let x_u = crate::int8::unsigned_bytes(x, form.a_inverse_scale, form.a_zero);
    let pad = form.a_zero as u8;
    let mut out = vec![0.0f32; batch * filters * positions];
    crate::gemm::count_flops(2 * batch * positions * k * filters);
    for b in 0..batch {
        let image = &x_u[b * channels * in_size..(b + 1) * channels * in_size];
        for first in (0..positions).step_by(POSITIONS_TILE) {
            let rows = POSITIONS_TILE.min(positions - first);
            // A row per output position: each channel's values under each tap.
            let patches = RowsA::from_fn((rows, k), form.a_zero, |r, dest| {
                let at = &taps.at[(first + r) * per_channel..(first + r + 1) * per_channel];
                for (plane, dest) in image.chunks_exact(in_size.max(1)).zip(dest.chunks_exact_mut(per_channel.max(1))) {
                    for (d, tap) in dest.iter_mut().zip(at) {
                        *d = tap.map_or(pad, |i| plane[i as usize]);
                    }
                }
            });
            let sums = crate::int8::multiply(&patches, &form.w)
                .ok_or(crate::error::bad_input!("the packed weight does not fit"))?;
            for f in 0..filters {
                let (scale, add) = (form.filter_scales[f], bias.map_or(0.0, |b| b[f] as f32));
                let plane = &mut out[(b * filters + f) * positions + first..][..rows];
                for (o, row) in plane.iter_mut().zip(sums.chunks_exact(filters)) {
                    *o = row[f] as f32 * scale + add;
                }
            }
        }
    }
    Ok(out)
}
