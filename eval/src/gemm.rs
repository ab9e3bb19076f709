//! Matrix products of f32 and f64 matrices through `matrixmultiply` (bluss; BLIS-style
//! packing and register blocking, runtime AVX/FMA dispatch, arbitrary strides, pure Rust: the
//! GEMM behind ndarray). Chosen over the plain loops the kernels started with because a
//! convolution or a dense layer spends nearly all its time here; strides let Gemm's
//! transposes cost nothing.
//!
//! The crate's entry points are `unsafe` (raw pointers and strides); this module is the only
//! place that calls them, after checking that every element the strides reach lies inside
//! the slices.

use crate::error::{KernelError, bad_input};
use std::sync::atomic::{AtomicU64, Ordering};

/// A matrix read from a slice with row and column strides (in elements).
#[derive(Clone, Copy, Debug)]
pub struct View<'a, T> {
    pub data: &'a [T],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a, T> View<'a, T> {
    /// A row-major matrix.
    pub fn rows(data: &'a [T], rows: usize, cols: usize) -> View<'a, T> {
        View { data, rows, cols, row_stride: cols, col_stride: 1 }
    }

    /// The same matrix transposed (no copy).
    pub fn t(self) -> View<'a, T> {
        View { rows: self.cols, cols: self.rows, row_stride: self.col_stride, col_stride: self.row_stride, ..self }
    }

    /// Whether every element the strides reach lies inside the slice.
    fn fits(&self) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        let last = (self.rows - 1).checked_mul(self.row_stride).zip((self.cols - 1).checked_mul(self.col_stride));
        last.and_then(|(r, c)| r.checked_add(c)).is_some_and(|end| end < self.data.len())
            && isize::try_from(self.row_stride).is_ok()
            && isize::try_from(self.col_stride).is_ok()
    }
}

/// Counts `flops` floating-point operations of a matrix product done outside this module
/// (a single-filter convolution's weighted sum), for the profile's rates.
pub fn count_flops(flops: usize) {
    FLOPS.fetch_add(flops as u64, Ordering::Relaxed);
}

macro_rules! gemm {
    ($name:ident, $t:ty, $call:path, $what:literal) => {
        #[doc = concat!("`c = alpha·a·b + beta·c` for ", $what, ", `c` row-major `a.rows × b.cols`.")]
        pub fn $name(alpha: $t, a: View<'_, $t>, b: View<'_, $t>, beta: $t, c: &mut [$t]) -> Result<(), KernelError> {
            let (m, k, n) = check(&a, &b, c.len())?;
            if m == 0 || n == 0 {
                return Ok(());
            }
            if k == 0 {
                c.iter_mut().for_each(|x| *x *= beta);
                return Ok(());
            }
            FLOPS.fetch_add(2 * (m as u64) * (k as u64) * (n as u64), Ordering::Relaxed);
            // Chosen for the whole product, so that every band is computed the same way
            // (a band of one row taken as a thin product would round differently from the
            // others, and the bits would depend on the number of cores).
            let direct = unpacked_is_faster(&a, &b);
            let thin = m == 1 || (n == 1 && a.col_stride == 1 && b.row_stride == 1);
            // The product of `rows` rows of `a` from `first` on, into `c` (those rows of the
            // result).
            let product = |first: usize, rows: usize, c: &mut [$t]| {
                let a = View { data: &a.data[first * a.row_stride..], rows, ..a };
                check(&a, &b, c.len())?;
                if (thin && thin_product(alpha, &a, &b, beta, c)) || narrow_product(alpha, &a, &b, beta, c) {
                    return Ok(());
                }
                if direct {
                    blocked_product(alpha, &a, &b, beta, c);
                    return Ok(());
                }
                // SAFETY: `check` verified that `a` (rows×k) and `b` (k×n) reach only
                // elements inside their slices with these strides, that `c` holds exactly
                // rows×n elements (row stride n, column stride 1), and that every stride fits
                // in an isize; `c` is borrowed mutably, so it overlaps neither input.
                #[allow(unsafe_code)]
                unsafe {
                    $call(
                        rows,
                        k,
                        n,
                        alpha,
                        a.data.as_ptr(),
                        a.row_stride as isize,
                        a.col_stride as isize,
                        b.data.as_ptr(),
                        b.row_stride as isize,
                        b.col_stride as isize,
                        beta,
                        c.as_mut_ptr(),
                        n as isize,
                        1,
                    );
                }
                Ok(())
            };
            // A big product is cut into bands of rows, one per core: each band of `c` is the
            // product of the same band of `a` with all of `b`, computed as the whole would
            // compute it (the sum over k runs in the same order).
            let rows = m.div_ceil(bands(m, k, n));
            in_bands(c, rows * n, |i, c| product(i * rows, c.len() / n, c))
        }
    };
}

/// A product with one column (matrix × vector) or one row (vector × matrix) over contiguous
/// data, done directly: packing the matrix into panels, as a GEMM does to reuse each element
/// many times, is pure cost when each element is used once (a convolution over one position,
/// a dense layer on one row: 60 % of a small sequence model's time). `false` when the
/// product is of neither shape, for the GEMM. The caller has checked the views.
fn thin_product<T: Element>(alpha: T, a: &View<'_, T>, b: &View<'_, T>, beta: T, c: &mut [T]) -> bool {
    let k = a.cols;
    if b.cols == 1 && a.col_stride == 1 && b.row_stride == 1 {
        let column = &b.data[..k];
        for (i, out) in c.iter_mut().enumerate() {
            let row = &a.data[i * a.row_stride..][..k];
            *out = T::scaled(alpha, T::dot(row, column), beta, *out);
        }
        return true;
    }
    // A row times a transposed matrix (a transpose read in place, `crate::view`): each
    // column of `b` lies contiguous, a dot product with the row.
    if a.rows == 1 && a.col_stride == 1 && b.row_stride == 1 && b.cols > 1 {
        let row = &a.data[..k];
        for (j, out) in c.iter_mut().enumerate() {
            let column = &b.data[j * b.col_stride..][..k];
            *out = T::scaled(alpha, T::dot(row, column), beta, *out);
        }
        return true;
    }
    if a.rows == 1 && b.col_stride == 1 {
        let n = b.cols;
        let mut sums = vec![T::default(); n];
        T::combine_rows(&mut sums, |j| a.data[j * a.col_stride], |j| &b.data[j * b.row_stride..][..n], k);
        for (out, sum) in c.iter_mut().zip(sums) {
            *out = T::scaled(alpha, sum, beta, *out);
        }
        return true;
    }
    false
}

/// Columns of `b` at most this many, over rows of `a` at least [`NARROW_DEPTH`] long, are
/// products of [`narrow_product`] (five to eight in two groups of four: a recurrent
/// model's five-class output layer over 150 or 200 values filled five of the sixteen
/// lanes of [`blocked_product`]'s tiles).
const NARROW_COLUMNS: usize = 8;
const NARROW_DEPTH: usize = 64;

/// A product with two to [`NARROW_COLUMNS`] columns (four at a time) and long rows (a pointwise convolution
/// over a 2×2 map: 384 filters of 384 channels times 4 positions), as dot products: the
/// columns of `b` copied into rows, then per pair of rows of `a` every column's dot product
/// at once, in eight-lane sums. The tiles of [`blocked_product`], which took them before,
/// are sixteen columns wide, three quarters of their multiply-adds dropped for four
/// columns: 20 such convolutions took 1.92 ms, now 0.98 (onnxruntime 0.76). `false` for
/// other shapes.
fn narrow_product<T: Element>(alpha: T, a: &View<'_, T>, b: &View<'_, T>, beta: T, c: &mut [T]) -> bool {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if !(2..=NARROW_COLUMNS).contains(&n) || k < NARROW_DEPTH || a.col_stride != 1 || !crate::simd::has_fma() {
        return false;
    }
    // The columns of `b` as rows: read in place where they lie contiguous (a transposed
    // weight, as Gemm's transB gives it), else copied row by row of `b` (column by column,
    // each read waited on the one before: a sixth of a 13×150 by 150×5 product).
    let (columns, column_stride) = if b.row_stride == 1 {
        (std::borrow::Cow::Borrowed(b.data), b.col_stride)
    } else {
        let mut columns = vec![T::ZERO; n * k];
        for kk in 0..k {
            let line = &b.data[kk * b.row_stride..];
            for j in 0..n {
                columns[j * k + kk] = line[j * b.col_stride];
            }
        }
        (std::borrow::Cow::Owned(columns), k)
    };
    // Missing columns repeat the last one; their sums are dropped.
    let column = |j: usize| &columns[j.min(n - 1) * column_stride..][..k];
    crate::simd::widest(
        #[inline(always)]
        || {
            for i0 in (0..m).step_by(2) {
                let second = (i0 + 1).min(m - 1);
                let rows = [&a.data[i0 * a.row_stride..][..k], &a.data[second * a.row_stride..][..k]];
                // Four columns at a time.
                for j0 in (0..n).step_by(4) {
                    let group = [column(j0), column(j0 + 1), column(j0 + 2), column(j0 + 3)];
                    let sums = row_pair_dots(rows, group);
                    for (r, row_sums) in sums.iter().enumerate().take(m - i0) {
                        let out = &mut c[(i0 + r) * n + j0..(i0 + r + 1) * n];
                        for (o, &s) in out.iter_mut().zip(row_sums) {
                            *o = T::scaled(alpha, s, beta, *o);
                        }
                    }
                }
            }
        },
    );
    true
}

/// The dot products of two rows with four columns (all `k` long), each summed in eight
/// lanes: eight sums in registers, six vectors read per eight multiply-adds.
#[inline(always)]
fn row_pair_dots<T: Element>(rows: [&[T]; 2], columns: [&[T]; 4]) -> [[T; 4]; 2] {
    let mut lanes = [[[T::ZERO; 8]; 4]; 2];
    let rows8 = rows.map(|r| r.as_chunks::<8>().0);
    let columns8 = columns.map(|c| c.as_chunks::<8>().0);
    for step in 0..rows8[0].len() {
        for (r, row) in rows8.iter().enumerate() {
            let x = &row[step];
            for (j, column) in columns8.iter().enumerate() {
                let y = &column[step];
                for l in 0..8 {
                    lanes[r][j][l] = x[l].mul_add(y[l], lanes[r][j][l]);
                }
            }
        }
    }
    // As in [`dot_in_lanes`]: the lanes' sum kept out of the loop.
    let lanes = std::hint::black_box(lanes);
    let whole = rows8[0].len() * 8;
    let mut sums = [[T::ZERO; 4]; 2];
    for (r, row) in rows.iter().enumerate() {
        for (j, column) in columns.iter().enumerate() {
            let mut sum = lanes[r][j].iter().fold(T::ZERO, |acc, &v| acc + v);
            for (&x, &y) in row[whole..].iter().zip(&column[whole..]) {
                sum = x.mul_add(y, sum);
            }
            sums[r][j] = sum;
        }
    }
    sums
}

/// Columns of `b` at most this many (a convolution over a small image: espcn's 4×4
/// planes give 16), or rows of `a` at most [`FEW_ROWS`] (a sequence model's few tokens
/// times a weight matrix): then packing both operands into panels, as the GEMM does on
/// every call, costs as much as the product, and [`blocked_product`] reads them in place.
const FEW_COLUMNS: usize = 48;
const FEW_ROWS: usize = 8;

/// Whether `a·b` is computed by [`blocked_product`]: a narrow product over rows that lie
/// contiguous, on a processor with fused multiply-adds.
fn unpacked_is_faster<T>(a: &View<'_, T>, b: &View<'_, T>) -> bool {
    (b.cols <= FEW_COLUMNS || a.rows <= FEW_ROWS) && a.col_stride == 1 && b.col_stride == 1 && crate::simd::has_fma()
}

/// `c = alpha·a·b + beta·c` without packing: tiles of six rows of `c` by sixteen
/// columns, each summed over `k` in sixteen-lane registers from the rows of `a` and `b`
/// where they lie (six broadcasts and one row of `b` per step). Both views have column
/// stride 1; the caller has checked them.
fn blocked_product<T: Element>(alpha: T, a: &View<'_, T>, b: &View<'_, T>, beta: T, c: &mut [T]) {
    // Six rows of sixteen sums: twelve of AVX2's sixteen vector registers, as in BLIS's
    // Haswell kernel (four rows read each row of `b` for only eight multiply-adds).
    const ROWS: usize = 6;
    const LANES: usize = 16;
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let a_row = |i: usize| &a.data[i * a.row_stride..][..k];
    // The last columns, fewer than sixteen, copied into a strip padded with zeros.
    let mut strip = Vec::new();
    crate::simd::widest(
        #[inline(always)]
        || {
            for j0 in (0..n).step_by(LANES) {
                let width = LANES.min(n - j0);
                let (columns, stride) = if width == LANES {
                    (&b.data[j0..], b.row_stride)
                } else {
                    strip.clear();
                    strip.resize(k * LANES, T::ZERO);
                    for (kk, line) in strip.chunks_exact_mut(LANES).enumerate() {
                        line[..width].copy_from_slice(&b.data[kk * b.row_stride + j0..][..width]);
                    }
                    (&strip[..], LANES)
                };
                let mut store = |i0: usize, sums: &[[T; LANES]]| {
                    for (r, sum) in sums.iter().enumerate() {
                        let out = &mut c[(i0 + r) * n + j0..][..width];
                        for (o, &s) in out.iter_mut().zip(sum) {
                            *o = T::scaled(alpha, s, beta, *o);
                        }
                    }
                };
                for i0 in (0..m).step_by(ROWS) {
                    // The last rows, fewer than six, in a tile of their height (repeating
                    // a row there was up to three quarters of a five-row product's work).
                    let row = |r: usize| a_row(i0 + r);
                    match m - i0 {
                        1 => store(i0, &full_tile([row(0)], columns, stride)),
                        2 => store(i0, &full_tile([row(0), row(1)], columns, stride)),
                        3 => store(i0, &full_tile([row(0), row(1), row(2)], columns, stride)),
                        4 => store(i0, &full_tile([row(0), row(1), row(2), row(3)], columns, stride)),
                        5 => store(i0, &full_tile([row(0), row(1), row(2), row(3), row(4)], columns, stride)),
                        _ => store(i0, &full_tile([row(0), row(1), row(2), row(3), row(4), row(5)], columns, stride)),
                    }
                }
            }
        },
    )
}

/// One whole tile of [`blocked_product`]: `R` rows of `a` (at most six, each `k` long)
/// times sixteen columns of `b` (`b[kk·stride..][..16]`). Apart so that the compiler keeps
/// the sixteen sums of a row in one vector register (inside the loop over tiles it kept 64
/// scalars).
#[inline(always)]
fn full_tile<T: Element, const R: usize>(rows: [&[T]; R], b: &[T], stride: usize) -> [[T; 16]; R] {
    let mut sums = [[T::ZERO; 16]; R];
    for kk in 0..rows[0].len() {
        let Some(line) = b.get(kk * stride..kk * stride + 16).and_then(|l| <&[T; 16]>::try_from(l).ok()) else {
            break;
        };
        for (sum, row) in sums.iter_mut().zip(&rows) {
            let factor = row[kk];
            for (s, &v) in sum.iter_mut().zip(line) {
                *s = factor.mul_add(v, *s);
            }
        }
    }
    sums
}

/// The dot product of two rows, summed in sixteen lanes (one running sum would wait on each
/// addition).
#[inline(always)]
fn dot_in_lanes<T: Element>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::ZERO; 16];
    // Read as arrays of sixteen, so that each step is whole vectors.
    let ((a16, a_rest), (b16, b_rest)) = (a.as_chunks::<16>(), b.as_chunks::<16>());
    let mut tail = T::ZERO;
    for (&x, &y) in a_rest.iter().zip(b_rest) {
        tail = tail + x * y;
    }
    for (x, y) in a16.iter().zip(b16) {
        for l in 0..16 {
            lanes[l] = lanes[l] + x[l] * y[l];
        }
    }
    // Without the barrier the compiler fused the lanes' sum below into the loop and
    // compiled it two lanes at a time: 196 dot products of 432 values (a sequence model's
    // convolution over one position) took 10 µs, now 3.
    let mut lanes = std::hint::black_box(lanes);
    let mut width = 16;
    while width > 1 {
        width /= 2;
        for l in 0..width {
            lanes[l] = lanes[l] + lanes[l + width];
        }
    }
    lanes[0] + tail
}

/// What the direct products need of an element type.
trait Element: Copy + Default + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + PartialEq {
    const ZERO: Self;
    const ONE: Self;

    /// `self·b + c` rounded once (one instruction where [`crate::simd::has_fma`]).
    fn mul_add(self, b: Self, c: Self) -> Self;

    /// `alpha·product + beta·old`, not reading `old` when `beta` is zero (as a GEMM
    /// overwrites its output then, whatever it held).
    #[inline(always)]
    fn scaled(alpha: Self, product: Self, beta: Self, old: Self) -> Self {
        let p = if alpha == Self::ONE { product } else { alpha * product };
        if beta == Self::ZERO { p } else { p + beta * old }
    }

    /// The dot product of two rows ([`dot_in_lanes`]), compiled for the widest vectors the
    /// processor has.
    fn dot(a: &[Self], b: &[Self]) -> Self {
        crate::simd::widest(
            #[inline(always)]
            || dot_in_lanes(a, b),
        )
    }

    /// `sums += Σ scale(j)·row(j)` over `j < rows`, in order of `j`, all in one call
    /// compiled for the widest vectors (a call per row cost as much as the row's work on
    /// the small products of a loop body).
    fn combine_rows<'r>(
        sums: &mut [Self],
        scale: impl Fn(usize) -> Self,
        row: impl Fn(usize) -> &'r [Self],
        rows: usize,
    ) where
        Self: 'r,
    {
        crate::simd::widest(
            #[inline(always)]
            || {
                for j in 0..rows {
                    let (factor, values) = (scale(j), row(j));
                    for (s, &r) in sums.iter_mut().zip(values) {
                        *s = *s + factor * r;
                    }
                }
            },
        )
    }
}

impl Element for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;

    #[inline(always)]
    fn mul_add(self, b: f32, c: f32) -> f32 {
        f32::mul_add(self, b, c)
    }
}

impl Element for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;

    #[inline(always)]
    fn mul_add(self, b: f64, c: f64) -> f64 {
        f64::mul_add(self, b, c)
    }
}

gemm!(sgemm, f32, matrixmultiply::sgemm, "f32");
gemm!(dgemm, f64, matrixmultiply::dgemm, "f64");

/// Floating-point operations of every matrix product so far (2·m·k·n each), for the
/// per-node rates of a profile. Process-wide: runs at the same time in one process would
/// count each other's work.
pub static FLOPS: AtomicU64 = AtomicU64::new(0);

/// Products of fewer multiply-adds than this run on the calling thread: handing a band over
/// costs more than computing it.
const MIN_PARALLEL: usize = 1 << 20;

/// How many bands of rows an `m×k` by `k×n` product is cut into (1: not cut).
pub(crate) fn bands(m: usize, k: usize, n: usize) -> usize {
    let work = m.saturating_mul(k).saturating_mul(n);
    if work < MIN_PARALLEL || onnx_threads::pool().is_none() || crate::shares::in_a_share() {
        return 1;
    }
    onnx_threads::cores().min(m).min(work / MIN_PARALLEL).max(1)
}

/// Runs `band(i, chunk)` over the chunks of `c` of `len` elements, the first on this thread
/// and the others on the pool's threads (`onnx_threads::map_in_order`, whose wait runs
/// queued work when this is a pool thread: waiting on a plain channel there could wait for
/// bands queued behind itself); the first error (in band order) is returned.
pub(crate) fn in_bands<T: Send>(
    c: &mut [T],
    len: usize,
    band: impl Fn(usize, &mut [T]) -> Result<(), KernelError> + Sync,
) -> Result<(), KernelError> {
    // One band (nearly every small product): no list of bands to make.
    if len >= c.len() {
        return if c.is_empty() { Ok(()) } else { band(0, c) };
    }
    let chunks: Vec<(usize, &mut [T])> = c.chunks_mut(len.max(1)).enumerate().collect();
    onnx_threads::map_in_order(chunks, |(i, chunk)| band(i, chunk)).into_iter().collect()
}

/// The dimensions of `a·b`, after checking that both views fit their slices and `c` holds
/// the product.
fn check<T>(a: &View<'_, T>, b: &View<'_, T>, c_len: usize) -> Result<(usize, usize, usize), KernelError> {
    if a.cols != b.rows {
        return Err(bad_input!("cannot multiply {}×{} by {}×{}", a.rows, a.cols, b.rows, b.cols));
    }
    if !a.fits() || !b.fits() {
        return Err(bad_input!("a matrix view reaches past its data"));
    }
    if a.rows.checked_mul(b.cols) != Some(c_len) {
        return Err(bad_input!("the result holds {c_len} elements, not {}×{}", a.rows, b.cols));
    }
    Ok((a.rows, a.cols, b.cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_match_the_definition() {
        let a: Vec<f32> = (0..6).map(|x| x as f32).collect(); // 2×3
        let b: Vec<f32> = (0..12).map(|x| (x as f32) * 0.5).collect(); // 3×4
        let mut c = vec![0.0; 8];
        sgemm(1.0, View::rows(&a, 2, 3), View::rows(&b, 3, 4), 0.0, &mut c).expect("fits");
        for i in 0..2 {
            for j in 0..4 {
                let want: f32 = (0..3).map(|k| a[i * 3 + k] * b[k * 4 + j]).sum();
                assert_eq!(c[i * 4 + j], want);
            }
        }
        // Transposed views: (aᵀ)ᵀ·b is a·b again.
        let at: Vec<f32> = (0..6).map(|x| a[(x % 2) * 3 + x / 2]).collect(); // 3×2
        let mut d = vec![0.0; 8];
        sgemm(1.0, View::rows(&at, 3, 2).t(), View::rows(&b, 3, 4), 0.0, &mut d).expect("fits");
        assert_eq!(c, d);
    }

    #[test]
    fn a_product_cut_into_bands_is_the_whole_product() {
        // 301×257 by 257×129: big enough to be cut into bands, rows not a multiple of them.
        let (m, k, n) = (301, 257, 129);
        let a: Vec<f32> = (0..m * k).map(|x| ((x * 7) % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..k * n).map(|x| ((x * 5) % 11) as f32 * 0.25).collect();
        assert!(bands(m, k, n) > 1 || onnx_threads::pool().is_none());
        let mut c = vec![1.0f32; m * n];
        sgemm(1.0, View::rows(&a, m, k), View::rows(&b, k, n), 0.5, &mut c).expect("fits");
        for i in [0, 1, 150, 299, 300] {
            for j in [0, 64, 128] {
                let want: f32 = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum::<f32>() + 0.5;
                assert!((c[i * n + j] - want).abs() <= want.abs() * 1e-5, "({i}, {j}): {} vs {want}", c[i * n + j]);
            }
        }
    }

    /// A product cut into bands whose last band is a single row gives the bits of the
    /// product in one band: every band takes the path the whole product takes (a one-row
    /// band once took the thin product's unfused sums).
    #[test]
    fn a_last_band_of_one_row_is_computed_as_the_others() {
        // 3 rows in two bands where there is a pool: rows 0–1 and row 2.
        let (m, k, n) = (3, 1000, 1000);
        assert!(bands(m, k, n) == 2 || onnx_threads::pool().is_none());
        // Values that round: fused and unfused multiply-adds give different bits.
        let a: Vec<f32> = (0..m * k).map(|x| ((x * 7919) % 1000) as f32 / 997.0 - 0.5).collect();
        let b: Vec<f32> = (0..k * n).map(|x| ((x * 104_729) % 1000) as f32 / 991.0 - 0.5).collect();
        let mut banded = vec![0.0f32; m * n];
        sgemm(1.0, View::rows(&a, m, k), View::rows(&b, k, n), 0.0, &mut banded).expect("fits");
        let mut whole = vec![0.0f32; m * n];
        let (a_view, b_view) = (View::rows(&a, m, k), View::rows(&b, k, n));
        if unpacked_is_faster(&a_view, &b_view) {
            blocked_product(1.0, &a_view, &b_view, 0.0, &mut whole);
            assert!(banded.iter().zip(&whole).all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }

    /// One column or one row (done directly, without packing) gives what the definition
    /// gives, with alpha and beta, and a zero beta ignores what the output held (NaN).
    #[test]
    fn thin_products_match_the_definition() {
        let (m, k) = (37, 45);
        let a: Vec<f64> = (0..m * k).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
        let v: Vec<f64> = (0..k).map(|x| ((x * 5) % 11) as f64 * 0.25).collect();
        let want: Vec<f64> = (0..m).map(|i| (0..k).map(|l| a[i * k + l] * v[l]).sum()).collect();
        let close =
            |got: &[f64], want: &[f64]| got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 1e-9 * w.abs().max(1.0));
        // Matrix × column.
        let mut c = vec![f64::NAN; m];
        dgemm(1.0, View::rows(&a, m, k), View::rows(&v, k, 1), 0.0, &mut c).expect("fits");
        assert!(close(&c, &want), "{c:?}");
        let mut c = vec![1.0; m];
        dgemm(2.0, View::rows(&a, m, k), View::rows(&v, k, 1), 3.0, &mut c).expect("fits");
        assert!(close(&c, &want.iter().map(|w| 2.0 * w + 3.0).collect::<Vec<_>>()));
        // Row × matrix: vᵀ·aᵀ is the same numbers.
        let mut c = vec![f64::NAN; m];
        dgemm(1.0, View::rows(&v, 1, k), View::rows(&a, m, k).t(), 0.0, &mut c).expect("fits");
        assert!(close(&c, &want), "strided: {c:?}");
        let at: Vec<f64> = (0..k * m).map(|x| a[(x % m) * k + x / m]).collect(); // k×m, row-major
        let mut c = vec![f64::NAN; m];
        dgemm(1.0, View::rows(&v, 1, k), View::rows(&at, k, m), 0.0, &mut c).expect("fits");
        assert!(close(&c, &want), "row: {c:?}");
        let (a32, v32): (Vec<f32>, Vec<f32>) =
            (a.iter().map(|&x| x as f32).collect(), v.iter().map(|&x| x as f32).collect());
        let mut c = vec![f32::NAN; m];
        sgemm(1.0, View::rows(&a32, m, k), View::rows(&v32, k, 1), 0.0, &mut c).expect("fits");
        assert!(c.iter().zip(&want).all(|(&g, &w)| (f64::from(g) - w).abs() <= 1e-4 * w.abs().max(1.0)), "{c:?}");
    }

    /// The unpacked tiles (few columns, or few rows) give what the definition gives for
    /// every remainder of rows (mod 6) and columns (mod 16), strided rows, alpha and beta,
    /// and a zero beta ignores what the output held (NaN).
    #[test]
    fn blocked_products_match_the_definition() {
        for (m, k, n) in [
            (64, 576, 16),
            (7, 33, 5),
            (3, 1, 47),
            (9, 20, 48),
            (5, 70, 200),
            (1, 3, 2),
            (4, 16, 17),
            (14, 9, 20),
            (12, 5, 33),
        ] {
            // Rows of `a` and of `b` padded past their ends: row strides larger than a row.
            let (a_stride, b_stride) = (k + 3, n + 5);
            let a: Vec<f64> = (0..m * a_stride).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..k * b_stride).map(|x| ((x * 5) % 11) as f64 * 0.25).collect();
            let a_view = View { data: &a, rows: m, cols: k, row_stride: a_stride, col_stride: 1 };
            let b_view = View { data: &b, rows: k, cols: n, row_stride: b_stride, col_stride: 1 };
            let at = |i: usize, j: usize| (0..k).map(|l| a[i * a_stride + l] * b[l * b_stride + j]).sum::<f64>();
            let mut c = vec![f64::NAN; m * n];
            blocked_product(1.0, &a_view, &b_view, 0.0, &mut c);
            let mut scaled = vec![1.0; m * n];
            blocked_product(2.0, &a_view, &b_view, 3.0, &mut scaled);
            for i in 0..m {
                for j in 0..n {
                    let want = at(i, j);
                    assert!((c[i * n + j] - want).abs() <= 1e-9 * want.abs().max(1.0), "{m}×{k}×{n} ({i}, {j})");
                    assert!((scaled[i * n + j] - (2.0 * want + 3.0)).abs() <= 1e-9 * want.abs().max(1.0));
                }
            }
            // Through sgemm, which chooses this path for such shapes where the processor has
            // fused multiply-adds (and the GEMM elsewhere): the same numbers either way.
            let (a32, b32): (Vec<f32>, Vec<f32>) =
                (a.iter().map(|&x| x as f32).collect(), b.iter().map(|&x| x as f32).collect());
            let mut c32 = vec![f32::NAN; m * n];
            let a32_view = View { data: &a32, rows: m, cols: k, row_stride: a_stride, col_stride: 1 };
            let b32_view = View { data: &b32, rows: k, cols: n, row_stride: b_stride, col_stride: 1 };
            sgemm(1.0, a32_view, b32_view, 0.0, &mut c32).expect("fits");
            assert!(c32.iter().zip(&c).all(|(&g, &w)| (f64::from(g) - w).abs() <= 1e-4 * w.abs().max(1.0)));
        }
    }

    /// Narrow products (two to eight columns, long rows) give the product by its definition:
    /// an odd number of rows, rows not a multiple of the lanes, `b` read transposed and
    /// with padded rows, alpha and beta; and sgemm takes this path for them.
    #[test]
    fn narrow_products_match_the_definition() {
        let shapes = [
            (384, 384, 4, false),
            (7, 70, 3, true),
            (1, 64, 2, false),
            (6, 129, 4, true),
            (13, 150, 5, false),
            (3, 200, 8, true),
        ];
        for (m, k, n, transposed) in shapes {
            let a_stride = k + 3;
            let a: Vec<f64> = (0..m * a_stride).map(|x| ((x * 7) % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..k * (n + 5)).map(|x| ((x * 5) % 11) as f64 * 0.25).collect();
            let a_view = View { data: &a, rows: m, cols: k, row_stride: a_stride, col_stride: 1 };
            let b_view = if transposed {
                View { data: &b, rows: k, cols: n, row_stride: 1, col_stride: k + 2 }
            } else {
                View { data: &b, rows: k, cols: n, row_stride: n + 5, col_stride: 1 }
            };
            let b_at = |l: usize, j: usize| b[l * b_view.row_stride + j * b_view.col_stride];
            let at = |i: usize, j: usize| (0..k).map(|l| a[i * a_stride + l] * b_at(l, j)).sum::<f64>();
            let mut c = vec![f64::NAN; m * n];
            let mut scaled = vec![1.0; m * n];
            let taken = narrow_product(1.0, &a_view, &b_view, 0.0, &mut c);
            assert_eq!(taken, crate::simd::has_fma(), "{m}×{k}×{n}");
            if !taken {
                continue;
            }
            assert!(narrow_product(2.0, &a_view, &b_view, 3.0, &mut scaled));
            for i in 0..m {
                for j in 0..n {
                    let want = at(i, j);
                    // Small integers and quarters: every order of summation is exact.
                    assert_eq!(c[i * n + j], want, "{m}×{k}×{n} ({i}, {j})");
                    assert_eq!(scaled[i * n + j], 2.0 * want + 3.0, "{m}×{k}×{n} ({i}, {j})");
                }
            }
            let mut through_sgemm = vec![f64::NAN; m * n];
            dgemm(1.0, a_view, b_view, 0.0, &mut through_sgemm).expect("fits");
            assert_eq!(through_sgemm, c, "{m}×{k}×{n}");
        }
        // Too few columns or too short rows: other paths.
        let a = vec![1.0f64; 64 * 9];
        let mut c = vec![0.0; 8 * 9];
        assert!(!narrow_product(1.0, &View::rows(&a, 8, 64), &View::rows(&a, 64, 9), 0.0, &mut c));
        assert!(!narrow_product(1.0, &View::rows(&a, 8, 63), &View::rows(&a, 63, 4), 0.0, &mut c));
    }

    #[test]
    fn views_past_their_data_are_refused() {
        let a = vec![0f32; 5];
        let mut c = vec![0f32; 4];
        let refused = sgemm(1.0, View::rows(&a, 2, 3), View::rows(&a, 3, 2), 0.0, &mut c);
        assert_eq!(refused.map_err(|e| e.kind()), Err(crate::ErrorKind::BadInput));
    }
}
