//! Convolution of float32 maps over one or two spatial axes (the 3×3 and 5×5
//! convolutions of a CNN's body, strided or not, depthwise or not, a text or audio model's
//! 1-D ones), computed on the padded input without im2col.
//!
//! Each input channel is copied once into a zero-bordered plane with the output's rows
//! plus the kernel's reach (the grid, row pitch `P`). Output position `(oy, ox)` is then
//! grid position `q = oy·P + ox`, and kernel tap `(c, ky, kx)` reads the grid at `q` plus a
//! fixed offset `c·plane + ky·dy·P + kx·dx`: every tap of a run of consecutive `q` is a
//! contiguous stretch of the grid. So the convolution is a matrix product whose second
//! operand's rows are those stretches, read where they lie; a tile of four filters by
//! thirty-two positions sums in eight vector registers. Positions with `ox ≥ OW` (the
//! border columns of the grid) are computed and dropped: `OW/P` of the work is kept, 78 %
//! for a 5×5 convolution over 14×14 maps.
//!
//! Measured against the im2col path it replaces (one thread, the stretches of each im2col
//! row copied, then `matrixmultiply`): MNIST's 8→16 5×5 convolution over 14×14 25 → 8.5 µs;
//! the 96→24 3×3 convolutions of PP-OCR's detector over 80×80 94 → 177 GFLOP/s. On small
//! maps most of the old time was the copies: an im2col row of a 14-wide map is fourteen
//! stretches of at most fourteen values.
//!
//! With strides `(sy, sx)` the plane is split into `sy·sx` phases: padded input row `Y`
//! and column `X` go to phase `(Y mod sy, X mod sx)` at `(Y / sy, X / sx)`. Tap `(ky, kx)`
//! of output `(oy, ox)` reads padded `(oy·sy + ky·dy, ox·sx + kx·dx)`, which is phase
//! `(ky·dy mod sy, kx·dx mod sx)` at `(oy + ky·dy / sy, ox + kx·dx / sx)`: again grid
//! position `q` plus a fixed offset, so the tiles below do not know the stride. Strided
//! convolutions took im2col and the GEMM before, or for a depthwise one a multiply-add
//! loop per stretch of a row or the channels-last transposes. Measured with 20 such
//! convolutions side by side (`onnx run … --threads 1`, best of 900 runs), before → after:
//! depthwise 3×3 at stride 2 of 24 channels over 16×16 0.29 → 0.20 ms, of 96 channels over
//! 40×40 4.6 → 2.2 ms; 3×3 at stride 2 of 16 to 16 channels over 32×32 1.06 → 0.63 ms,
//! of 3 to 8 channels 0.23 → 0.13 ms.

use super::Window;

/// One convolution as the grid sees it: its sizes, and its one or two spatial axes as
/// two (a 1-D convolution is a 2-D one over a single row).
pub(super) struct GridConv<'a> {
    batch: usize,
    channels: usize,
    filters: usize,
    group: usize,
    bias: Option<&'a [f64]>,
    /// Input rows and columns.
    spatial: [usize; 2],
    kernel: [usize; 2],
    strides: [usize; 2],
    dilations: [usize; 2],
    /// Padding above and left of the input.
    begin: [usize; 2],
    /// Output rows and columns.
    out: [usize; 2],
}

/// Filters per tile.
const ROWS: usize = 4;
/// Grid positions per tile (two sixteen-lane vectors), with AVX-512; with AVX2 sixteen,
/// so that the sums fit its sixteen registers.
const WIDE: usize = 32;
const NARROW: usize = 16;
/// Grid positions whose tiles are made for every filter before the next ones (the
/// stretches they read stay in the cache across the filters).
const CHUNK: usize = 512;
/// Multiply-adds below which the output is not shared among the cores.
const MIN_SHARED: usize = 1 << 20;

impl<'a> GridConv<'a> {
    /// The convolution `(batch, channels, filters, group)` of input maps `spatial` through
    /// `win`, if the grid computes it: one or two spatial axes, a kernel of more than one
    /// tap, fused multiply-adds, a shape where
    /// it pays ([`GridConv::pays`]), and a grid not much larger than the input and output
    /// (huge dilations or pads would make a huge grid of zeros).
    pub(super) fn new(
        (batch, channels, filters, group): (usize, usize, usize, usize),
        spatial: &[usize],
        win: &Window,
        bias: Option<&'a [f64]>,
    ) -> Option<GridConv<'a>> {
        let two = |v: &[usize], lead: usize| match *v {
            [x] => Some([lead, x]),
            [y, x] => Some([y, x]),
            _ => None,
        };
        let g = GridConv {
            batch,
            channels,
            filters,
            group,
            bias,
            spatial: two(spatial, 1)?,
            kernel: two(&win.kernel, 1)?,
            strides: two(&win.strides, 1)?,
            dilations: two(&win.dilations, 1)?,
            begin: two(&win.begin, 0)?,
            out: two(&win.out, 1)?,
        };
        if g.kernel.contains(&0) || g.strides.contains(&0) || g.kernel == [1, 1] {
            return None;
        }
        if group == 0 || filters / group == 0 || !crate::simd::has_fma() || !g.pays(filters / group) {
            return None;
        }
        let (rows, pitch) = g.grid();
        let grid = rows.checked_mul(pitch)?.checked_mul(g.phases())?;
        let input = g.spatial[0].checked_mul(g.spatial[1])?;
        (grid <= 2 * (input + g.positions()) + 4096).then_some(g)
    }

    /// Whether the grid is faster than im2col and the GEMM for `filters` filters per
    /// group. Not for fewer than four output positions (a tile of 32 would be mostly
    /// dropped lanes; the GEMM's dot products take them). And not for a product that is
    /// big on every side (more than 48 filters, rows longer than 16 and more than 48
    /// positions): there `matrixmultiply`'s packed panels, a larger register tile than
    /// this one's, make up for the im2col copy. Measured with `onnx run … --threads 1`
    /// against the grid everywhere: a dilated 1-D convolution of 128 filters over 7,500
    /// positions (spindle_eeg) 65 ms instead of 82, MTCNN's 64 filters over 21×21 maps
    /// 0.39 ms instead of 0.41; deepcut's 100–200 filters over rows of 12–20 positions
    /// gain from the grid (0.27 → 0.25 ms), as do espcn's 64 over 4×4 maps.
    fn pays(&self, filters: usize) -> bool {
        let positions = self.positions();
        positions >= 4 && (filters <= 48 || self.out[1] <= 16 || positions <= 48)
    }

    fn per_group(&self) -> usize {
        self.channels / self.group
    }

    fn filters_per_group(&self) -> usize {
        self.filters / self.group
    }

    fn positions(&self) -> usize {
        self.out[0] * self.out[1]
    }

    /// The rows and row pitch of one phase of the grid: the output's extent plus the
    /// kernel's reach in that phase.
    fn grid(&self) -> (usize, usize) {
        let reach = |i: usize| self.dilations[i] * (self.kernel[i] - 1) / self.strides[i];
        (self.out[0] + reach(0), self.out[1] + reach(1))
    }

    /// The phases of a channel's plane: one per pair of row and column remainders.
    fn phases(&self) -> usize {
        self.strides[0] * self.strides[1]
    }

    /// Where kernel tap `(ky, kx)` of a channel reads, from the start of the channel's
    /// phases (each `rows × pitch`).
    fn tap_offset(&self, (ky, kx): (usize, usize), (rows, pitch): (usize, usize)) -> usize {
        let ([sy, sx], [dy, dx]) = (self.strides, self.dilations);
        let phase = (ky * dy % sy) * sx + kx * dx % sx;
        phase * rows * pitch + ky * dy / sy * pitch + kx * dx / sx
    }

    /// How many shares the output positions are cut into on `cores` cores.
    pub(super) fn shares(&self, cores: usize) -> usize {
        let taps = self.per_group() * self.kernel[0] * self.kernel[1];
        let work = self.batch * self.filters * taps * self.positions();
        cores.min(work / MIN_SHARED).clamp(1, self.positions().div_ceil(WIDE).max(1))
    }
}

/// The output (batch × filters × output positions) of input `x` under weights `w`, the
/// output positions spread over up to `shares` shares.
pub(super) fn grid_conv_2d(x: &[f32], w: &[f32], g: &GridConv<'_>, shares: usize) -> Vec<f32> {
    let lanes = if crate::simd::has_avx512() { WIDE } else { NARROW };
    grid_conv_in_tiles_of(x, w, g, shares, lanes)
}

/// [`grid_conv_2d`] with tiles of `lanes` positions ([`WIDE`] or [`NARROW`]; the tests
/// run both on any machine).
pub(super) fn grid_conv_in_tiles_of(x: &[f32], w: &[f32], g: &GridConv<'_>, shares: usize, lanes: usize) -> Vec<f32> {
    let (per_group, filters_per_group) = (g.per_group(), g.filters_per_group());
    let in_size = g.spatial[0] * g.spatial[1];
    let (ow, positions) = (g.out[1], g.positions());
    let (grid_rows, pitch) = g.grid();
    let plane = g.phases() * grid_rows * pitch;
    // Zero borders, and slack past the last plane for the dropped lanes of the last tile.
    let mut grid = vec![0.0f32; per_group * plane + SPAN];
    // Where tap (c, ky, kx) reads, in the weights' order.
    let mut offsets = Vec::with_capacity(per_group * g.kernel[0] * g.kernel[1]);
    for c in 0..per_group {
        for ky in 0..g.kernel[0] {
            for kx in 0..g.kernel[1] {
                offsets.push(c * plane + g.tap_offset((ky, kx), (grid_rows, pitch)));
            }
        }
    }
    let taps = offsets.len();
    let shares = shares.clamp(1, positions.max(1));
    let per_share = positions.div_ceil(shares).max(1);
    let layout = Layout { pitch, out_width: ow, lanes };
    // Each group's output positions cut into shares, the same cut for every group.
    let jobs: Vec<std::ops::Range<usize>> =
        (0..positions).step_by(per_share).map(|p| p..(p + per_share).min(positions)).collect();
    let mut out = vec![0.0f32; g.batch * g.filters * positions];
    if g.channels * in_size == 0 {
        // No input values (no channels, or an empty map under padding): every output is
        // its filter's bias.
        for (f, plane) in out.chunks_exact_mut(positions.max(1)).enumerate() {
            plane.fill(g.bias.and_then(|b| b.get(f % g.filters.max(1))).copied().unwrap_or(0.0) as f32);
        }
        return out;
    }
    for (b, image) in x.chunks_exact((g.channels * in_size).max(1)).take(g.batch).enumerate() {
        for group in 0..g.group {
            let planes = &image[group * per_group * in_size..][..per_group * in_size];
            fill_grid(&mut grid, planes, g, (grid_rows, pitch));
            let first = group * filters_per_group;
            let weights = &w[first * taps..][..filters_per_group * taps];
            let bias: Vec<f32> = (first..first + filters_per_group)
                .map(|f| g.bias.and_then(|b| b.get(f)).copied().unwrap_or(0.0) as f32)
                .collect();
            let block = &mut out[(b * g.filters + first) * positions..][..filters_per_group * positions];
            let source = Source { grid: &grid, offsets: &offsets, weights, bias: &bias };
            if shares == 1 {
                source.positions(&layout, 0..positions, block);
                continue;
            }
            let parts = onnx_threads::map_in_order(jobs.clone(), |range| {
                let mut part = vec![0.0f32; filters_per_group * range.len()];
                source.positions(&layout, range, &mut part);
                part
            });
            for (range, part) in jobs.iter().zip(parts) {
                for (f, values) in part.chunks_exact(range.len()).enumerate() {
                    block[f * positions + range.start..][..range.len()].copy_from_slice(values);
                }
            }
        }
    }
    crate::gemm::count_flops(2 * g.batch * g.filters * taps * positions);
    out
}

/// Grid positions a one-filter tile covers at most (the grid's slack): four stretches of [`WIDE`].
const SPAN: usize = 4 * WIDE;

/// The sums of one filter over four stretches of `LANES` grid positions from `q0`, into
/// `out` (summed in a local array, stored once, as in [`tile`]): for a group of one
/// filter (a depthwise convolution) eight sums in flight, where [`tile`] would compute
/// three dropped filters.
#[inline(always)]
fn single_filter_tile<const LANES: usize>(
    grid: &[f32],
    offsets: &[usize],
    weights: &[f32],
    q0: usize,
    out: &mut [[f32; LANES]; 4],
) {
    let mut sums = [[0.0f32; LANES]; 4];
    for (&offset, &factor) in offsets.iter().zip(weights) {
        // Always inside: the grid has a tile's slack past its plane.
        let line = &grid[q0 + offset..q0 + offset + 4 * LANES];
        #[allow(clippy::needless_range_loop)]
        for r in 0..4 {
            for l in 0..LANES {
                sums[r][l] = factor.mul_add(line[r * LANES + l], sums[r][l]);
            }
        }
    }
    *out = sums;
}

/// Copies one group's input planes into the grid's interiors, each input value into its
/// phase (the borders stay zero). Values no tap reads (past the last output's window) are
/// left out.
fn fill_grid(grid: &mut [f32], planes: &[f32], g: &GridConv<'_>, (grid_rows, pitch): (usize, usize)) {
    let [h, width] = g.spatial;
    let [top, left] = g.begin;
    let [sy, sx] = g.strides;
    let phase = grid_rows * pitch;
    let plane = g.phases() * phase;
    if [sy, sx] == [1, 1] {
        // Stride 1 keeps a plain copy per row: through the phase loop below it was slower
        // (20 depthwise convolutions over 16×16 maps 0.142 → 0.163 ms).
        // Input columns that land inside the grid (a stride-1 window never reaches past it,
        // but the bound is cheap).
        let columns = width.min(pitch.saturating_sub(left));
        for (c, input) in planes.chunks_exact((h * width).max(1)).enumerate() {
            let channel = &mut grid[c * plane..][..plane];
            for (y, row) in input.chunks_exact(width.max(1)).enumerate().take(grid_rows.saturating_sub(top)) {
                channel[(y + top) * pitch + left..][..columns].copy_from_slice(&row[..columns]);
            }
        }
        return;
    }
    // Per column phase: the first input column in it, where that column lands in the
    // phase's rows, and how many of the row's values land inside them. Worked out once:
    // a division per row and phase was a third of a small strided convolution's time.
    let column_phases: Vec<(usize, usize, usize)> = (0..sx)
        .filter_map(|column_phase| {
            let first = (column_phase + sx - left % sx) % sx;
            let start = (first + left) / sx;
            let count = width.checked_sub(first)?.div_ceil(sx).min(pitch.saturating_sub(start));
            Some((first, column_phase * phase + start, count))
        })
        .collect();
    for (c, input) in planes.chunks_exact((h * width).max(1)).enumerate() {
        let channel = &mut grid[c * plane..][..plane];
        // The row of the first input row within its phase, and its phase.
        let (mut phase_row, mut row_phase) = (top / sy, top % sy);
        for row in input.chunks_exact(width.max(1)) {
            if phase_row >= grid_rows {
                break;
            }
            let row_start = row_phase * sx * phase + phase_row * pitch;
            for &(first, at, count) in &column_phases {
                let target = &mut channel[row_start + at..][..count];
                every_nth(target, &row[first..], sx);
            }
            row_phase += 1;
            if row_phase == sy {
                (row_phase, phase_row) = (0, phase_row + 1);
            }
        }
    }
}

/// `target[i] = source[i·n]` for every `i` of `target` (the caller guarantees `source`
/// holds them). Strides 2 and 3 as constants, read in whole chunks (the compiler unrolls
/// them, with no stride bookkeeping per value): an iterator stepping by a run-time stride
/// was half of a small strided depthwise convolution's profile.
#[inline(always)]
fn every_nth(target: &mut [f32], source: &[f32], n: usize) {
    #[inline(always)]
    fn by<const N: usize>(target: &mut [f32], source: &[f32]) {
        let whole = target.len().min(source.len() / N);
        for (slot, chunk) in target[..whole].iter_mut().zip(source.chunks_exact(N)) {
            *slot = chunk[0];
        }
        for (i, slot) in target.iter_mut().enumerate().skip(whole) {
            *slot = source[i * N];
        }
    }
    match n {
        1 => target.copy_from_slice(&source[..target.len()]),
        2 => by::<2>(target, source),
        3 => by::<3>(target, source),
        _ => {
            for (slot, &v) in target.iter_mut().zip(source.iter().step_by(n)) {
                *slot = v;
            }
        }
    }
}

/// How grid positions map to output positions.
struct Layout {
    pitch: usize,
    out_width: usize,
    lanes: usize,
}

/// What one group's products read: the grid, the taps' offsets, the group's weights
/// (a row of taps per filter) and biases.
struct Source<'a> {
    grid: &'a [f32],
    offsets: &'a [usize],
    weights: &'a [f32],
    bias: &'a [f32],
}

impl Source<'_> {
    /// Output positions `range` (row-major) of every filter into `block` (filters ×
    /// positions).
    fn positions(&self, layout: &Layout, range: std::ops::Range<usize>, block: &mut [f32]) {
        if layout.lanes == WIDE {
            crate::simd::widest(
                #[inline(always)]
                || self.tiles::<WIDE>(layout, range, block),
            )
        } else {
            crate::simd::widest(
                #[inline(always)]
                || self.tiles::<NARROW>(layout, range, block),
            )
        }
    }

    #[inline(always)]
    fn tiles<const LANES: usize>(&self, layout: &Layout, range: std::ops::Range<usize>, block: &mut [f32]) {
        let (pitch, ow) = (layout.pitch, layout.out_width);
        let taps = self.offsets.len();
        let filters = self.bias.len();
        if range.is_empty() || ow == 0 || filters == 0 {
            return;
        }
        let span = range.len();
        // The grid position of an output position.
        let at = |p: usize| p / ow * pitch + p % ow;
        let (start, end) = (at(range.start), at(range.end - 1) + 1);
        if filters == 1 {
            let mut sums = [[0.0f32; LANES]; 4];
            for q0 in (start..end).step_by(4 * LANES) {
                single_filter_tile::<LANES>(self.grid, self.offsets, self.weights, q0, &mut sums);
                for (r, sum) in sums.iter().enumerate() {
                    let first = q0 + r * LANES;
                    if first < end {
                        emit(sum, first..(first + LANES).min(end), (range.start, pitch, ow), self.bias[0], block);
                    }
                }
            }
            return;
        }
        let mut sums = [[0.0f32; LANES]; ROWS];
        for chunk in (start..end).step_by(CHUNK) {
            let chunk_end = (chunk + CHUNK).min(end);
            for f0 in (0..filters).step_by(ROWS) {
                // Missing filters repeat the last one; their sums are dropped.
                let weights: [&[f32]; ROWS] =
                    std::array::from_fn(|r| &self.weights[(f0 + r).min(filters - 1) * taps..][..taps]);
                for q0 in (chunk..chunk_end).step_by(LANES) {
                    tile::<LANES>(weights, self.grid, self.offsets, q0, &mut sums);
                    for (r, sum) in sums.iter().enumerate().take(filters - f0) {
                        let f = f0 + r;
                        let out = &mut block[f * span..][..span];
                        let lanes = q0..q0 + LANES.min(chunk_end - q0);
                        emit(sum, lanes, (range.start, pitch, ow), self.bias[f], out);
                    }
                }
            }
        }
    }
}

/// Writes the sums of grid positions `lanes` that are output positions (plus the bias)
/// into `out`, one filter's output positions from `first` on.
#[inline(always)]
fn emit(
    sums: &[f32],
    lanes: std::ops::Range<usize>,
    (first, pitch, ow): (usize, usize, usize),
    bias: f32,
    out: &mut [f32],
) {
    let (q0, end) = (lanes.start, lanes.end);
    let (mut row, mut column) = (q0 / pitch, q0 % pitch);
    let mut q = q0;
    while q < end {
        let n = ow.saturating_sub(column).min(end - q);
        // Lanes in a row's dropped columns (a tile can start there when the kernel reaches
        // further than the output is wide) write nothing; their place would lie past `out`.
        if n > 0 {
            let at = row * ow + column - first;
            for (o, &s) in out[at..at + n].iter_mut().zip(&sums[q - q0..]) {
                *o = s + bias;
            }
        }
        q += pitch - column;
        row += 1;
        column = 0;
    }
}

/// Four filters' sums over `LANES` grid positions from `q0`, into `out`: per tap, one
/// stretch of the grid and four broadcast weights. Apart, and inlined into the vector
/// copies, so that the sums stay in registers: summed in a local array whose address is
/// never taken, then stored once (summed in the caller's array, they were stored to memory
/// on every tap).
#[inline(always)]
fn tile<const LANES: usize>(
    weights: [&[f32]; ROWS],
    grid: &[f32],
    offsets: &[usize],
    q0: usize,
    out: &mut [[f32; LANES]; ROWS],
) {
    let mut sums = [[0.0f32; LANES]; ROWS];
    let taps = offsets.len();
    let weights = weights.map(|w| &w[..taps]);
    for (k, &offset) in offsets.iter().enumerate() {
        // Always inside: the grid has a tile's slack past its last plane.
        let line = &grid[q0 + offset..q0 + offset + LANES];
        // Indexed loops: written with iterators the sums were kept on the stack.
        #[allow(clippy::needless_range_loop)]
        for r in 0..ROWS {
            let factor = weights[r][k];
            for l in 0..LANES {
                sums[r][l] = factor.mul_add(line[l], sums[r][l]);
            }
        }
    }
    *out = sums;
}
