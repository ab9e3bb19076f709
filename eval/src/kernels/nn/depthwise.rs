//! Depthwise convolution of float32 maps over two spatial axes (one filter per channel:
//! a MobileNet or PP-OCR block's 3×3 and 5×5 convolutions), computed in blocks of
//! [`BLOCK`] channels.
//!
//! In NCHW a depthwise tap reads each plane alone, a few values per row: on PP-OCR's 4×4
//! and 2×2 maps under 5×5 kernels no vector is ever full, and a stride scatters the values
//! a vector needs. Here each block of sixteen channels is copied once into a zero-bordered
//! buffer of positions × sixteen channels (onnxruntime's NCHWc layout, for one
//! convolution): every kernel tap of every output position is then one multiply-add of
//! sixteen lanes whatever the stride, the map's size or the padding, with no padding to
//! test. Four output positions are summed at a time in registers, and the block's
//! outputs are put back into its sixteen planes.
//!
//! Measured on the 20 depthwise shapes of the real models (`bench/ops_vs_onnxruntime.py`,
//! one thread, both builds alternating): 3.0× onnxruntime's time before (the padded grid
//! of [`super::grid`], which made a tile of 64 or 128 positions per channel however few it
//! had), 1.3–1.7× after; 384 channels over 2×2 maps under a 5×5 kernel 12.9× → 1.75×.
//! Larger maps stay on the grid ([`MOST_POSITIONS`]; im2col on machines without fused
//! multiply-adds, which the grid needs).

use super::Window;

/// The sizes of one depthwise convolution.
pub(super) struct Depthwise<'a> {
    pub batch: usize,
    pub channels: usize,
    pub spatial: &'a [usize],
    pub win: &'a Window,
    pub bias: Option<&'a [f64]>,
}

/// Channels per block: one AVX-512 vector, two AVX2 ones.
const BLOCK: usize = 16;
/// Output positions above which the padded grid ([`super::grid`]) is faster: there
/// a channel's plane fills its tiles of 64 or 128 positions, and the two transposes here
/// cost more than they save.
const MOST_POSITIONS: usize = 64;
/// Output positions summed at once (four vectors of sums in flight).
const TILE: usize = 4;

/// Sixteen channels' values at one position.
type Lanes = [f32; BLOCK];

impl Depthwise<'_> {
    /// The rows and columns of the padded input the taps read: from the first padded row
    /// to the last one the last output's window reaches.
    fn extent(&self) -> Option<[usize; 2]> {
        let w = self.win;
        let reach = |i: usize| -> Option<usize> {
            let last = (w.out[i].checked_sub(1)?).checked_mul(w.strides[i])?;
            last.checked_add((w.kernel[i].checked_sub(1)?).checked_mul(w.dilations[i])?)?.checked_add(1)
        };
        Some([reach(0)?, reach(1)?])
    }

    fn taps(&self) -> usize {
        self.win.kernel[0] * self.win.kernel[1]
    }
}

/// A depthwise convolution's weights in blocks of [`BLOCK`] channels, a row of lanes per
/// kernel tap (zeros past the last channel): made once with the plan for constant weights,
/// as onnxruntime packs them at session start (made on every run, this copy was half the
/// time of 384 channels over 2×2 maps), else on each run.
#[derive(Debug)]
pub struct BlockWeights {
    channels: usize,
    taps: usize,
    lanes: Vec<Lanes>,
}

impl BlockWeights {
    /// The blocks of `w` (`channels × taps`, channel after channel).
    pub(super) fn of(w: &[f32], channels: usize, taps: usize) -> BlockWeights {
        let mut lanes = vec![[0.0f32; BLOCK]; channels.div_ceil(BLOCK) * taps];
        if taps > 0 {
            for (c, kernel) in w.chunks_exact(taps).take(channels).enumerate() {
                let (block, lane) = (c / BLOCK, c % BLOCK);
                for (row, &v) in lanes[block * taps..][..taps].iter_mut().zip(kernel) {
                    row[lane] = v;
                }
            }
        }
        BlockWeights { channels, taps, lanes }
    }

    fn block(&self, b: usize) -> &[Lanes] {
        &self.lanes[b * self.taps..][..self.taps]
    }
}

/// The [`crate::kernels::Prepare`] of a Conv: its weights in blocks ([`BlockWeights`]) when
/// they are a constant float32 tensor of one channel per filter and `group` is their count
/// (a depthwise convolution); nothing otherwise.
pub(super) fn prepare(
    ctx: &crate::kernels::Ctx<'_>,
    inputs: &[Option<&crate::value::Value>],
) -> Result<Option<(crate::kernels::Prepared, usize)>, crate::error::KernelError> {
    let Some(crate::value::Value::Tensor(w)) = inputs.get(1).copied().flatten() else { return Ok(None) };
    let crate::value::Data::F32(values) = &*w.data else { return Ok(None) };
    let &[channels, 1, kh, kw] = &w.shape[..] else { return Ok(None) };
    // Eight channels or more: the blocks then hold at most twice the weights (one channel
    // would take sixteen lanes a tap).
    let Some(taps) = kh.checked_mul(kw) else { return Ok(None) };
    if w.layout.is_some() || channels < 8 || ctx.int("group") != Some(channels as i64) {
        return Ok(None);
    }
    let form = BlockWeights::of(&values[..w.len()], channels, taps);
    let bytes = form.lanes.len() * std::mem::size_of::<Lanes>();
    Ok(Some((std::sync::Arc::new(form) as crate::kernels::Prepared, bytes)))
}

/// The node's prepared [`BlockWeights`], when the plan made them ([`depthwise_2d`] takes
/// them when their sizes are the convolution's).
pub(super) fn prepared<'c>(ctx: &'c crate::kernels::Ctx<'_>) -> Option<&'c BlockWeights> {
    ctx.prepared.and_then(|p| p.as_any().downcast_ref::<BlockWeights>())
}

/// Whether [`depthwise_2d`] computes this convolution: two spatial axes, one input
/// channel and one filter per group, a kernel of at least one tap, an input of at least
/// one value per channel (an empty one under padding gives the bias: the grid and im2col
/// make it), an output of at most [`MOST_POSITIONS`] positions per channel, and a padded
/// buffer not much larger than the input and output (huge pads or dilations would make a
/// huge buffer of zeros, and a few channels a buffer of mostly empty lanes; im2col takes
/// those).
pub(super) fn applies(d: &Depthwise<'_>, per_group: usize, filters_per_group: usize) -> bool {
    let w = d.win;
    if w.out.len() != 2 || d.spatial.len() != 2 || per_group != 1 || filters_per_group != 1 {
        return false;
    }
    if w.kernel.contains(&0) || w.out.contains(&0) || w.strides.contains(&0) {
        return false;
    }
    let Some([rows, columns]) = d.extent() else { return false };
    let input = d.spatial[0].saturating_mul(d.spatial[1]);
    let output = w.out[0] * w.out[1];
    // The buffer's lanes (sixteen per position, however few the channels) against the
    // input's and output's values.
    let values = d.channels.saturating_mul(input.saturating_add(output));
    input > 0
        && output <= MOST_POSITIONS
        && rows
            .checked_mul(columns)
            .and_then(|p| p.checked_mul(BLOCK))
            .is_some_and(|lanes| lanes <= values.saturating_mul(2).saturating_add(4096 * BLOCK))
}

/// The output (batch × channels × output rows × columns) for the input `x` and the weights
/// `w` (one kernel per channel), the blocks of channels spread over the cores.
/// `prepared`: the weights' blocks when the plan made them.
pub(super) fn depthwise_2d(x: &[f32], w: &[f32], d: &Depthwise<'_>, prepared: Option<&BlockWeights>) -> Vec<f32> {
    let c = d.channels;
    let in_size = d.spatial[0] * d.spatial[1];
    let positions = d.win.out[0] * d.win.out[1];
    let taps = d.taps();
    let Some(extent) = d.extent() else { return Vec::new() };
    let mut out = vec![0.0f32; d.batch * c * positions];
    if c == 0 || positions == 0 {
        return out;
    }
    // A block's work: its copy into the padded buffer, and a multiply-add per tap, output
    // position and lane (about four to an element-operation of [`crate::shares`]).
    let block_cost = BLOCK * (extent[0] * extent[1] + positions * taps / 4);
    let made;
    let weights = match prepared.filter(|p| p.channels == c && p.taps == taps) {
        Some(p) => p,
        None => {
            made = BlockWeights::of(w, c, taps);
            &made
        }
    };
    // Where each tap reads in the padded buffer, from its output position's first tap.
    let (kw, [dy, dx]) = (d.win.kernel[1], [d.win.dilations[0], d.win.dilations[1]]);
    let offsets: Vec<usize> = (0..taps).map(|t| t / kw * dy * extent[1] + t % kw * dx).collect();
    let bias: Vec<f32> = match d.bias {
        Some(b) => (0..c.next_multiple_of(BLOCK)).map(|f| b.get(f).copied().unwrap_or(0.0) as f32).collect(),
        None => vec![0.0; c.next_multiple_of(BLOCK)],
    };
    for (image, planes) in x.chunks_exact((c * in_size).max(1)).zip(out.chunks_exact_mut(c * positions)) {
        crate::shares::over_units(planes, BLOCK * positions, block_cost, |first_block, part| {
            let fused = crate::simd::has_fma();
            let mut padded = vec![[0.0f32; BLOCK]; extent[0] * extent[1]];
            let mut sums = vec![[0.0f32; BLOCK]; positions];
            for (b, block_planes) in part.chunks_mut(BLOCK * positions).enumerate() {
                let first = (first_block + b) * BLOCK;
                let count = block_planes.len() / positions;
                let weights = weights.block(first / BLOCK);
                let bias: Lanes = bias.as_chunks::<BLOCK>().0[first / BLOCK];
                let channels = &image[first * in_size..][..count * in_size];
                crate::simd::widest(
                    #[inline(always)]
                    || {
                        pack(&mut padded, channels, d, extent);
                        if fused {
                            block_sums::<true>(&padded, (weights, &offsets), bias, d, extent[1], &mut sums);
                        } else {
                            block_sums::<false>(&padded, (weights, &offsets), bias, d, extent[1], &mut sums);
                        }
                        unpack(&sums, block_planes);
                    },
                );
            }
        });
    }
    crate::gemm::count_flops(2 * d.batch * c * positions * taps);
    out
}

/// Copies a block's channels (`count × rows × columns`, up to [`BLOCK`]) into `padded`
/// (padded rows × columns of lanes), each value at its padded position; lanes of missing
/// channels and positions outside the input stay zero (the buffer is zeroed once per share
/// and image, and every block writes the same positions).
#[inline(always)]
fn pack(padded: &mut [Lanes], channels: &[f32], d: &Depthwise<'_>, [rows, columns]: [usize; 2]) {
    let [h, width] = [d.spatial[0], d.spatial[1]];
    let [top, left] = [d.win.begin[0], d.win.begin[1]];
    let count = channels.len() / (h * width).max(1);
    // Input columns that land inside the buffer.
    let kept = width.min(columns.saturating_sub(left));
    if kept == 0 {
        return;
    }
    for y in 0..h.min(rows.saturating_sub(top)) {
        let target = &mut padded[(y + top) * columns + left..][..kept];
        if count == BLOCK {
            let sources: [&[f32]; BLOCK] = std::array::from_fn(|l| &channels[(l * h + y) * width..][..kept]);
            // Eight columns of eight channels at a time through a transpose in registers
            // (value by value, this copy took most of a small convolution's time).
            let columns_of: [&[[f32; 8]]; BLOCK] = sources.map(|s| s.as_chunks::<8>().0);
            let (groups, _) = target.as_chunks_mut::<8>();
            for (i, group) in groups.iter_mut().enumerate() {
                for half in 0..BLOCK / 8 {
                    let t = transpose_8(std::array::from_fn(|l| columns_of[half * 8 + l][i]));
                    for (lanes, column) in group.iter_mut().zip(&t) {
                        lanes[half * 8..][..8].copy_from_slice(column);
                    }
                }
            }
            for x in groups.len() * 8..kept {
                for (lane, source) in target[x].iter_mut().zip(&sources) {
                    *lane = source[x];
                }
            }
        } else {
            for (l, plane) in channels.chunks_exact(h * width).enumerate() {
                for (lanes, &v) in target.iter_mut().zip(&plane[y * width..][..kept]) {
                    lanes[l] = v;
                }
            }
            // A partial block after a full one in the same buffer: lanes past the block's
            // channels are zeroed (they were a previous block's values).
            for lanes in target.iter_mut() {
                lanes[count..].fill(0.0);
            }
        }
    }
}

/// Every output position's sums (plus the bias) for a block, from the padded buffer of
/// `columns` columns; `offsets` says where each tap reads from its position's first tap.
/// Tiles of [`TILE`] consecutive positions in row-major order, across rows where a row is
/// shorter (PP-OCR's 2×2 maps): each position's sums are a chain of dependent
/// multiply-adds, and four chains in flight keep the units busy where one waited on each
/// result.
#[inline(always)]
fn block_sums<const FUSED: bool>(
    padded: &[Lanes],
    (weights, offsets): (&[Lanes], &[usize]),
    bias: Lanes,
    d: &Depthwise<'_>,
    columns: usize,
    sums: &mut [Lanes],
) {
    let w = d.win;
    let (ow, [sy, sx]) = (w.out[1], [w.strides[0], w.strides[1]]);
    let first_tap = |p: usize| p / ow * sy * columns + p % ow * sx;
    let (tiles, rest) = sums.as_chunks_mut::<TILE>();
    for (i, tile) in tiles.iter_mut().enumerate() {
        let bases: [usize; TILE] = std::array::from_fn(|r| first_tap(i * TILE + r));
        // Summed in a local array whose address is never taken, stored once: the sums
        // stay in registers.
        let mut acc = [bias; TILE];
        for (factor, &offset) in weights.iter().zip(offsets) {
            #[allow(clippy::needless_range_loop)]
            for r in 0..TILE {
                add_product::<FUSED>(&mut acc[r], factor, &padded[bases[r] + offset]);
            }
        }
        *tile = acc;
    }
    let done = tiles.len() * TILE;
    for (p, out) in rest.iter_mut().enumerate() {
        let base = first_tap(done + p);
        let mut acc = bias;
        for (factor, &offset) in weights.iter().zip(offsets) {
            add_product::<FUSED>(&mut acc, factor, &padded[base + offset]);
        }
        *out = acc;
    }
}

/// `sum += factor · value` lane by lane: one rounding with fused multiply-adds, two
/// without (the machine's copy decides; small-integer tests are exact either way).
#[inline(always)]
fn add_product<const FUSED: bool>(sum: &mut Lanes, factor: &Lanes, value: &Lanes) {
    for l in 0..BLOCK {
        sum[l] = if FUSED { factor[l].mul_add(value[l], sum[l]) } else { sum[l] + factor[l] * value[l] };
    }
}

/// Puts a block's sums (positions × lanes) back into its planes (channel after channel).
#[inline(always)]
fn unpack(sums: &[Lanes], planes: &mut [f32]) {
    let positions = sums.len();
    let (groups, _) = sums.as_chunks::<8>();
    if planes.len() == BLOCK * positions {
        // Eight positions of eight channels at a time, as in [`pack`].
        for half in 0..BLOCK / 8 {
            let mut rows: [&mut [f32]; 8] = [&mut [], &mut [], &mut [], &mut [], &mut [], &mut [], &mut [], &mut []];
            for (row, plane) in rows.iter_mut().zip(planes[half * 8 * positions..].chunks_exact_mut(positions)) {
                *row = plane;
            }
            for (i, group) in groups.iter().enumerate() {
                let t = transpose_8(std::array::from_fn(|p| group[p].as_chunks::<8>().0[half]));
                for (row, channel) in rows.iter_mut().zip(&t) {
                    row[i * 8..][..8].copy_from_slice(channel);
                }
            }
        }
    }
    let done = if planes.len() == BLOCK * positions { groups.len() * 8 } else { 0 };
    for (l, plane) in planes.chunks_exact_mut(positions).enumerate() {
        for (v, lanes) in plane[done..].iter_mut().zip(&sums[done..]) {
            *v = lanes[l];
        }
    }
}

/// The transpose of an 8 × 8 block, in the three rounds of pairwise interleaves that
/// AVX's `unpck`, `shufps` and `vperm2f128` make (each round written as the lanes that
/// instruction picks, which the compiler turns into it).
#[inline(always)]
fn transpose_8(rows: [[f32; 8]; 8]) -> [[f32; 8]; 8] {
    let low = |a: [f32; 8], b: [f32; 8]| [a[0], b[0], a[1], b[1], a[4], b[4], a[5], b[5]];
    let high = |a: [f32; 8], b: [f32; 8]| [a[2], b[2], a[3], b[3], a[6], b[6], a[7], b[7]];
    let pairs_low = |a: [f32; 8], b: [f32; 8]| [a[0], a[1], b[0], b[1], a[4], a[5], b[4], b[5]];
    let pairs_high = |a: [f32; 8], b: [f32; 8]| [a[2], a[3], b[2], b[3], a[6], a[7], b[6], b[7]];
    let halves_low = |a: [f32; 8], b: [f32; 8]| [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]];
    let halves_high = |a: [f32; 8], b: [f32; 8]| [a[4], a[5], a[6], a[7], b[4], b[5], b[6], b[7]];
    let r = rows;
    let (t0, t1, t2, t3) = (low(r[0], r[1]), high(r[0], r[1]), low(r[2], r[3]), high(r[2], r[3]));
    let (t4, t5, t6, t7) = (low(r[4], r[5]), high(r[4], r[5]), low(r[6], r[7]), high(r[6], r[7]));
    let (u0, u1, u2, u3) = (pairs_low(t0, t2), pairs_high(t0, t2), pairs_low(t1, t3), pairs_high(t1, t3));
    let (u4, u5, u6, u7) = (pairs_low(t4, t6), pairs_high(t4, t6), pairs_low(t5, t7), pairs_high(t5, t7));
    [
        halves_low(u0, u4),
        halves_low(u1, u5),
        halves_low(u2, u6),
        halves_low(u3, u7),
        halves_high(u0, u4),
        halves_high(u1, u5),
        halves_high(u2, u6),
        halves_high(u3, u7),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_eight_by_eight_transpose_swaps_rows_and_columns() {
        let rows: [[f32; 8]; 8] = std::array::from_fn(|r| std::array::from_fn(|c| (r * 8 + c) as f32));
        let t = super::transpose_8(rows);
        for r in 0..8 {
            for c in 0..8 {
                assert_eq!(t[c][r], rows[r][c], "row {r}, column {c}");
            }
        }
    }
}
