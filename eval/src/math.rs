//! Float32 functions written to vectorize: no branches and no calls, so that a loop over a
//! tensor compiles to SIMD instructions. The C library's `expf` and libm's `erff` are
//! accurate but one call per element; in a transformer's Softmax and GELU they were most
//! of the run. These stay within two units in the last place of the correctly rounded
//! result (exp, tanh) and 2·10⁻⁷ absolute (erf), far inside onnx's test tolerances; the tests
//! below measure it against f64.
//!
//! The methods are the textbook ones: exp reduces its argument by multiples of ln 2
//! (Cody and Waite) and evaluates the Taylor polynomial on what is left; erf is a
//! polynomial in x² near zero and `1 − e^(−x²)·P(1/x)/x` beyond. The coefficients of the
//! erf polynomials were fitted by us (least squares on Chebyshev points, relative error,
//! against Python's `math.erf`/`math.erfc`).

/// 1.5·2²³: adding it rounds a float32 of magnitude below 2²² to an integer (half to even),
/// which then sits in the low bits of the sum.
const SHIFT: f32 = 12_582_912.0;

/// `e^x`.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // ln 2 in two parts: the high part has nine significant bits, so n·LN2_HI is exact.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Below -104 the result rounds to zero, above 88.8 it overflows; NaN passes through.
    let x = x.clamp(-104.0, 88.8);
    let shifted = x * std::f32::consts::LOG2_E + SHIFT;
    let n = shifted - SHIFT;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // e^r for |r| ≤ 0.35: the Taylor series to r⁷ (the next term is below 6·10⁻⁹).
    let p = 1.0
        + r * (1.0
            + r * (1.0 / 2.0
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // n ∈ [-150, 128]: 2ⁿ as two normal factors, so that subnormal results round once.
    let k = (shifted.to_bits() as i32).wrapping_sub(SHIFT.to_bits() as i32);
    let k1 = k >> 1;
    let k2 = k - k1;
    p * power_of_two(k1) * power_of_two(k2)
}

/// 2ᵏ for k in [-126, 127].
#[inline(always)]
fn power_of_two(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// The error function.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    // erf(x)/x as a polynomial in x² for |x| < 0.921875 (at 0 it is 2/√π).
    const NEAR: [f32; 7] = [
        std::f32::consts::FRAC_2_SQRT_PI,
        -0.376_126_35,
        0.112_837_08,
        -0.026_859_958,
        0.005_202_177,
        -0.000_815_379_1,
        8.411_064e-5,
    ];
    // erfc(x)·e^(x²)·x as a polynomial in 1/x for 0.921875 ≤ x ≤ 4 (erf(4) is 1 in f32).
    const FAR: [f32; 9] = [
        0.563_873_2,
        0.004_884_515_4,
        -0.310_583_2,
        0.062_018_75,
        0.517_030_2,
        -0.833_238_6,
        0.633_519,
        -0.252_173_04,
        0.042_252_78,
    ];
    // Not `min`, which would take NaN to 4.
    let a = x.abs();
    let a = if a > 4.0 { 4.0 } else { a };
    let t = a * a;
    let near = a * horner(&NEAR, t);
    let u = 1.0 / a.max(0.921_875);
    let far = 1.0 - exp(-t) * horner(&FAR, u) * u;
    let magnitude = if a < 0.921_875 { near } else { far };
    // NaN: `a` is NaN, both branches are NaN.
    magnitude.copysign(x)
}

/// The hyperbolic tangent: its Taylor series in x² for |x| < 0.4 (the first omitted term
/// is below 3·10⁻¹⁰ of the result there), `1 − 2/(e^(2|x|) + 1)` beyond, where the result
/// is at least 0.38 and the subtraction loses little.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    // tanh(x)/x in powers of x²: 1, −1/3, 2/15, −17/315, 62/2835, −1382/155925,
    // 21844/6081075, −929569/638512875.
    const NEAR: [f32; 8] = [
        1.0,
        -1.0 / 3.0,
        2.0 / 15.0,
        -17.0 / 315.0,
        62.0 / 2835.0,
        -1382.0 / 155_925.0,
        21844.0 / 6_081_075.0,
        -929_569.0 / 638_512_875.0,
    ];
    let a = x.abs();
    let near = a * horner(&NEAR, a * a);
    // e^(2|x|) is infinite past |x| = 44.4, which gives 1; NaN stays NaN in both branches.
    let far = 1.0 - 2.0 / (exp(2.0 * a) + 1.0);
    let magnitude = if a < 0.4 { near } else { far };
    magnitude.copysign(x)
}

/// The logistic function `1/(1 + e^(−x))`, as `e^(−|x|)/(1 + e^(−|x|))` below zero so that
/// no large exponential is formed.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    let e = exp(-x.abs());
    if x >= 0.0 { 1.0 / (1.0 + e) } else { e / (1.0 + e) }
}

/// GELU with the error function, `x·½·(1 + erf(x/√2))` (onnx's Gelu, onnxruntime's Gelu
/// and BiasGelu).
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// GELU's tanh approximation, `x·½·(1 + tanh(√(2/π)·(x + 0.044715·x³)))` (onnx's Gelu with
/// `approximate = "tanh"`, onnxruntime's FastGelu).
#[inline(always)]
pub fn gelu_tanh(x: f32) -> f32 {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)))
}

/// [`gelu`] in f64.
pub fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + libm::erf(x * std::f64::consts::FRAC_1_SQRT_2))
}

/// [`gelu_tanh`] in f64.
pub fn gelu_tanh_f64(x: f64) -> f64 {
    const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)).tanh())
}

#[inline(always)]
fn horner<const N: usize>(c: &[f32; N], v: f32) -> f32 {
    c.iter().rev().fold(0.0, |acc, &k| acc * v + k)
}

#[cfg(test)]
mod tests {
    /// Units in the last place between `got` and the f64 truth rounded to f32.
    fn ulps(got: f32, want: f64) -> u32 {
        let want = want as f32;
        if got == want {
            return 0;
        }
        (got.to_bits() as i64 - want.to_bits() as i64).unsigned_abs() as u32
    }

    /// Every 97th float32 between -110 and 90 (about 11 million values).
    fn samples(lo: f32, hi: f32) -> impl Iterator<Item = f32> {
        let ordered = |x: f32| if x < 0.0 { -(x.abs().to_bits() as i64) } else { x.to_bits() as i64 };
        (ordered(lo)..ordered(hi))
            .step_by(97)
            .map(|o| if o < 0 { -f32::from_bits((-o) as u32) } else { f32::from_bits(o as u32) })
    }

    /// The largest distance in ulps of `f` from `truth` over `xs`, and where.
    fn worst_ulps(xs: impl Iterator<Item = f32>, f: fn(f32) -> f32, truth: fn(f64) -> f64) -> (u32, f32) {
        xs.map(|x| (ulps(f(x), truth(f64::from(x))), x))
            .fold((0, 0.0), |worst, e| if e.0 > worst.0 { e } else { worst })
    }

    #[test]
    fn exp_is_within_two_ulps() {
        let worst = worst_ulps(samples(-110.0, 90.0), super::exp, f64::exp);
        assert!(worst.0 <= 2, "{} ulps at {}", worst.0, worst.1);
        assert_eq!(super::exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(super::exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(super::exp(0.0), 1.0);
        assert!(super::exp(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_is_within_two_ulps() {
        let worst = worst_ulps(samples(-50.0, 50.0), super::tanh, f64::tanh);
        assert!(worst.0 <= 2, "{} ulps at {}", worst.0, worst.1);
        assert_eq!(super::tanh(f32::INFINITY), 1.0);
        assert_eq!(super::tanh(f32::NEG_INFINITY), -1.0);
        assert_eq!(super::tanh(1e-30), 1e-30);
        assert_eq!(super::tanh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!(super::tanh(f32::NAN).is_nan());
    }

    #[test]
    fn erf_is_within_two_tenths_of_a_millionth() {
        let mut worst = (0.0f64, 0.0f32);
        for x in samples(-6.0, 6.0) {
            let e = (f64::from(super::erf(x)) - libm::erf(f64::from(x))).abs();
            if e > worst.0 {
                worst = (e, x);
            }
        }
        assert!(worst.0 <= 2e-7, "{} at {}", worst.0, worst.1);
        assert_eq!(super::erf(f32::INFINITY), 1.0);
        assert_eq!(super::erf(f32::NEG_INFINITY), -1.0);
        assert_eq!(super::erf(0.0).to_bits(), 0);
        assert_eq!(super::erf(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!(super::erf(f32::NAN).is_nan());
    }
}
