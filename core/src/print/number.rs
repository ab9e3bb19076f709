//! Number formatting that reads back exactly: the shortest digits that round-trip, laid out
//! like C++ `std::to_chars` without a format (fixed or scientific, whichever is shorter, a
//! tie going to fixed; the exponent signed and at least two digits). This is what onnx's
//! printer writes, and it makes every float survive text → binary unchanged.
//!
//! The digits come from `ryu` (dtolnay's port of Ulf Adams' Ryū, the algorithm behind C++
//! `to_chars`): it finds the same shortest digits, including the round-half-to-even choice
//! between two equally near candidates where Rust's own `{:e}` may pick the other one, and it
//! formats into a stack buffer, so printing millions of values allocates nothing per value.

/// Formats an f32 as onnx does.
pub fn f32_text(v: f32) -> String {
    let mut out = String::new();
    write_f32(&mut out, v);
    out
}

/// Formats an f64 as onnx does.
pub fn f64_text(v: f64) -> String {
    let mut out = String::new();
    write_f64(&mut out, v);
    out
}

/// Appends an f32 as onnx writes it.
pub fn write_f32(out: &mut String, v: f32) {
    if !v.is_finite() || v == 0.0 {
        special(out, v.is_nan(), v.is_infinite(), v.is_sign_negative(), v == 0.0);
        return;
    }
    let mut buffer = ryu::Buffer::new();
    write_finite(out, buffer.format_finite(v));
}

/// Appends an f64 as onnx writes it.
pub fn write_f64(out: &mut String, v: f64) {
    if !v.is_finite() || v == 0.0 {
        special(out, v.is_nan(), v.is_infinite(), v.is_sign_negative(), v == 0.0);
        return;
    }
    let mut buffer = ryu::Buffer::new();
    write_finite(out, buffer.format_finite(v));
}

/// Appends ryu's text of a finite non-zero value (`-` included) in `to_chars`' layout.
#[inline]
fn write_finite(out: &mut String, ryu_text: &str) {
    let negative = ryu_text.starts_with('-');
    let magnitude = &ryu_text[usize::from(negative)..];
    if fixed_as_is(magnitude.as_bytes()) {
        out.push_str(ryu_text);
    } else {
        lay_out(out, negative, magnitude);
    }
}

/// Appends an integer.
pub fn write_int<I: itoa::Integer>(out: &mut String, v: &I) {
    out.push_str(itoa::Buffer::new().format(*v));
}

/// NaN, infinities and zeros; false for every other value.
fn special(out: &mut String, nan: bool, infinite: bool, negative: bool, zero: bool) -> bool {
    let sign = if negative { "-" } else { "" };
    let word = match (nan, infinite, zero) {
        (true, _, _) => "nan",
        (_, true, _) => "inf",
        (_, _, true) => "0",
        _ => return false,
    };
    out.push_str(sign);
    out.push_str(word);
    true
}

/// Whether ryu's text is already what `to_chars` writes, as it is for most values: fixed
/// notation with a fraction (`12.5`, `0.0751`) that is no longer than the scientific form.
/// Integers (`100000.0`), exponents and long runs of leading zeros take the general path.
#[inline]
fn fixed_as_is(text: &[u8]) -> bool {
    let n = text.len();
    // ryu writes integers as `d.0`, and an exponent (`e-7`, `e-324`) only at the end.
    if n < 3 || text[n - 2..] == *b".0" || text[n.saturating_sub(5)..].contains(&b'e') {
        return false;
    }
    // Without an exponent ryu's text has a point: `d…d.d…d` or `0.0…0d…d`.
    if text[0] != b'0' {
        return true;
    }
    if text[1] != b'.' {
        return false;
    }
    // `0.0…0d…d`: ryu writes this form down to 1e-5, where the exponent has two digits.
    let zeros = text[2..].iter().take_while(|&&b| b == b'0').count();
    let digits = text.len() - 2 - zeros;
    text.len() <= digits + usize::from(digits > 1) + 4
}

/// Significant digits (no leading or trailing zeros) and the decimal exponent of the first.
struct Shortest {
    digits: [u8; 32],
    len: usize,
    exp: i32,
}

/// Reads ryu's output (`123.0`, `0.001`, `1.5e-7`, `1e16`) back into digits and exponent,
/// byte by byte (this runs once per printed float).
fn decompose(text: &[u8]) -> Shortest {
    let mut digits = [0u8; 32];
    let (mut len, mut fraction_len, mut after_point) = (0usize, 0i32, false);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == b'e' || b == b'E' {
            break;
        }
        if b == b'.' {
            after_point = true;
        } else {
            fraction_len += i32::from(after_point);
            if !(len == 0 && b == b'0') && len < digits.len() {
                digits[len] = b;
                len += 1;
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
            exp10 = exp10 * 10 + i32::from(text[j] - b'0');
            j += 1;
        }
        if negative {
            exp10 = -exp10;
        }
    }
    let mut trailing_zeros = 0;
    while len > 1 && digits[len - 1] == b'0' {
        len -= 1;
        trailing_zeros += 1;
    }
    Shortest { digits, len, exp: len as i32 - 1 + exp10 - fraction_len + trailing_zeros }
}

/// Writes the shorter of the fixed and scientific forms (fixed on a tie), as `to_chars`.
/// The text is assembled in a stack buffer and appended once.
fn lay_out(out: &mut String, negative: bool, ryu_text: &str) {
    let Shortest { digits, len, exp } = decompose(ryu_text.as_bytes());
    let digits = &digits[..len.max(1)];
    let n = digits.len() as i32;
    let magnitude = exp.unsigned_abs();
    let exp_digits = if magnitude >= 100 { 3 } else { 2 };
    let scientific_len = n + i32::from(n > 1) + 2 + exp_digits;
    let fixed_len = if exp < 0 {
        1 + 1 + (-exp - 1) + n
    } else if exp + 1 >= n {
        exp + 1
    } else {
        n + 1
    };
    // The chosen form is at most as long as the scientific one: a sign, 17 digits, a point
    // and a 5-character exponent fit.
    let mut buffer = [0u8; 32];
    let mut w = Writer { buffer: &mut buffer, len: 0 };
    if negative {
        w.byte(b'-');
    }
    if scientific_len < fixed_len {
        w.byte(digits[0]);
        if n > 1 {
            w.byte(b'.');
            w.bytes(&digits[1..]);
        }
        w.byte(b'e');
        w.byte(if exp < 0 { b'-' } else { b'+' });
        if magnitude >= 100 {
            w.byte(b'0' + (magnitude / 100) as u8);
        }
        w.byte(b'0' + (magnitude / 10 % 10) as u8);
        w.byte(b'0' + (magnitude % 10) as u8);
    } else if exp < 0 {
        w.bytes(b"0.");
        for _ in 0..(-exp - 1) {
            w.byte(b'0');
        }
        w.bytes(digits);
    } else if exp + 1 >= n {
        w.bytes(digits);
        for _ in 0..(exp + 1 - n) {
            w.byte(b'0');
        }
    } else {
        let (int, frac) = digits.split_at((exp + 1) as usize);
        w.bytes(int);
        w.byte(b'.');
        w.bytes(frac);
    }
    let len = w.len;
    // Only ASCII digits, signs, '.', 'e' were written.
    out.push_str(std::str::from_utf8(&buffer[..len]).unwrap_or("0"));
}

struct Writer<'b> {
    buffer: &'b mut [u8],
    len: usize,
}

impl Writer<'_> {
    fn byte(&mut self, b: u8) {
        if let Some(slot) = self.buffer.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The shortcut that keeps ryu's text as it is must agree with the general layout.
    #[test]
    fn ryu_text_kept_as_is_only_when_to_chars_writes_the_same() {
        let general = |negative: bool, magnitude: &str| {
            let mut out = String::new();
            lay_out(&mut out, negative, magnitude);
            out
        };
        let mut checked = 0;
        // Every 4099th f32 bit pattern (about a million values, all exponents), both signs.
        for bits in (1..0x7f80_0000u32).step_by(4099) {
            for v in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let mut buffer = ryu::Buffer::new();
                let magnitude = buffer.format_finite(v.abs()).to_owned();
                assert_eq!(f32_text(v), general(v < 0.0, &magnitude), "{v:e}");
                checked += usize::from(fixed_as_is(magnitude.as_bytes()));
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
                assert_eq!(f64_text(v), general(v < 0.0, &magnitude), "{v:e}");
            }
        }
        // Decimal-looking values, where the shortcut is taken most.
        for i in 1..100_000u32 {
            for v in [i as f32 / 1000.0, i as f32 * 1e-6, i as f32 / 7.0] {
                let mut buffer = ryu::Buffer::new();
                let magnitude = buffer.format_finite(v).to_owned();
                assert_eq!(f32_text(v), general(false, &magnitude), "{v:e}");
                checked += usize::from(fixed_as_is(magnitude.as_bytes()));
            }
        }
        assert!(checked > 300_000, "the shortcut was taken only {checked} times");
    }
}
