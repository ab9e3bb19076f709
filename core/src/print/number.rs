//! Number formatting that reads back exactly: the shortest digits that round-trip, laid out
//! like C++ `std::to_chars` without a format (fixed or scientific, whichever is shorter, a
//! tie going to fixed; the exponent signed and at least two digits). This is what onnx's
//! printer writes, and it makes every float survive text → binary unchanged.
//!
//! The digits of an f32 come from [`shortest_f32`](super::shortest_f32) (ours, the hot path
//! of printing big models); those of an f64 from `ryu` (dtolnay's port of Ulf Adams' Ryū, the
//! algorithm behind C++ `to_chars`). Both find the same shortest digits as `to_chars`,
//! including the round-half-to-even choice between two equally near candidates where Rust's
//! own `{:e}` may pick the other one, and neither allocates per value.

use super::shortest_f32;

/// Formats an f32 as onnx does.
pub fn f32_text(v: f32) -> String {
    let mut out = Vec::new();
    push_f32(&mut out, v);
    ascii_string(out)
}

/// Formats an f64 as onnx does.
pub fn f64_text(v: f64) -> String {
    let mut out = Vec::new();
    push_f64(&mut out, v);
    ascii_string(out)
}

/// The number writers write bytes (the printers' bulk paths collect them per thread and turn
/// them into text once); what they write is ASCII.
fn ascii_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_default()
}

/// Appends an f32 as onnx writes it.
#[inline]
pub fn push_f32(out: &mut Vec<u8>, v: f32) {
    if !v.is_finite() || v == 0.0 {
        special(out, v.is_nan(), v.is_infinite(), v.is_sign_negative(), v == 0.0);
        return;
    }
    let (digits, exp10) = shortest_f32::shortest(v.to_bits());
    push_f32_decimal(out, v.is_sign_negative(), digits, exp10);
}

/// Appends an f64 as onnx writes it.
pub fn push_f64(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() || v == 0.0 {
        special(out, v.is_nan(), v.is_infinite(), v.is_sign_negative(), v == 0.0);
        return;
    }
    let mut buffer = ryu::Buffer::new();
    let (digits, exp10) = decompose(buffer.format_finite(v.abs()).as_bytes());
    push_decimal(out, v.is_sign_negative(), digits, exp10);
}

/// Appends an integer.
#[inline]
pub fn push_int<I: itoa::Integer>(out: &mut Vec<u8>, v: &I) {
    out.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes());
}

/// NaN, infinities and zeros; false for every other value.
fn special(out: &mut Vec<u8>, nan: bool, infinite: bool, negative: bool, zero: bool) -> bool {
    let sign = if negative { "-" } else { "" };
    let word = match (nan, infinite, zero) {
        (true, _, _) => "nan",
        (_, true, _) => "inf",
        (_, _, true) => "0",
        _ => return false,
    };
    out.extend_from_slice(sign.as_bytes());
    out.extend_from_slice(word.as_bytes());
    true
}

/// Reads ryu's text of a positive value (`123.0`, `0.001`, `1.5e-7`, `1e16`) back into
/// `(digits, exponent)` with `digits · 10^exponent` the value (at most 17 digits).
fn decompose(text: &[u8]) -> (u64, i32) {
    let (mut digits, mut fraction_len, mut after_point) = (0u64, 0i32, false);
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'e' | b'E' => break,
            b'.' => after_point = true,
            b => {
                digits = digits.wrapping_mul(10).wrapping_add(u64::from(b.wrapping_sub(b'0')));
                fraction_len += i32::from(after_point);
            }
        }
        i += 1;
    }
    let mut exp10 = 0i32;
    if i < text.len() {
        let (negative, mut j) = match text.get(i + 1) {
            Some(b'-') => (true, i + 2),
            Some(b'+') => (false, i + 2),
            _ => (false, i + 1),
        };
        while j < text.len() {
            exp10 = exp10 * 10 + i32::from(text[j].wrapping_sub(b'0'));
            j += 1;
        }
        if negative {
            exp10 = -exp10;
        }
    }
    (digits, exp10 - fraction_len)
}

/// The layouts `to_chars` chooses between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// `1.5e-07`, `1e+10`.
    Scientific,
    /// `0.00125`.
    LeadingZeros,
    /// `1250`: the digits, then zeros.
    Integer,
    /// `12.5`.
    Point,
}

/// The shorter of the fixed and scientific forms of `n` significant digits whose first has
/// exponent `exp`, fixed on a tie.
#[inline]
fn form(n: u32, exp: i32) -> Form {
    let n = n as i32;
    let exp_digits = if exp.unsigned_abs() >= 100 { 3 } else { 2 };
    let scientific_len = n + i32::from(n > 1) + 2 + exp_digits;
    let (fixed, fixed_len) = if exp < 0 {
        (Form::LeadingZeros, 1 + 1 + (-exp - 1) + n)
    } else if exp + 1 >= n {
        (Form::Integer, exp + 1)
    } else {
        (Form::Point, n + 1)
    };
    if scientific_len < fixed_len { Form::Scientific } else { fixed }
}

/// Appends `digits · 10^exp10` (`digits` non-zero) as `to_chars` writes it: the general path,
/// for f64 values.
fn push_decimal(out: &mut Vec<u8>, negative: bool, mut digits: u64, mut exp10: i32) {
    while digits != 0 && digits.is_multiple_of(10) {
        digits /= 10;
        exp10 += 1;
    }
    let mut buffer = itoa::Buffer::new();
    let ascii = buffer.format(digits).as_bytes();
    let n = ascii.len();
    // The exponent of the first digit.
    let exp = exp10 + n as i32 - 1;
    if negative {
        out.push(b'-');
    }
    match form(n as u32, exp) {
        Form::Scientific => {
            out.push(ascii[0]);
            if n > 1 {
                out.push(b'.');
                out.extend_from_slice(&ascii[1..]);
            }
            out.extend_from_slice(if exp < 0 { b"e-" } else { b"e+" });
            let magnitude = exp.unsigned_abs();
            if magnitude < 10 {
                out.push(b'0');
            }
            out.extend_from_slice(itoa::Buffer::new().format(magnitude).as_bytes());
        }
        Form::LeadingZeros => {
            out.extend_from_slice(b"0.");
            out.resize(out.len() + (-exp - 1) as usize, b'0');
            out.extend_from_slice(ascii);
        }
        Form::Integer => {
            out.extend_from_slice(ascii);
            out.resize(out.len() + (exp + 1) as usize - n, b'0');
        }
        Form::Point => {
            let (int, frac) = ascii.split_at(exp as usize + 1);
            out.extend_from_slice(int);
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    }
}

/// `'0'` in every byte.
const ASCII_ZEROS: u64 = u64::from_le_bytes([b'0'; 8]);

/// `x` (below 10^8) as eight ASCII digits, the first in the lowest byte: the halves, pairs and
/// digits are split in parallel lanes of one integer (each lane's quotient by 100 or 10 is
/// a multiply and a shift, exact for the lane's range).
#[inline]
fn eight_ascii_digits(x: u32) -> u64 {
    // [abcd, efgh] in 32-bit lanes, then [ab, cd, ef, gh] in 16-bit lanes, then one digit
    // per byte.
    let halves = u64::from(x / 10_000) | u64::from(x % 10_000) << 32;
    let hundreds = ((halves * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let pairs = hundreds | (halves - hundreds * 100) << 16;
    let tens = ((pairs * 103) >> 10) & 0x000f_000f_000f_000f;
    let digits = tens | (pairs - tens * 10) << 8;
    digits + ASCII_ZEROS
}

/// Appends `digits · 10^exp10` (`digits` non-zero, below 10^9) as `to_chars` writes it: the
/// f32 path, the hot loop of printing big models. The digits are made in registers (eight
/// at once) and stored straight into the output at their final places over a block of
/// `'0'`s, which also gives the zeros of `0.001` and `1000`; nothing is written byte by byte
/// and read back, which would stall the processor's store forwarding.
#[inline]
fn push_f32_decimal(out: &mut Vec<u8>, negative: bool, mut digits: u32, mut exp10: i32) {
    while digits != 0 && digits.is_multiple_of(10) {
        digits /= 10;
        exp10 += 1;
    }
    let n = digits.checked_ilog10().unwrap_or(0) as usize + 1;
    // The exponent of the first digit.
    let exp = exp10 + n as i32 - 1;
    // Scaled to exactly nine digits, the first is non-zero and the padding is '0's.
    let nine = digits * POWERS_OF_TEN[9 - n];
    let first = b'0' + (nine / 100_000_000) as u8;
    let rest = eight_ascii_digits(nine % 100_000_000);
    let start = out.len();
    out.extend_from_slice(&[b'0'; 32]);
    let Some(text) = out.get_mut(start..start + 32) else { return };
    text[0] = if negative { b'-' } else { b'0' };
    let at = usize::from(negative);
    let len = match form(n as u32, exp) {
        Form::Scientific => {
            text[at] = first;
            text[at + 1] = b'.';
            text[at + 2..at + 10].copy_from_slice(&rest.to_le_bytes());
            // |exp| ≤ 45 for an f32: two digits.
            let magnitude = exp.unsigned_abs();
            let suffix =
                [b'e', if exp < 0 { b'-' } else { b'+' }, b'0' + (magnitude / 10) as u8, b'0' + (magnitude % 10) as u8];
            // The exponent replaces the point when there is one digit.
            let end = at + 1 + usize::from(n > 1) + (n - 1);
            text[end..end + 4].copy_from_slice(&suffix);
            end + 4
        }
        Form::LeadingZeros => {
            // `0.`, the zeros already there, the digits.
            text[at + 1] = b'.';
            let first_at = at + 1 + exp.unsigned_abs() as usize;
            text[first_at] = first;
            text[first_at + 1..first_at + 9].copy_from_slice(&rest.to_le_bytes());
            first_at + n
        }
        Form::Integer => {
            // The digits, then '0's.
            text[at] = first;
            text[at + 1..at + 9].copy_from_slice(&rest.to_le_bytes());
            at + exp as usize + 1
        }
        Form::Point => {
            // 1 ≤ int ≤ n - 1 ≤ 8 digits before the point.
            let int = exp as usize + 1;
            text[at] = first;
            text[at + 1..at + 9].copy_from_slice(&rest.to_le_bytes());
            text[at + int] = b'.';
            let fraction = rest >> (8 * (int - 1));
            text[at + int + 1..at + int + 9].copy_from_slice(&fraction.to_le_bytes());
            at + n + 1
        }
    };
    out.truncate(start + len);
}

/// 10^0 to 10^8.
const POWERS_OF_TEN: [u32; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value a lane can hold, in both halves: the lane arithmetic is exact for each.
    #[test]
    fn eight_digits_at_once_match_plain_formatting() {
        for x in (0..10_000).chain((0..10_000).map(|high| high * 10_000)).chain([99_999_999, 12_345_678]) {
            let digits = eight_ascii_digits(x).to_le_bytes();
            assert_eq!(std::str::from_utf8(&digits), Ok(format!("{x:08}").as_str()), "{x}");
        }
    }

    #[test]
    fn matches_the_observed_onnx_outputs() {
        let f32s: &[(f32, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (1e5, "1e+05"),
            (123456.0, "123456"),
            (1234567.0, "1234567"),
            (16777216.0, "16777216"),
            (0.1, "0.1"),
            (0.001, "0.001"),
            (1e-4, "1e-04"),
            (1.5e-5, "1.5e-05"),
            (std::f32::consts::PI, "3.1415927"),
            (1.0 / 3.0, "0.33333334"),
            (2.0 / 3.0, "0.6666667"),
            (1e-45, "1e-45"),
            (f32::MAX, "3.4028235e+38"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
            (f32::NAN, "nan"),
            (1e10, "1e+10"),
            (1.25e10, "1.25e+10"),
            (1e-7, "1e-07"),
        ];
        for (v, text) in f32s {
            assert_eq!(f32_text(*v), *text, "{v:e}");
        }
        assert_eq!(f64_text(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(f64_text(5e-324), "5e-324");
        assert_eq!(f64_text(1e300), "1e+300");
        assert_eq!(f32_text(-f32::NAN), "-nan");
        // Exactly halfway between two shortest candidates: the even one, as C++ to_chars.
        let midpoint = 213.0f32 / 512.0; // 0.416015625 exactly
        assert_eq!(f32_text(-midpoint), "-0.41601562");
        assert_eq!(f32_text(midpoint).parse::<f32>(), Ok(midpoint));
    }

    /// The layout against a plain oracle: both forms written out with `format!`, the shorter
    /// kept (fixed on a tie), from ryu's digits.
    fn oracle(negative: bool, ryu_text: &str) -> String {
        let (digits, exp10) = decompose(ryu_text.as_bytes());
        let all = digits.to_string();
        // The exponent of the first digit, then the digits without trailing zeros.
        let exp = exp10 + all.len() as i32 - 1;
        let digits = all.trim_end_matches('0');
        let n = digits.len() as i32;
        let scientific = if n > 1 {
            format!("{}.{}e{}{:02}", &digits[..1], &digits[1..], if exp < 0 { '-' } else { '+' }, exp.abs())
        } else {
            format!("{digits}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
        };
        let fixed = if exp < 0 {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else if exp + 1 >= n {
            format!("{digits}{}", "0".repeat((exp + 1 - n) as usize))
        } else {
            format!("{}.{}", &digits[..(exp + 1) as usize], &digits[(exp + 1) as usize..])
        };
        let sign = if negative { "-" } else { "" };
        let shorter = if scientific.len() < fixed.len() { scientific } else { fixed };
        format!("{sign}{shorter}")
    }

    #[test]
    fn layout_is_the_shorter_form_with_ryus_digits() {
        // Every 4099th f32 bit pattern (about a million values, all exponents), both signs.
        for bits in (1..0x7f80_0000u32).step_by(4099) {
            for v in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let mut buffer = ryu::Buffer::new();
                let magnitude = buffer.format_finite(v.abs()).to_owned();
                assert_eq!(f32_text(v), oracle(v < 0.0, &magnitude), "{v:e}");
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = f64::from_bits(state);
            if v.is_finite() && v != 0.0 {
                let mut buffer = ryu::Buffer::new();
                let magnitude = buffer.format_finite(v.abs()).to_owned();
                assert_eq!(f64_text(v), oracle(v < 0.0, &magnitude), "{v:e}");
            }
        }
        // Decimal-looking values and integers around the fixed/scientific boundaries.
        for i in 1..100_000u32 {
            for v in [i as f32 / 1000.0, i as f32 * 1e-6, i as f32 / 7.0, i as f32 * 100.0] {
                let mut buffer = ryu::Buffer::new();
                let magnitude = buffer.format_finite(v).to_owned();
                assert_eq!(f32_text(v), oracle(false, &magnitude), "{v:e}");
            }
        }
    }
}
