//! Number formatting that reads back exactly: the shortest digits that round-trip, laid out
//! like C++ `std::to_chars` without a format (fixed or scientific, whichever is shorter, a
//! tie going to fixed; the exponent signed and at least two digits). This is what onnx's
//! printer writes, and it makes every float survive text → binary unchanged.

/// Formats an f32 as onnx does.
pub fn f32_text(v: f32) -> String {
    // Rust's `{:e}` yields the shortest digits that round-trip for the type.
    layout(v.is_nan(), v.is_infinite(), v.is_sign_negative(), || {
        even_tie(format!("{:e}", v.abs()), f64::from(v.abs()), |t| t.parse::<f32>().ok() == Some(v.abs()))
    })
}

/// Formats an f64 as onnx does.
pub fn f64_text(v: f64) -> String {
    layout(v.is_nan(), v.is_infinite(), v.is_sign_negative(), || {
        even_tie(format!("{:e}", v.abs()), v.abs(), |t| t.parse::<f64>().ok() == Some(v.abs()))
    })
}

/// When the value lies exactly halfway between two shortest candidates, C++ `to_chars`
/// (Ryu) takes the one with the even last digit; Rust may take the other. `sci` is Rust's
/// `D.DDDe±X`; `reads_back` says whether a text parses to the same value.
fn even_tie(sci: String, exact: f64, reads_back: impl Fn(&str) -> bool) -> String {
    let Some((mantissa, exp)) = sci.split_once('e') else { return sci };
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    let Some(&last) = digits.last() else { return sci };
    if last % 2 == 0 {
        return sci;
    }
    let with = |digits: &[u8], extra: &[u8]| -> String {
        let mut all: Vec<u8> = digits.to_vec();
        all.extend_from_slice(extra);
        let text = String::from_utf8(all).unwrap_or_default();
        format!("{}.{}e{exp}", &text[..1], &text[1..])
    };
    // The neighbour candidates, differing in the last digit only (no carry or borrow).
    for (neighbour, midpoint_base) in [(last - 1, last - 1), (last + 1, last)] {
        if !neighbour.is_ascii_digit() || (digits.len() == 1 && neighbour == b'0') {
            continue;
        }
        let mut base = digits.clone();
        *base.last_mut().unwrap_or(&mut 0) = midpoint_base;
        let midpoint = with(&base, b"5");
        if is_exactly(&midpoint, exact) {
            let mut chosen = digits.clone();
            *chosen.last_mut().unwrap_or(&mut 0) = neighbour;
            let text = with(&chosen, b"");
            if reads_back(&text) {
                return text;
            }
        }
    }
    sci
}

/// Whether the decimal `text` is exactly `value` (not merely its nearest float): compare
/// against the value's full decimal expansion, which is finite for every float.
fn is_exactly(text: &str, value: f64) -> bool {
    if text.parse::<f64>().ok() != Some(value) {
        return false;
    }
    // Cheap filter first: printed with two more digits than `text`, an exact match ends in
    // zeros. Only the rare survivors pay for the full expansion.
    let (t_mantissa, _) = text.split_once('e').unwrap_or((text, ""));
    let precision = t_mantissa.len().saturating_sub(2) + 2;
    let nearby = format!("{:.*e}", precision, value);
    let (nearby_mantissa, _) = nearby.split_once('e').unwrap_or((&nearby, ""));
    if nearby_mantissa.trim_end_matches('0').trim_end_matches('.') != t_mantissa {
        return false;
    }
    let expansion = format!("{:.1100e}", value);
    let (digits, exp) = expansion.split_once('e').unwrap_or((&expansion, "0"));
    let digits = digits.trim_end_matches('0').trim_end_matches('.');
    let (t_digits, t_exp) = text.split_once('e').unwrap_or((text, "0"));
    digits == t_digits && exp.parse::<i32>().ok() == t_exp.parse::<i32>().ok()
}

fn layout(nan: bool, infinite: bool, negative: bool, sci: impl FnOnce() -> String) -> String {
    match (nan, negative) {
        (true, true) => "-nan".into(),
        (true, false) => "nan".into(),
        _ => shortest(infinite, negative, &sci()),
    }
}

fn shortest(infinite: bool, negative: bool, sci: &str) -> String {
    let sign = if negative { "-" } else { "" };
    if infinite {
        return format!("{sign}inf");
    }
    // `sci` is `D[.DDD]e[-]X`.
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if digits == "0" {
        return format!("{sign}0");
    }
    let fixed = fixed_form(&digits, exp);
    let mut scientific = String::new();
    scientific.push_str(&digits[..1]);
    if digits.len() > 1 {
        scientific.push('.');
        scientific.push_str(&digits[1..]);
    }
    scientific.push('e');
    scientific.push(if exp < 0 { '-' } else { '+' });
    scientific.push_str(&format!("{:02}", exp.unsigned_abs()));
    let body = if scientific.len() < fixed.len() { scientific } else { fixed };
    format!("{sign}{body}")
}

/// `digits` × 10^(exp − len + 1) written without an exponent.
fn fixed_form(digits: &str, exp: i32) -> String {
    let n = digits.len() as i32;
    if exp < 0 {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    } else if exp + 1 >= n {
        format!("{digits}{}", "0".repeat((exp + 1 - n) as usize))
    } else {
        let (int, frac) = digits.split_at((exp + 1) as usize);
        format!("{int}.{frac}")
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
}
