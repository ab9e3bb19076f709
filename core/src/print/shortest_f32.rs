//! The shortest decimal that reads back as a given f32, found with two 64-bit products.
//!
//! Why our own and not `ryu`: printing a big model is almost all float formatting, and ryu's
//! f32 path (which narrows its candidates one digit at a time, dividing by ten) was more than
//! half of the onnx-style print. zmij, lexical and the dragonbox crate were measured too and
//! were slower here, differ in tie-breaking, or have no f32 path (`docs/benchmarks.md`).
//!
//! The method is Schubfach's (R. Giulietti, "The Schubfach way to render doubles", 2020),
//! written here for f32 from the paper's argument:
//!
//! * a value `c·2^q` rounds back from any decimal inside its rounding interval, the points
//!   halfway to its neighbours (included when `c` is even, as a correctly rounding reader
//!   breaks ties to even);
//! * scaled by `10^-k`, with `k` chosen so that the interval is between 1 and 10 units wide,
//!   the interval holds at most one multiple of ten (one digit fewer) and at least one
//!   integer, so the shortest decimal is that multiple of ten if it is inside, otherwise the
//!   integer nearest the value (`s` or `s + 1`, a tie going to the even one), as C++
//!   `to_chars` and ryu choose it;
//! * the scaled value and bounds are computed from a 63-bit approximation of `10^-k` rounded
//!   up, with the bits below the result folded into its lowest bit ("round to odd"), which
//!   keeps every comparison with the candidates exact.
//!
//! Correctness is checked against ryu: on a sample of every exponent in the unit tests, and
//! on all 2^31 positive f32 values by the ignored test `agrees_with_ryu_on_every_f32`
//! (`cargo test --release -p onnx-core shortest_f32 -- --ignored`, about a minute).

/// Significand bits of an f32 without the implicit one.
const FRACTION_BITS: u32 = 23;
/// The significand of the smallest normal values, where the gap below halves.
const SMALLEST_NORMAL_SIGNIFICAND: u32 = 1 << FRACTION_BITS;
/// The binary exponent of subnormal values (and of the smallest normal ones).
const SMALLEST_EXPONENT: i32 = -149;

/// The shortest `(digits, exponent)` with `digits · 10^exponent` reading back as the f32 of
/// these bits; the sign bit is ignored, and the value must be finite and non-zero. Among
/// equally short decimals the nearest is chosen, a tie going to even digits. `digits` may
/// end in zeros.
#[inline]
pub fn shortest(bits: u32) -> (u32, i32) {
    let biased = ((bits >> FRACTION_BITS) & 0xff) as i32;
    let fraction = bits & (SMALLEST_NORMAL_SIGNIFICAND - 1);
    let (c, q) = if biased == 0 {
        (fraction, SMALLEST_EXPONENT)
    } else {
        (fraction | SMALLEST_NORMAL_SIGNIFICAND, biased - 150)
    };
    // Integers below 2^24 with a gap under one: no shorter decimal lies within a quarter.
    if (-(FRACTION_BITS as i32)..0).contains(&q) {
        let integer = c >> -q;
        if integer << -q == c {
            return (integer, 0);
        }
    }
    // Four times the value and the distance to its interval's bounds, in units of 2^q (the
    // gap below a power of two is half the gap above, which needs its own scaling).
    let cb = u64::from(c) << 2;
    let even_gaps = c != SMALLEST_NORMAL_SIGNIFICAND || q == SMALLEST_EXPONENT;
    let below = if even_gaps { 2 } else { 1 };
    let Scaling { g, k, h } = if even_gaps {
        SCALINGS[(q - SMALLEST_EXPONENT) as usize]
    } else {
        scaling(q, floor_log10_three_quarters_pow2(q))
    };
    let product = u128::from(g) * u128::from(cb << h);
    let step = u128::from(g) << h;
    let vb = round_to_odd(product);
    let vbl = round_to_odd(product - step * below);
    let vbr = round_to_odd(product + step * 2);
    // Bounds are inside the interval only when the significand is even. Every candidate is
    // judged and the answer selected without branches: for random values which candidate
    // wins is a coin toss, and mispredicted branches cost more than the arithmetic.
    let open = c & 1;
    let s = vb >> 2;
    let tens = s / 10;
    let down = 10 * tens;
    let up = down + 10;
    let down_inside = vbl + open <= down << 2;
    let up_inside = (up << 2) + open <= vbr;
    let t = s + 1;
    let s_inside = vbl + open <= s << 2;
    let t_inside = (t << 2) + open <= vbr;
    // Both inside (or, by the argument above, never neither): the nearer, a tie to the even.
    let midpoint = (s + t) << 1;
    let take_t = (vb > midpoint) | ((vb == midpoint) & (s & 1 == 1));
    let take_t = if s_inside == t_inside { take_t } else { t_inside };
    let one_more = select(take_t, t, s);
    // A multiple of ten inside is one digit shorter (below 10, `down` would be zero); it is
    // returned without its last zero, so that random values seldom have zeros to strip.
    let shorter = (s >= 10) & (down_inside != up_inside);
    let shorter_digits = select(down_inside, tens, tens + 1);
    (select(shorter, shorter_digits, one_more), k + i32::from(shorter))
}

/// `if condition { a } else { b }` as arithmetic, so that no branch is predicted.
#[inline]
fn select(condition: bool, a: u32, b: u32) -> u32 {
    let mask = 0u32.wrapping_sub(u32::from(condition));
    (a & mask) | (b & !mask)
}

/// `product / 2^95`, with the lowest bit set when anything below it was cut off.
#[inline]
fn round_to_odd(product: u128) -> u32 {
    let high = (product >> 64) as u64;
    let kept = (high >> 31) as u32;
    let sticky = u32::from(high & 0xffff_ffff != 0);
    kept | sticky
}

/// How a value of binary exponent `q` is scaled to decimal: by `10^-k ≈ g · 2^(f - 62)`,
/// with the operand shifted by `h` so that the scaled values' units land at bit 95 of the
/// product, 31 bits above the rounding bits.
#[derive(Clone, Copy, Debug)]
struct Scaling {
    g: u64,
    k: i32,
    h: i32,
}

const fn scaling(q: i32, k: i32) -> Scaling {
    Scaling { g: POW10_INV[(k - FIRST_K) as usize] + 1, k, h: q + floor_log2_pow10(-k) + 33 }
}

/// The scaling of every binary exponent from -149 on (256 entries, so that even the
/// exponent of infinities indexes it), for values whose neighbours are equally far: all
/// but powers of two. Computed at compile time; a lookup instead of two multiplications on
/// the path of every printed float.
const SCALINGS: [Scaling; 256] = {
    let mut table = [Scaling { g: 0, k: 0, h: 0 }; 256];
    let mut i = 0;
    while i < table.len() {
        let q = SMALLEST_EXPONENT + i as i32;
        table[i] = scaling(q, floor_log10_pow2(q));
        i += 1;
    }
    table
};

/// `⌊q · log10(2)⌋` for |q| well beyond the f32 range (the constant is log10(2)·2^41).
const fn floor_log10_pow2(q: i32) -> i32 {
    ((q as i64 * 661_971_961_083) >> 41) as i32
}

/// `⌊log10(3/4 · 2^q)⌋`.
const fn floor_log10_three_quarters_pow2(q: i32) -> i32 {
    ((q as i64 * 661_971_961_083 - 274_743_187_321) >> 41) as i32
}

/// `⌊e · log2(10)⌋` (the constant is log2(10)·2^38).
const fn floor_log2_pow10(e: i32) -> i32 {
    ((e as i64 * 913_124_641_741) >> 38) as i32
}

/// The smallest `k` the f32 range needs (`⌊-149 · log10 2⌋`); the largest is 31.
const FIRST_K: i32 = -45;

/// `⌊10^-k · 2^(62 - ⌊-k·log2 10⌋)⌋`, the 63 leading bits of 10^-k, from `k = FIRST_K` on
/// (data: exact powers of ten, recomputed by the test `table_holds_leading_bits_of_powers_of_ten`).
const POW10_INV: [u64; 77] = [
    0x59aedfc10d7279c5, // k = -45
    0x47bf19673df52e37, // k = -44
    0x72cb5bd86321e38c, // k = -43
    0x5bd5e313828182d6, // k = -42
    0x4977e8dc68679bdf, // k = -41
    0x758ca7c70d7292fe, // k = -40
    0x5e0a1fd271287598, // k = -39
    0x4b3b4ca85a86c47a, // k = -38
    0x785ee10d5da46d90, // k = -37
    0x604be73de4838ad9, // k = -36
    0x4d0985cb1d3608ae, // k = -35
    0x7b426fab61f00de3, // k = -34
    0x629b8c891b267182, // k = -33
    0x4ee2d6d415b85ace, // k = -32
    0x7e37be2022c0914b, // k = -31
    0x64f964e68233a76f, // k = -30
    0x50c783eb9b5c85f2, // k = -29
    0x409f9cbc7c4a04c2, // k = -28
    0x6765c793fa10079d, // k = -27
    0x52b7d2dcc80cd2e4, // k = -26
    0x422ca8b0a00a4250, // k = -25
    0x69e10de76676d080, // k = -24
    0x54b40b1f852bda00, // k = -23
    0x43c33c1937564800, // k = -22
    0x6c6b935b8bbd4000, // k = -21
    0x56bc75e2d6310000, // k = -20
    0x4563918244f40000, // k = -19
    0x6f05b59d3b200000, // k = -18
    0x58d15e1762800000, // k = -17
    0x470de4df82000000, // k = -16
    0x71afd498d0000000, // k = -15
    0x5af3107a40000000, // k = -14
    0x48c2739500000000, // k = -13
    0x746a528800000000, // k = -12
    0x5d21dba000000000, // k = -11
    0x4a817c8000000000, // k = -10
    0x7735940000000000, // k = -9
    0x5f5e100000000000, // k = -8
    0x4c4b400000000000, // k = -7
    0x7a12000000000000, // k = -6
    0x61a8000000000000, // k = -5
    0x4e20000000000000, // k = -4
    0x7d00000000000000, // k = -3
    0x6400000000000000, // k = -2
    0x5000000000000000, // k = -1
    0x4000000000000000, // k = 0
    0x6666666666666666, // k = 1
    0x51eb851eb851eb85, // k = 2
    0x4189374bc6a7ef9d, // k = 3
    0x68db8bac710cb295, // k = 4
    0x53e2d6238da3c211, // k = 5
    0x431bde82d7b634da, // k = 6
    0x6b5fca6af2bd215e, // k = 7
    0x55e63b88c230e77e, // k = 8
    0x44b82fa09b5a52cb, // k = 9
    0x6df37f675ef6eadf, // k = 10
    0x57f5ff85e592557f, // k = 11
    0x465e6604b7a84465, // k = 12
    0x709709a125da0709, // k = 13
    0x5a126e1a84ae6c07, // k = 14
    0x480ebe7b9d58566c, // k = 15
    0x734aca5f6226f0ad, // k = 16
    0x5c3bd5191b525a24, // k = 17
    0x49c97747490eae83, // k = 18
    0x760f253edb4ab0d2, // k = 19
    0x5e72843249088d75, // k = 20
    0x4b8ed0283a6d3df7, // k = 21
    0x78e480405d7b9658, // k = 22
    0x60b6cd004ac94513, // k = 23
    0x4d5f0a66a23a9da9, // k = 24
    0x7bcb43d769f762a8, // k = 25
    0x63090312bb2c4eed, // k = 26
    0x4f3a68dbc8f03f24, // k = 27
    0x7ec3daf941806506, // k = 28
    0x65697bfa9acd1d9f, // k = 29
    0x51212ffbaf0a7e18, // k = 30
    0x40e7599625a1fe7a, // k = 31
];

#[cfg(test)]
mod tests {
    use super::*;

    /// ryu's digits and exponent for the same value, trailing zeros removed.
    fn ryu_digits(v: f32) -> (u32, i32) {
        let mut buffer = ryu::Buffer::new();
        let text = buffer.format_finite(v.abs());
        let (mantissa, exp) = text.split_once('e').map_or((text, 0), |(m, e)| (m, e.parse::<i32>().unwrap_or(0)));
        let fraction_len = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
        let digits: u64 = mantissa.replace('.', "").parse().unwrap_or(0);
        stripped(digits, exp - fraction_len)
    }

    fn stripped(mut digits: u64, mut exp: i32) -> (u32, i32) {
        while digits != 0 && digits.is_multiple_of(10) {
            digits /= 10;
            exp += 1;
        }
        (digits as u32, exp)
    }

    fn ours(v: f32) -> (u32, i32) {
        let (digits, exp) = shortest(v.to_bits());
        stripped(u64::from(digits), exp)
    }

    #[test]
    fn agrees_with_ryu_on_a_sample_of_every_exponent() {
        let mut checked = 0u64;
        // Every 251st bit pattern: about 8.5 million values, every exponent, both signs.
        for bits in (1..0x7f80_0000u32).step_by(251) {
            let v = f32::from_bits(bits);
            assert_eq!(ours(v), ryu_digits(v), "{v:e} ({bits:#x})");
            assert_eq!(ours(-v), ours(v));
            checked += 1;
        }
        // Powers of two (the uneven interval) and their neighbours, at every exponent.
        for biased in 0..255u32 {
            for fraction in [0, 1, 2, 3, 0x7f_fffe, 0x7f_ffff] {
                let bits = biased << 23 | fraction;
                if bits != 0 {
                    let v = f32::from_bits(bits);
                    assert_eq!(ours(v), ryu_digits(v), "{v:e} ({bits:#x})");
                    checked += 1;
                }
            }
        }
        // The smallest subnormals, where the scaled value has one or two digits.
        for bits in 1..20_000u32 {
            let v = f32::from_bits(bits);
            assert_eq!(ours(v), ryu_digits(v), "{v:e} ({bits:#x})");
            checked += 1;
        }
        // Decimal-looking values and integers, where ties and the integer path are taken.
        for i in 1..200_000u32 {
            for v in [i as f32, i as f32 / 1000.0, i as f32 * 1e-6, i as f32 * 1e30, i as f32 / 7.0] {
                assert_eq!(ours(v), ryu_digits(v), "{v:e}");
                checked += 1;
            }
        }
        assert!(checked > 9_000_000);
    }

    /// All 2^31 positive f32 values; run with `--release --ignored` (about a minute on two
    /// cores). Kept out of the default run, which checks a sample of every exponent.
    #[test]
    #[ignore = "exhaustive: run with `cargo test --release -p onnx-core shortest_f32 -- --ignored`"]
    fn agrees_with_ryu_on_every_f32() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let end = 0x7f80_0000u32;
        std::thread::scope(|scope| {
            for t in 0..threads {
                scope.spawn(move || {
                    let mut bits = 1 + t;
                    while bits < end {
                        let v = f32::from_bits(bits);
                        assert_eq!(ours(v), ryu_digits(v), "{v:e} ({bits:#x})");
                        bits += threads;
                    }
                });
            }
        });
    }

    /// Little-endian 64-bit limbs, just enough arithmetic to recompute the table exactly.
    #[derive(Clone)]
    struct Big(Vec<u64>);

    impl Big {
        fn from(v: u64) -> Big {
            Big(vec![v])
        }
        fn times(mut self, m: u64) -> Big {
            let mut carry = 0u128;
            for limb in &mut self.0 {
                let product = u128::from(*limb) * u128::from(m) + carry;
                *limb = product as u64;
                carry = product >> 64;
            }
            if carry != 0 {
                self.0.push(carry as u64);
            }
            self
        }
        fn shifted(mut self, bits: u32) -> Big {
            for _ in 0..bits {
                self = self.times(2);
            }
            self
        }
        fn pow10(n: u32) -> Big {
            (0..n).fold(Big::from(1), |b, _| b.times(10))
        }
        fn bit_length(&self) -> u32 {
            let top = self.0.iter().rposition(|&l| l != 0).unwrap_or(0);
            top as u32 * 64 + (64 - self.0[top].leading_zeros())
        }
        /// Comparable: trailing zero limbs removed, then compared by length and limbs.
        fn key(&self) -> (usize, Vec<u64>) {
            let mut limbs = self.0.clone();
            while limbs.len() > 1 && limbs.last() == Some(&0) {
                limbs.pop();
            }
            (limbs.len(), limbs.iter().rev().copied().collect())
        }
    }

    #[test]
    fn table_holds_leading_bits_of_powers_of_ten() {
        for (i, &g) in POW10_INV.iter().enumerate() {
            let k = FIRST_K + i as i32;
            let f = floor_log2_pow10(-k);
            // g · 2^(f-62) ≤ 10^-k < (g+1) · 2^(f-62), both sides scaled to integers.
            let (low, high, value) = if k <= 0 {
                let p = Big::pow10((-k) as u32);
                let shift = (f - 62).max(0) as u32;
                let scale = (62 - f).max(0) as u32;
                (Big::from(g).shifted(shift), Big::from(g + 1).shifted(shift), p.shifted(scale))
            } else {
                // 10^-k · 2^(62-f) between g and g+1  ⇔  g · 10^k ≤ 2^(62-f) < (g+1) · 10^k.
                let p = Big::pow10(k as u32);
                (p.clone().times(g), p.times(g + 1), Big::from(1).shifted((62 - f) as u32))
            };
            assert!(low.key() <= value.key() && value.key() < high.key(), "k = {k}");
        }
    }

    #[test]
    fn logarithm_shortcuts_are_exact_over_the_f32_range() {
        // Every power scaled by 2^151 · 10^45 to be an integer: 10^k ↦ 10^(k+45) · 2^151,
        // 2^q ↦ 2^(q+151) · 10^45, 3/4 · 2^q ↦ 3 · 2^(q+149) · 10^45.
        let ten = |k: i32| Big::pow10((k + 45) as u32).shifted(151);
        let within = |k: i32, x: &Big| ten(k).key() <= x.key() && x.key() < ten(k + 1).key();
        for q in -149..=104i32 {
            let two = Big::pow10(45).shifted((q + 151) as u32);
            assert!(within(floor_log10_pow2(q), &two), "q = {q}");
            let three_quarters = Big::pow10(45).times(3).shifted((q + 149) as u32);
            assert!(within(floor_log10_three_quarters_pow2(q), &three_quarters), "q = {q}");
        }
        for k in FIRST_K..=31 {
            // ⌊-k·log2 10⌋ = f  ⇔  2^f ≤ 10^-k < 2^(f+1), as in the table test.
            let f = floor_log2_pow10(-k);
            let p = Big::pow10(k.unsigned_abs());
            let expected = if k <= 0 { p.bit_length() as i32 - 1 } else { -(p.bit_length() as i32) };
            assert_eq!(f, expected, "k = {k}");
        }
    }
}
