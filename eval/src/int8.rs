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

/// `(A − za)·(B − zb)` for A `m×k` and B `k×n`, row-major, as int32 (`m×n`), or `None` where
/// the processor has no VNNI (or the shapes do not match the slices).
pub fn product(a: &Operand<'_>, b: &Operand<'_>, (m, k, n): (usize, usize, usize)) -> Option<Vec<i32>> {
    if a.bytes.len() != m.checked_mul(k)? || b.bytes.len() != k.checked_mul(n)? {
        return None;
    }
    let zero_fits = |z: &[i32], count: usize| z.len() == 1 || z.len() == count;
    if !zero_fits(a.zero, m) || !zero_fits(b.zero, n) || m == 0 || n == 0 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if x86::available() {
            return Some(x86::product(a, b, (m, k, n)));
        }
    }
    None
}

/// Whether [`product`] runs here (for tests and `--profile` notes).
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86 {
    use super::Operand;
    use std::arch::x86_64::*;

    /// Columns of one packed panel of B: two 16-lane registers.
    const PANEL: usize = 32;
    /// Rows of A the kernel takes at once (sixteen accumulators of sixteen lanes, half the
    /// registers).
    const ROWS: usize = 8;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
    }

    pub fn product(a: &Operand<'_>, b: &Operand<'_>, (m, k, n): (usize, usize, usize)) -> Vec<i32> {
        // A as unsigned bytes (int8 + 128), each row padded to a multiple of four with zeros.
        let k4 = k.div_ceil(4) * 4;
        let a_flip = if a.signed { 0x80u8 } else { 0 };
        let mut a_u = vec![0u8; m * k4];
        let mut a_sums = vec![0i32; m];
        for r in 0..m {
            let row = &a.bytes[r * k..(r + 1) * k];
            let dest = &mut a_u[r * k4..r * k4 + k];
            let mut sum = 0i32;
            for (d, &v) in dest.iter_mut().zip(row) {
                *d = v ^ a_flip;
                sum += i32::from(*d);
            }
            a_sums[r] = sum;
        }
        // B as signed bytes (uint8 − 128), packed in panels of 32 columns: for each group of
        // four k, each column's four bytes together (what one lane of vpdpbusd reads).
        let panels = n.div_ceil(PANEL);
        let groups = k4 / 4;
        // The packed panels live in a buffer kept per thread: a fresh one of a weight's size
        // on every call was a fifth of the time, in the kernel clearing its pages.
        PACKED.with_borrow_mut(|packed| {
            packed.clear();
            packed.resize(panels * groups * PANEL * 4, 0);
            product_with(a, b, (m, k, n), (a_u, a_sums), packed)
        })
    }

    thread_local! {
        static PACKED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    fn product_with(
        a: &Operand<'_>,
        b: &Operand<'_>,
        (m, k, n): (usize, usize, usize),
        (a_u, a_sums): (Vec<u8>, Vec<i32>),
        packed: &mut [u8],
    ) -> Vec<i32> {
        let k4 = k.div_ceil(4) * 4;
        let groups = k4 / 4;
        let b_flip = if b.signed { 0 } else { 0x80u8 };
        let mut b_sums = vec![0i32; n];
        for (p, row) in b.bytes.chunks_exact(n).enumerate() {
            let (g, within) = (p / 4, p % 4);
            for (panel, (cols, sums)) in row.chunks(PANEL).zip(b_sums.chunks_mut(PANEL)).enumerate() {
                let dest = &mut packed[(panel * groups + g) * PANEL * 4..][..PANEL * 4];
                for ((&v, sum), lane) in cols.iter().zip(sums.iter_mut()).zip(dest.chunks_exact_mut(4)) {
                    let v = v ^ b_flip;
                    *sum += i32::from(v as i8);
                    lane[within] = v;
                }
            }
        }
        // The offsets as zero points: a = a_u − A0 with A0 = 128 + za (int8) or za; b = b_s − B0
        // with B0 = zb − 128 (uint8) or zb.
        let a0 = |r: usize| a.zero[if a.zero.len() == 1 { 0 } else { r }] + if a.signed { 128 } else { 0 };
        let b0 = |j: usize| b.zero[if b.zero.len() == 1 { 0 } else { j }] - if b.signed { 0 } else { 128 };
        let mut c = vec![0i32; m * n];
        // SAFETY: `available()` checked every feature `kernel` enables (the caller's guard).
        unsafe { kernel(&a_u, k4, packed, groups, (m, n), &mut c) };
        // c − B0·Σa_u − A0·Σb_s + K·A0·B0 = c − B0·(Σa_u − K·A0) − A0·Σb_s, per row a loop
        // over columns the compiler vectorizes.
        let k = k as i32;
        let b0s: Vec<i32> = (0..n).map(b0).collect();
        for (r, row) in c.chunks_exact_mut(n).enumerate() {
            let ar = a0(r);
            let t = a_sums[r].wrapping_sub(k.wrapping_mul(ar));
            for ((v, &bj), &sj) in row.iter_mut().zip(&b0s).zip(&b_sums) {
                *v = v.wrapping_sub(bj.wrapping_mul(t)).wrapping_sub(ar.wrapping_mul(sj));
            }
        }
        c
    }

    /// `c = a_u · b_s` over the packed panels: up to eight rows of A by one panel at a time
    /// (sixteen accumulators), each panel's bytes read once per eight rows.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn kernel(a_u: &[u8], k4: usize, packed: &[u8], groups: usize, (m, n): (usize, usize), c: &mut [i32]) {
        let panels = n.div_ceil(PANEL);
        let mut lanes = [0i32; PANEL];
        for panel in 0..panels {
            let b_panel = &packed[panel * groups * PANEL * 4..(panel + 1) * groups * PANEL * 4];
            let cols = PANEL.min(n - panel * PANEL);
            let mut r = 0;
            while r < m {
                let rows = ROWS.min(m - r);
                let mut acc = [[_mm512_setzero_si512(); 2]; ROWS];
                for g in 0..groups {
                    // SAFETY: each panel holds `groups` runs of 128 bytes.
                    let (lo, hi) = unsafe {
                        let at = b_panel.as_ptr().add(g * PANEL * 4);
                        (_mm512_loadu_si512(at.cast()), _mm512_loadu_si512(at.add(64).cast()))
                    };
                    for (i, acc) in acc.iter_mut().enumerate().take(rows) {
                        // SAFETY: row r + i < m of `a_u` holds k4 = 4·groups bytes.
                        let word = unsafe { a_u.as_ptr().add((r + i) * k4 + g * 4).cast::<i32>().read_unaligned() };
                        let va = _mm512_set1_epi32(word);
                        acc[0] = _mm512_dpbusd_epi32(acc[0], va, lo);
                        acc[1] = _mm512_dpbusd_epi32(acc[1], va, hi);
                    }
                }
                for (i, acc) in acc.iter().enumerate().take(rows) {
                    // SAFETY: `lanes` holds 32 int32, two registers' worth.
                    unsafe {
                        _mm512_storeu_si512(lanes.as_mut_ptr().cast(), acc[0]);
                        _mm512_storeu_si512(lanes.as_mut_ptr().add(16).cast(), acc[1]);
                    }
                    let row = (r + i) * n + panel * PANEL;
                    c[row..row + cols].copy_from_slice(&lanes[..cols]);
                }
                r += rows;
            }
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

    /// Every pair of 8-bit types, shapes off every multiple the kernel works in, zero points
    /// one for all and one per row or column, and the extremes: the same int32 as sums in i64.
    #[test]
    fn products_are_exact_for_every_type_pair_and_shape() {
        if !available() {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "SKIPPED int8 products: no AVX-512 VNNI on this processor");
            return;
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
                    let got = product(&a, &b, (m, k, n)).expect("VNNI is available");
                    assert_eq!(got, reference(&a, &b, (m, k, n)), "{m}×{k}×{n} signed {a_signed}/{b_signed}");
                }
            }
        }
        // The extremes: 255 against −128 with zero points at the other end.
        let (m, k, n) = (2, 777, 17);
        let (a_bytes, b_bytes) = (vec![255u8; m * k], vec![0x80u8; k * n]);
        let a = Operand { bytes: &a_bytes, signed: false, zero: &[0] };
        let b = Operand { bytes: &b_bytes, signed: true, zero: &[127] };
        assert_eq!(product(&a, &b, (m, k, n)).unwrap(), reference(&a, &b, (m, k, n)));
    }
}
