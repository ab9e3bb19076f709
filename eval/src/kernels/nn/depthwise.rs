//! Depthwise convolution of float32 maps over two spatial axes (one filter per channel:
//! a MobileNet or PP-OCR block's 3×3 and 5×5 convolutions), computed channels-last.
//!
//! In NCHW a depthwise tap reads each plane alone, a few values per row: on PP-OCR's 4×4
//! and 2×2 maps under 5×5 kernels the per-row loops ran at 1.5–5 GFLOP/s. Here the input
//! is transposed once to positions × channels, so that each output position and kernel
//! tap is one multiply-add across all channels (contiguous, as wide as the vectors go),
//! and the result is transposed back.

use super::Window;

/// The sizes of one depthwise convolution.
pub(super) struct Depthwise<'a> {
    pub batch: usize,
    pub channels: usize,
    pub spatial: &'a [usize],
    pub win: &'a Window,
    pub bias: Option<&'a [f64]>,
}

/// Whether [`depthwise_2d`] computes this convolution: two spatial axes, one input
/// channel and one filter per group, a kernel of at least one tap.
///
/// Only where the channels are at least four times the output's width: each tap is then a
/// longer stretch across the channels than along a row. Measured on PP-OCRv5's detector at
/// 64² (1,000 runs, one thread): channels-last for every depthwise convolution 1.36 ms, for
/// none 1.43 ms, for those with channels ≥ 4 × width 1.29 ms (≥ 1, 2, 8, 16 × width:
/// 1.29–1.36 ms).
///
/// The padded grid ([`super::grid`]) is tried first, since it takes strides: 20 depthwise
/// convolutions of 96 channels over 40×40 maps at stride 2 took 4.6 ms here (the two
/// transposes most of it) and 2.2 ms there, of 48 channels over 8×8 at stride 1 0.26 and
/// 0.17 ms; PP-OCRv5's detector at 64² was the same either way (2.0 ms). This layout is
/// left for what the grid refuses (fewer than four output positions, machines without
/// fused multiply-adds, a grid mostly of padding).
pub(super) fn applies(win: &Window, channels: usize, per_group: usize, filters_per_group: usize) -> bool {
    win.out.len() == 2
        && per_group == 1
        && filters_per_group == 1
        && win.kernel.iter().all(|&k| k > 0)
        && channels >= 4 * win.out[1]
}

/// Multiply-adds below which the output rows are not shared among the cores (handing them
/// over costs more).
const MIN_SHARED: usize = 1 << 17;

/// How many shares the output rows are cut into on `cores` cores: one below
/// [`MIN_SHARED`] multiply-adds.
pub(super) fn shares(d: &Depthwise<'_>, cores: usize) -> usize {
    let work = d.batch * d.win.out[0] * d.win.out[1] * d.win.kernel[0] * d.win.kernel[1] * d.channels;
    cores.min(work / MIN_SHARED).max(1)
}

/// The output (batch × channels × output rows × columns) for the input `x` and the weights
/// `w` (one kernel per channel), output rows spread over up to `shares` shares.
pub(super) fn depthwise_2d(x: &[f32], w: &[f32], d: &Depthwise<'_>, shares: usize) -> Vec<f32> {
    let c = d.channels;
    let (h, width) = (d.spatial[0], d.spatial[1]);
    let (oh, ow) = (d.win.out[0], d.win.out[1]);
    let taps = d.win.kernel[0] * d.win.kernel[1];
    // The weights as taps × channels.
    let weights = crate::broadcast::permute(&w[..c * taps], &[c, taps], &[1, 0]);
    let bias: Vec<f32> = (0..c).map(|f| d.bias.and_then(|b| b.get(f)).copied().unwrap_or(0.0) as f32).collect();
    let work = d.batch * oh * ow * taps * c;
    let shares = shares.clamp(1, oh.max(1));
    let rows_per_share = oh.div_ceil(shares).max(1);
    let mut out = Vec::with_capacity(d.batch * c * oh * ow);
    for image in x.chunks_exact((c * h * width).max(1)).take(d.batch) {
        let input = crate::broadcast::permute(image, &[c, h * width], &[1, 0]);
        let jobs: Vec<std::ops::Range<usize>> =
            (0..oh).step_by(rows_per_share).map(|r| r..(r + rows_per_share).min(oh)).collect();
        let parts = onnx_threads::map_in_order(jobs, |rows| {
            let mut part = Vec::with_capacity(rows.len() * ow * c);
            for oy in rows {
                for ox in 0..ow {
                    let start = part.len();
                    part.extend_from_slice(&bias);
                    accumulate_taps(&mut part[start..], &input, &weights, d, (oy, ox));
                }
            }
            part
        });
        let positions_last = parts.concat();
        out.extend(crate::broadcast::permute(&positions_last, &[oh * ow, c], &[1, 0]));
    }
    crate::gemm::count_flops(2 * work);
    out
}

/// `sums` (one per channel) plus every kernel tap's weights times the input at output
/// position `(oy, ox)`; taps in the padding add nothing.
fn accumulate_taps(sums: &mut [f32], input: &[f32], weights: &[f32], d: &Depthwise<'_>, (oy, ox): (usize, usize)) {
    let w = d.win;
    let c = sums.len();
    let (h, width) = (d.spatial[0], d.spatial[1]);
    crate::simd::widest(
        #[inline(always)]
        || {
            for ky in 0..w.kernel[0] {
                let Some(iy) = (oy * w.strides[0] + ky * w.dilations[0]).checked_sub(w.begin[0]).filter(|&r| r < h)
                else {
                    continue;
                };
                for kx in 0..w.kernel[1] {
                    let column = (ox * w.strides[1] + kx * w.dilations[1]).checked_sub(w.begin[1]);
                    let Some(ix) = column.filter(|&col| col < width) else { continue };
                    let tap = &weights[(ky * w.kernel[1] + kx) * c..][..c];
                    let values = &input[(iy * width + ix) * c..][..c];
                    for ((s, &k), &v) in sums.iter_mut().zip(tap).zip(values) {
                        *s += k * v;
                    }
                }
            }
        },
    );
}
