//! 8-bit integer matrix products with the processor's 8-bit dot-product instruction (AVX-512
//! VNNI's `vpdpbusd`: sixteen lanes, each adding four products of an unsigned and a signed
//! byte to an int32), the way onnxruntime's MLAS multiplies quantized models. Where the
//! processor lacks it, [`product`] answers `None` and the caller takes the exact float32
//! path (`kernels::matmul::exact_integer_product`).
//!
//! The instruction multiplies unsigned by signed bytes. Any pair of 8-bit types is brought
//! to that form by an offset (an int8 A gets +128, a uint8 B −128), and the zero points
//! come out of the sum: with `a = a_u − A0` and `b = b_s − B0` per row and column,
//! `Σ (a_u − A0)(b_s − B0) = Σ a_u·b_s − B0·Σ a_u − A0·Σ b_s + K·A0·B0`, every step in
//! wrapping int32 arithmetic, as an int32 accumulator has it. The result is exact.

/// One operand: its bytes, whether they are signed, and a zero point per row of A or per
/// column of B (one value for all where the slice has one).
#[derive(Debug)]
pub struct Operand<'a> {
    pub bytes: &'a [u8],
    pub signed: bool,
    pub zero: &'a [i32],
}

/// B (`k×n`) in the kernel's form: signed bytes in panels of [`PANEL`] columns, four rows
/// of a column together, with each column's sum and zero point. A constant weight is packed
/// once, when the plan is made ([`PackedB::new`]); onnxruntime pre-packs its weights so.
#[derive(Debug)]
pub struct PackedB {
    /// Four bytes of a column (four rows of K) per word.
    panels: Vec<u32>,
    /// Σ over k of each column's signed bytes.
    sums: Vec<i32>,
    /// Each column's zero point in the signed form (`B0`: `b = b_s − B0`).
    zero: Vec<i32>,
    k: usize,
    n: usize,
}

/// A (`m×k`) in the kernel's form: unsigned bytes, each row padded to a multiple of four,
/// with each row's sum and zero point (`A0`: `a = a_u − A0`; one for all or one per row).
#[derive(Debug)]
pub struct RowsA {
    bytes: Vec<u8>,
    sums: Vec<i32>,
    zero: Vec<i32>,
    m: usize,
    k: usize,
}

/// Columns of one packed panel of B: four 16-lane registers.
const PANEL: usize = 64;

impl PackedB {
    /// B packed, or `None` where the processor has no VNNI or the sizes do not match.
    pub fn new(b: &Operand<'_>, (k, n): (usize, usize)) -> Option<PackedB> {
        PackedB::into(b, (k, n), Vec::new())
    }

    /// Packs into `buffer` (a reused one: a fresh buffer of a weight's size on every call
    /// was a fifth of a product's time, in the kernel clearing its pages).
    fn into(b: &Operand<'_>, (k, n): (usize, usize), mut panels: Vec<u32>) -> Option<PackedB> {
        if !available() || b.bytes.len() != k.checked_mul(n)? || n == 0 || (b.zero.len() != 1 && b.zero.len() != n) {
            return None;
        }
        let groups = k.div_ceil(4);
        panels.clear();
        panels.resize(n.div_ceil(PANEL).checked_mul(groups)?.checked_mul(PANEL)?, 0);
        // B as signed bytes (uint8 − 128): for each group of four k, each column's four
        // bytes together in one 32-bit word (what one lane of vpdpbusd reads), a group's
        // four rows read together so that each panel's words are written in order. Rows
        // past K are zeros (A's padding is zero too) and not summed.
        let flip = if b.signed { 0 } else { 0x80u8 };
        let mut sums = vec![0i32; n];
        let row = |p: usize| if p < k { Some(&b.bytes[p * n..(p + 1) * n]) } else { None };
        for g in 0..groups {
            let rows: [Option<&[u8]>; 4] = std::array::from_fn(|w| row(4 * g + w));
            for (panel, sums) in sums.chunks_mut(PANEL).enumerate() {
                let first = panel * PANEL;
                let dest = &mut panels[(panel * groups + g) * PANEL..][..sums.len()];
                match rows {
                    [Some(r0), Some(r1), Some(r2), Some(r3)] => {
                        let cols = first..first + sums.len();
                        let (r0, r1, r2, r3) = (&r0[cols.clone()], &r1[cols.clone()], &r2[cols.clone()], &r3[cols]);
                        for (j, (word, sum)) in dest.iter_mut().zip(sums.iter_mut()).enumerate() {
                            let bytes = [r0[j] ^ flip, r1[j] ^ flip, r2[j] ^ flip, r3[j] ^ flip];
                            *word = u32::from_le_bytes(bytes);
                            *sum += bytes.iter().map(|&v| i32::from(v as i8)).sum::<i32>();
                        }
                    }
                    _ => {
                        for (j, (word, sum)) in dest.iter_mut().zip(sums.iter_mut()).enumerate() {
                            let bytes: [u8; 4] = std::array::from_fn(|w| rows[w].map_or(0, |r| r[first + j] ^ flip));
                            *word = u32::from_le_bytes(bytes);
                            *sum +=
                                (0..4).filter(|&w| rows[w].is_some()).map(|w| i32::from(bytes[w] as i8)).sum::<i32>();
                        }
                    }
                }
            }
        }
        let zero =
            (0..n).map(|j| b.zero[if b.zero.len() == 1 { 0 } else { j }] - if b.signed { 0 } else { 128 }).collect();
        Some(PackedB { panels, sums, zero, k, n })
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> usize {
        4 * self.panels.len() + 8 * self.n
    }

    /// `(k, n)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.k, self.n)
    }
}

impl RowsA {
    /// A's bytes as the kernel reads them (an int8 A gets +128), `None` when the sizes do
    /// not match.
    pub fn new(a: &Operand<'_>, (m, k): (usize, usize)) -> Option<RowsA> {
        if a.bytes.len() != m.checked_mul(k)? || (a.zero.len() != 1 && a.zero.len() != m) {
            return None;
        }
        let flip = if a.signed { 0x80u8 } else { 0 };
        let zero = a.zero.iter().map(|z| z + if a.signed { 128 } else { 0 }).collect();
        Some(RowsA::filled((m, k), zero, |r, dest| {
            for (d, &v) in dest.iter_mut().zip(&a.bytes[r * k..(r + 1) * k]) {
                *d = v ^ flip;
            }
        }))
    }

    /// The 8-bit integers `x / scale` stands for, where `x` (`m×k`) is a dequantized tensor
    /// (`(q − z)·scale`, rounded once to float32), given `1 / scale` and `A0`, the zero point
    /// in the unsigned form (`z`, or `z + 128` for int8). Dividing back is exact: the
    /// quotient is within a few float32 ulps of an integer of at most 255, far from the
    /// halfway point. Values outside the byte range saturate.
    pub fn dequantized(x: &[f32], (m, k): (usize, usize), inverse_scale: f32, zero: i32) -> Option<RowsA> {
        if x.len() != m.checked_mul(k)? || !(0..=255).contains(&zero) {
            return None;
        }
        Some(RowsA::filled((m, k), vec![zero], |r, dest| {
            dest.copy_from_slice(&unsigned_bytes(&x[r * k..(r + 1) * k], inverse_scale, zero));
        }))
    }

    /// Rows made by `fill(row, bytes)` in the unsigned form, with one zero point `A0`.
    pub fn from_fn((m, k): (usize, usize), zero: i32, fill: impl FnMut(usize, &mut [u8])) -> RowsA {
        RowsA::filled((m, k), vec![zero], fill)
    }

    /// Rows filled by `fill(row, bytes)`, padded with zeros, then summed.
    fn filled((m, k): (usize, usize), zero: Vec<i32>, mut fill: impl FnMut(usize, &mut [u8])) -> RowsA {
        let k4 = k.div_ceil(4) * 4;
        let mut bytes = vec![0u8; m * k4];
        let mut sums = vec![0i32; m];
        for (r, (row, sum)) in bytes.chunks_exact_mut(k4.max(1)).zip(&mut sums).enumerate().take(m) {
            fill(r, &mut row[..k]);
            *sum = row.iter().map(|&v| i32::from(v)).sum();
        }
        RowsA { bytes, sums, zero, m, k }
    }
}

/// The 8-bit integers dequantized values stand for (see [`RowsA::dequantized`]), in the
/// unsigned form: `x / scale` rounded, plus `zero` (the zero point, +128 for int8),
/// saturated to 0..=255.
pub fn unsigned_bytes(x: &[f32], inverse_scale: f32, zero: i32) -> Vec<u8> {
    // Rounding to nearest, ties to even, by adding 1.5·2^23, whose ulp is 1: the integer
    // is then the sum's low byte. Vectorized, where `round_ties_even` is a call per
    // element (no SSE4.1 in the baseline target) and a saturating `as u8` needs fix-ups.
    const ROUND: f32 = 12_582_912.0;
    let (lo, hi) = (ROUND, ROUND + 255.0);
    let offset = zero as f32 + ROUND;
    crate::simd::low_bytes(x, |v| (v * inverse_scale + offset).clamp(lo, hi).to_bits())
}

/// A tensor's 8-bit elements in order and whether they are signed; `None` for other types
/// and for a strided view.
pub fn tensor_bytes(t: &crate::value::Tensor) -> Option<(&[u8], bool)> {
    use crate::value::Data;
    if t.placement() != (0, crate::broadcast::strides(&t.shape)) {
        return None;
    }
    match &*t.data {
        Data::U8(v) => Some((&v[..t.len()], false)),
        Data::I8(v) => Some((bytemuck::cast_slice(&v[..t.len()]), true)),
        _ => None,
    }
}

/// A byte as the integer it holds: two's complement where `signed`.
pub fn byte_value(v: u8, signed: bool) -> i32 {
    if signed { i32::from(v as i8) } else { i32::from(v) }
}

/// A tensor's 8-bit elements as integers (a zero point's), and whether they are signed;
/// `None` as for [`tensor_bytes`].
pub fn tensor_integers(t: &crate::value::Tensor) -> Option<(Vec<i32>, bool)> {
    let (bytes, signed) = tensor_bytes(t)?;
    Some((bytes.iter().map(|&v| byte_value(v, signed)).collect(), signed))
}

/// `(A − za)·(B − zb)` for A `m×k` and B `k×n`, row-major, as int32 (`m×n`), or `None` where
/// the processor has no VNNI (or the shapes do not match the slices). B is packed on each
/// call; [`multiply`] takes one packed before.
pub fn product(a: &Operand<'_>, b: &Operand<'_>, (m, k, n): (usize, usize, usize)) -> Option<Vec<i32>> {
    // Before A is converted: without VNNI that was a twentieth of a small product's time,
    // for nothing.
    if !available() {
        return None;
    }
    let rows = RowsA::new(a, (m, k))?;
    thread_local! {
        static PACKED: std::cell::Cell<Vec<u32>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let packed = PackedB::into(b, (k, n), PACKED.take())?;
    let c = multiply(&rows, &packed);
    PACKED.set(packed.panels);
    c
}

/// `(A − za)·(B − zb)` as [`product`] gives it, for a few rows of A without packing B (a
/// vector times a weight, the common case of a decoder's step): each row of B added into
/// the row of sums scaled by one value of A, `Σ a·b` first and the zero points after
/// (`Σ (a − za)(b − zb) = Σ (a − za)·b − zb·Σ (a − za)`), in loops compiled for the widest
/// vectors. Any processor; exact in wrapping int32.
pub fn few_rows(a: &Operand<'_>, b: &Operand<'_>, (m, k, n): (usize, usize, usize)) -> Option<Vec<i32>> {
    if a.bytes.len() != m.checked_mul(k)? || b.bytes.len() != k.checked_mul(n)? {
        return None;
    }
    if (a.zero.len() != 1 && a.zero.len() != m) || (b.zero.len() != 1 && b.zero.len() != n) {
        return None;
    }
    let mut c = vec![0i32; m * n];
    for (r, out) in c.chunks_exact_mut(n.max(1)).enumerate().take(m) {
        let za = a.zero[if a.zero.len() == 1 { 0 } else { r }];
        let row = &a.bytes[r * k..(r + 1) * k];
        let mut a_sum = 0i32;
        crate::simd::widest(
            #[inline(always)]
            || {
                for (p, &v) in row.iter().enumerate() {
                    let x = byte_value(v, a.signed).wrapping_sub(za);
                    a_sum = a_sum.wrapping_add(x);
                    let b_row = &b.bytes[p * n..(p + 1) * n];
                    if b.signed {
                        for (o, &w) in out.iter_mut().zip(b_row) {
                            *o = o.wrapping_add(x.wrapping_mul(i32::from(w as i8)));
                        }
                    } else {
                        for (o, &w) in out.iter_mut().zip(b_row) {
                            *o = o.wrapping_add(x.wrapping_mul(i32::from(w)));
                        }
                    }
                }
            },
        );
        for (j, o) in out.iter_mut().enumerate() {
            let zb = b.zero[if b.zero.len() == 1 { 0 } else { j }];
            *o = o.wrapping_sub(zb.wrapping_mul(a_sum));
        }
    }
    Some(c)
}

/// `(A − A0)·(B − B0)` as int32, exact (wrapping as an int32 accumulator does), or `None`
/// where the two do not fit or the processor has no VNNI. Rows are shared over the pool's
/// threads when the product is large enough.
pub fn multiply(a: &RowsA, b: &PackedB) -> Option<Vec<i32>> {
    if a.k != b.k || !available() {
        return None;
    }
    let (m, n) = (a.m, b.n);
    let mut c = vec![0i32; m.checked_mul(n)?];
    if m == 0 {
        return Some(c);
    }
    let bands = crate::gemm::bands(m, a.k, n);
    let per_band = m.div_ceil(bands);
    let done = crate::gemm::in_bands(&mut c, per_band * n, |i, chunk| {
        rows_into(a, b, i * per_band, chunk);
        Ok(())
    });
    done.ok().map(|()| c)
}

/// Rows `first..` of the product into `c` (whole rows of `n`).
fn rows_into(a: &RowsA, b: &PackedB, first: usize, c: &mut [i32]) {
    let (n, k4) = (b.n, a.k.div_ceil(4) * 4);
    let m = c.len() / n;
    #[cfg(target_arch = "x86_64")]
    {
        let a_u = &a.bytes[first * k4..(first + m) * k4];
        // SAFETY: `multiply` checked `available()`, every feature `kernel` enables.
        #[allow(unsafe_code)]
        unsafe {
            x86::kernel(a_u, k4, bytemuck::cast_slice(&b.panels), k4 / 4, (m, n), c)
        };
    }
    // c − B0·Σa_u − A0·Σb_s + K·A0·B0 = c − B0·(Σa_u − K·A0) − A0·Σb_s, per row a loop over
    // columns the compiler vectorizes.
    let k = a.k as i32;
    for (r, row) in (first..).zip(c.chunks_exact_mut(n)) {
        let ar = a.zero[if a.zero.len() == 1 { 0 } else { r }];
        let t = a.sums[r].wrapping_sub(k.wrapping_mul(ar));
        for ((v, &bj), &sj) in row.iter_mut().zip(&b.zero).zip(&b.sums) {
            *v = v.wrapping_sub(bj.wrapping_mul(t)).wrapping_sub(ar.wrapping_mul(sj));
        }
    }
}

/// Whether [`product`] runs here (for tests and `--profile` notes).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !DISABLED.get() && x86::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

thread_local! {
    /// Set by [`without_vnni`] on this thread.
    static DISABLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` (a plan made and run on this thread) as on a processor without VNNI: the
/// paths every other machine takes, checked on this one.
pub fn without_vnni<R>(work: impl FnOnce() -> R) -> R {
    let was = DISABLED.replace(true);
    let result = work();
    DISABLED.set(was);
    result
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86 {
    use super::PANEL;
    use std::arch::x86_64::*;

    /// Rows of A the kernel takes at once: with a panel of four registers, 24 accumulators
    /// of sixteen lanes, the four of B and a broadcast of A (29 of the 32 registers).
    const ROWS: usize = 6;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
    }

    /// Registers per row of a panel.
    const V: usize = PANEL / 16;

    /// `c = a_u · b_s` over the packed panels: [`ROWS`] rows of A by one panel at a time
    /// (`ROWS·V` accumulators in registers), each panel's bytes read once per `ROWS` rows.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn kernel(a_u: &[u8], k4: usize, packed: &[u8], groups: usize, (m, n): (usize, usize), c: &mut [i32]) {
        let panels = n.div_ceil(PANEL);
        for panel in 0..panels {
            let b_panel = &packed[panel * groups * PANEL * 4..(panel + 1) * groups * PANEL * 4];
            let cols = PANEL.min(n - panel * PANEL);
            let mut r = 0;
            // SAFETY (every call): rows r..r + R < m of `a_u` hold k4 = 4·groups bytes, and
            // the panel `groups` runs of PANEL·4 bytes.
            while r + ROWS <= m {
                let acc = unsafe { tile::<ROWS>(a_u, k4, b_panel, groups, r) };
                store(&acc, c, (r, n), panel * PANEL, cols);
                r += ROWS;
            }
            // The remaining rows, with a tile of their number (an array of constant size
            // stays in registers; one indexed up to a variable bound went to memory).
            macro_rules! rest {
                ($($rows:literal)*) => {
                    match m - r {
                        $($rows => {
                            let acc = unsafe { tile::<$rows>(a_u, k4, b_panel, groups, r) };
                            store(&acc, c, (r, n), panel * PANEL, cols);
                        })*
                        _ => {}
                    }
                };
            }
            rest!(1 2 3 4 5);
        }
    }

    /// The accumulators of rows `r..r + R` by one panel.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn tile<const R: usize>(
        a_u: &[u8],
        k4: usize,
        b_panel: &[u8],
        groups: usize,
        r: usize,
    ) -> [[__m512i; V]; R] {
        let mut acc = [[_mm512_setzero_si512(); V]; R];
        let a = a_u.as_ptr();
        let b = b_panel.as_ptr();
        for g in 0..groups {
            // SAFETY: the caller's bounds (see `kernel`).
            let vb: [__m512i; V] =
                std::array::from_fn(|v| unsafe { _mm512_loadu_si512(b.add((g * V + v) * 64).cast()) });
            for (i, acc) in acc.iter_mut().enumerate() {
                let word = unsafe { a.add((r + i) * k4 + g * 4).cast::<i32>().read_unaligned() };
                let va = _mm512_set1_epi32(word);
                for (acc, &vb) in acc.iter_mut().zip(&vb) {
                    *acc = _mm512_dpbusd_epi32(*acc, va, vb);
                }
            }
        }
        acc
    }

    /// Rows `r..` of the tile into `c` (`n` columns), columns `at..at + cols`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    fn store<const R: usize>(acc: &[[__m512i; V]; R], c: &mut [i32], (r, n): (usize, usize), at: usize, cols: usize) {
        let mut lanes = [0i32; PANEL];
        for (i, acc) in acc.iter().enumerate() {
            let row = &mut c[(r + i) * n + at..(r + i) * n + at + cols];
            for (v, &acc) in acc.iter().enumerate() {
                // SAFETY: `lanes` holds PANEL = 16·V int32.
                unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().add(16 * v).cast(), acc) };
            }
            row.copy_from_slice(&lanes[..cols]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Operand, available, product};

    struct Seeded(u64);

    impl Seeded {
        fn byte(&mut self) -> u8 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 56) as u8
        }
    }

    fn reference(a: &Operand<'_>, b: &Operand<'_>, (m, k, n): (usize, usize, usize)) -> Vec<i32> {
        let value = |v: u8, signed: bool| if signed { i64::from(v as i8) } else { i64::from(v) };
        let zero = |z: &[i32], i: usize| i64::from(z[if z.len() == 1 { 0 } else { i }]);
        let mut out = vec![0i32; m * n];
        for r in 0..m {
            for j in 0..n {
                let sum: i64 = (0..k)
                    .map(|p| {
                        (value(a.bytes[r * k + p], a.signed) - zero(a.zero, r))
                            * (value(b.bytes[p * n + j], b.signed) - zero(b.zero, j))
                    })
                    .sum();
                out[r * n + j] = sum as i32;
            }
        }
        out
    }

    /// Dequantized values divided back give the integers they came from, for every byte,
    /// every zero point of both types and scales over float32's normal range.
    #[test]
    fn dequantized_values_give_their_integers_back() {
        let mut rng = Seeded(11);
        for round in 0..400 {
            // Scales from 2^-100 to 2^100, with random mantissas.
            let exponent = round % 200 - 100;
            let mantissa = 1.0 + f32::from(rng.byte()) / 256.0 + f32::from(rng.byte()) / 65536.0;
            let scale = mantissa * 2f32.powi(exponent);
            for signed in [false, true] {
                let z: i32 = if signed { i32::from(rng.byte() as i8) } else { i32::from(rng.byte()) };
                let values: Vec<i32> = if signed { (-128..=127).collect() } else { (0..=255).collect() };
                let x: Vec<f32> = values.iter().map(|&q| (q - z) as f32 * scale).collect();
                let zero = z + if signed { 128 } else { 0 };
                let rows = super::RowsA::dequantized(&x, (1, x.len()), 1.0 / scale, zero).unwrap();
                let back: Vec<i32> = rows.bytes[..x.len()].iter().map(|&u| i32::from(u) - zero + z).collect();
                assert_eq!(back, values, "scale {scale:e}, zero {z}, signed {signed}");
            }
        }
    }

    /// Every pair of 8-bit types, shapes off every multiple the kernel works in, zero points
    /// one for all and one per row or column, and the extremes: the same int32 as sums in i64.
    #[test]
    fn products_are_exact_for_every_type_pair_and_shape() {
        let vnni = available();
        if !vnni {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "SKIPPED int8 products: no AVX-512 VNNI on this processor");
        }
        let mut rng = Seeded(5);
        for (m, k, n) in [(1, 1, 1), (3, 5, 7), (4, 8, 32), (5, 13, 33), (9, 300, 70), (2, 1000, 3)] {
            for (a_signed, b_signed) in [(false, true), (false, false), (true, true), (true, false)] {
                let a_bytes: Vec<u8> = (0..m * k).map(|_| rng.byte()).collect();
                let b_bytes: Vec<u8> = (0..k * n).map(|_| rng.byte()).collect();
                let zeros = |count: usize, signed: bool, rng: &mut Seeded| -> Vec<i32> {
                    (0..count)
                        .map(|_| if signed { i32::from(rng.byte() as i8) } else { i32::from(rng.byte()) })
                        .collect()
                };
                for per_row in [false, true] {
                    let za = zeros(if per_row { m } else { 1 }, a_signed, &mut rng);
                    let zb = zeros(if per_row { n } else { 1 }, b_signed, &mut rng);
                    let a = Operand { bytes: &a_bytes, signed: a_signed, zero: &za };
                    let b = Operand { bytes: &b_bytes, signed: b_signed, zero: &zb };
                    let expected = reference(&a, &b, (m, k, n));
                    if vnni {
                        let got = product(&a, &b, (m, k, n)).expect("VNNI is available");
                        assert_eq!(got, expected, "{m}×{k}×{n} signed {a_signed}/{b_signed}");
                    }
                    let by_rows = super::few_rows(&a, &b, (m, k, n)).expect("the sizes fit");
                    assert_eq!(by_rows, expected, "few rows: {m}×{k}×{n} signed {a_signed}/{b_signed}");
                }
            }
        }
        // The extremes: 255 against −128 with zero points at the other end.
        let (m, k, n) = (2, 777, 17);
        let (a_bytes, b_bytes) = (vec![255u8; m * k], vec![0x80u8; k * n]);
        let a = Operand { bytes: &a_bytes, signed: false, zero: &[0] };
        let b = Operand { bytes: &b_bytes, signed: true, zero: &[127] };
        let expected = reference(&a, &b, (m, k, n));
        assert_eq!(super::few_rows(&a, &b, (m, k, n)).expect("the sizes fit"), expected);
        if vnni {
            assert_eq!(product(&a, &b, (m, k, n)).expect("VNNI is available"), expected);
        }
    }
}
