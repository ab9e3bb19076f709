//! The element types narrower than a byte or without native arithmetic: the float8 family,
//! float8e8m0, float4e2m1 and the 4- and 2-bit integers. Values are held one code per
//! element (unpacked; packing happens only when writing a tensor), decoded to f64 for
//! arithmetic, and encoded back by rounding to the nearest representable value, ties to
//! even, saturating or not as Cast's `saturate` says.

use crate::error::{KernelError, bad_input};
use onnx_core::ir::DataType;

/// Whether values of `dt` are held as codes.
pub fn is_coded(dt: DataType) -> bool {
    bits(dt).is_some()
}

/// Bits per element of a coded type.
pub fn bits(dt: DataType) -> Option<u32> {
    Some(match dt {
        DataType::Float8e4m3fn
        | DataType::Float8e4m3fnuz
        | DataType::Float8e5m2
        | DataType::Float8e5m2fnuz
        | DataType::Float8e8m0 => 8,
        DataType::Float4e2m1 | DataType::Int4 | DataType::Uint4 => 4,
        DataType::Int2 | DataType::Uint2 => 2,
        _ => return None,
    })
}

/// Whether a coded type holds integers.
pub fn is_integer(dt: DataType) -> bool {
    matches!(dt, DataType::Int4 | DataType::Uint4 | DataType::Int2 | DataType::Uint2)
}

/// The value of `code`.
pub fn decode(dt: DataType, code: u8) -> f64 {
    match dt {
        DataType::Int4 => f64::from(((code << 4) as i8) >> 4),
        DataType::Uint4 => f64::from(code & 0xF),
        DataType::Int2 => f64::from(((code << 6) as i8) >> 6),
        DataType::Uint2 => f64::from(code & 0x3),
        DataType::Float8e8m0 => {
            if code == 0xFF {
                f64::NAN
            } else {
                2f64.powi(i32::from(code) - 127)
            }
        }
        DataType::Float4e2m1 => minifloat(code & 0xF, 2, 1, 1, Special::None),
        DataType::Float8e4m3fn => minifloat(code, 4, 3, 7, Special::AllOnesNan),
        DataType::Float8e4m3fnuz => minifloat(code, 4, 3, 8, Special::NegativeZeroNan),
        DataType::Float8e5m2 => minifloat(code, 5, 2, 15, Special::Ieee),
        DataType::Float8e5m2fnuz => minifloat(code, 5, 2, 16, Special::NegativeZeroNan),
        _ => f64::NAN,
    }
}

/// How a small float format spends its special codes.
#[derive(Clone, Copy, PartialEq)]
enum Special {
    /// Every code is a finite number.
    None,
    /// Only S.1111.111 is NaN (E4M3FN); no infinity.
    AllOnesNan,
    /// The code of negative zero is NaN (the FNUZ types); no infinity, no -0.
    NegativeZeroNan,
    /// IEEE: an all-ones exponent is infinity (mantissa 0) or NaN.
    Ieee,
}

fn minifloat(code: u8, exp_bits: u32, man_bits: u32, bias: i32, special: Special) -> f64 {
    let width = 1 + exp_bits + man_bits;
    let sign_bit = 1u8 << (width - 1);
    let negative = code & sign_bit != 0;
    let exp = i32::from((code >> man_bits) & ((1 << exp_bits) - 1) as u8);
    let man = f64::from(code & ((1 << man_bits) - 1) as u8);
    let all_ones = exp == (1 << exp_bits) - 1;
    match special {
        Special::NegativeZeroNan if code == sign_bit => return f64::NAN,
        Special::AllOnesNan if all_ones && man as u32 == (1 << man_bits) - 1 => return f64::NAN,
        Special::Ieee if all_ones => {
            return if man == 0.0 { if negative { f64::NEG_INFINITY } else { f64::INFINITY } } else { f64::NAN };
        }
        _ => {}
    }
    let scale = f64::from(1u32 << man_bits);
    let magnitude =
        if exp == 0 { man / scale * 2f64.powi(1 - bias) } else { (1.0 + man / scale) * 2f64.powi(exp - bias) };
    if negative { -magnitude } else { magnitude }
}

/// The code of the value nearest `x` (ties to the even code), saturating to the largest
/// finite value when `saturate`, else overflowing to infinity or NaN as the type has them.
pub fn encode(dt: DataType, x: f64, saturate: bool) -> u8 {
    if is_integer(dt) {
        // Cast wraps, as it does into the wider integers (QuantizeLinear clamps first).
        let mask = (1u16 << bits(dt).unwrap_or(8)) - 1;
        return ((x.round_ties_even() as i64) as u16 & mask) as u8;
    }
    if dt == DataType::Float8e8m0 {
        return encode_e8m0(x, "up", saturate);
    }
    // float4e2m1 has no NaN: onnx gives negative zero's code.
    if dt == DataType::Float4e2m1 && x.is_nan() {
        return 0x8;
    }
    let table = finite_codes(dt);
    let nan = nan_code(dt);
    if x.is_nan() {
        return nan;
    }
    let Some(&(max, max_code)) = table.last() else { return nan };
    let magnitude = x.abs();
    // The positive code nearest |x| (then the sign), ties to the even code.
    let position = table.partition_point(|&(v, _)| v < magnitude);
    let code = if position >= table.len() {
        let previous = table.get(table.len().wrapping_sub(2)).map_or(max, |p| p.0);
        let overflow = magnitude.is_infinite()
            || magnitude - max > (max - previous) / 2.0
            || (magnitude - max == (max - previous) / 2.0 && max_code & 1 == 1);
        if !overflow || saturate {
            max_code
        } else {
            return infinity_code(dt, x < 0.0).unwrap_or(nan);
        }
    } else if position == 0 {
        table[0].1
    } else {
        let (below, above) = (table[position - 1], table[position]);
        let (d_below, d_above) = (magnitude - below.0, above.0 - magnitude);
        if d_below < d_above || (d_below == d_above && below.1 & 1 == 0) { below.1 } else { above.1 }
    };
    if dt == DataType::Float8e8m0 {
        return code;
    }
    let negative = x < 0.0 || (x == 0.0 && x.is_sign_negative());
    let sign = 1u8 << (bits(dt).unwrap_or(8) - 1);
    // The FNUZ types have no negative zero (its code is NaN).
    let fnuz = matches!(dt, DataType::Float8e4m3fnuz | DataType::Float8e5m2fnuz);
    if negative && !(fnuz && code == 0) { code | sign } else { code }
}

/// float8e8m0 (a power of two, 2^-127 to 2^127): the exponent of `x` rounded `up`,
/// `down` or to `nearest`, as Cast's `round_mode` says.
pub fn encode_e8m0(x: f64, mode: &str, saturate: bool) -> u8 {
    if x.is_nan() || (x.is_infinite() && !saturate) {
        return 0xFF;
    }
    if x <= 0.0 {
        return 0;
    }
    let e = x.log2();
    let exponent = match mode {
        "down" => e.floor(),
        "nearest" => e.round(),
        _ => e.ceil(),
    };
    let code = exponent + 127.0;
    if code > 254.0 { if saturate { 0xFE } else { 0xFF } } else { code.max(0.0) as u8 }
}

/// The non-negative finite codes of a float type, by value.
fn finite_codes(dt: DataType) -> Vec<(f64, u8)> {
    let count = 1u16 << bits(dt).unwrap_or(8);
    let sign = if dt == DataType::Float8e8m0 { 0 } else { count / 2 };
    let mut table: Vec<(f64, u8)> = (0..count)
        .filter(|&c| sign == 0 || c < sign)
        .map(|c| (decode(dt, c as u8), c as u8))
        .filter(|(v, _)| v.is_finite())
        .collect();
    table.sort_by(|a, b| a.0.total_cmp(&b.0));
    table
}

fn nan_code(dt: DataType) -> u8 {
    match dt {
        DataType::Float8e4m3fn => 0x7F,
        DataType::Float8e5m2 => 0x7E,
        DataType::Float8e8m0 => 0xFF,
        // No NaN in float4e2m1: the spec maps it to the largest magnitude (6.0), sign kept.
        DataType::Float4e2m1 => 0x7,
        _ => 0x80,
    }
}

fn infinity_code(dt: DataType, negative: bool) -> Option<u8> {
    match dt {
        DataType::Float8e5m2 => Some(if negative { 0xFC } else { 0x7C }),
        _ => None,
    }
}

/// Unpacks `count` codes from packed bytes (low bits first).
pub fn unpack(dt: DataType, bytes: &[u8], count: usize) -> Result<Vec<u8>, KernelError> {
    let per_byte = (8 / bits(dt).ok_or(bad_input!("not a coded type"))?) as usize;
    if bytes.len() != count.div_ceil(per_byte) {
        return Err(bad_input!("{} bytes hold {count} {} values", bytes.len(), dt.name()));
    }
    let width = 8 / per_byte;
    let mask = ((1u16 << width) - 1) as u8;
    Ok((0..count).map(|i| (bytes[i / per_byte] >> ((i % per_byte) * width)) & mask).collect())
}

/// Packs codes into bytes (low bits first).
pub fn pack(dt: DataType, codes: &[u8]) -> Vec<u8> {
    let per_byte = (8 / bits(dt).unwrap_or(8)) as usize;
    let width = 8 / per_byte;
    let mask = ((1u16 << width) - 1) as u8;
    codes
        .chunks(per_byte)
        .map(|c| c.iter().enumerate().fold(0u8, |b, (i, &v)| b | ((v & mask) << (i * width))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_decode() {
        assert_eq!(decode(DataType::Float8e4m3fn, 0x7E), 448.0);
        assert!(decode(DataType::Float8e4m3fn, 0x7F).is_nan());
        assert_eq!(decode(DataType::Float8e5m2, 0x7B), 57344.0);
        assert_eq!(decode(DataType::Float8e5m2, 0x7C), f64::INFINITY);
        assert!(decode(DataType::Float8e4m3fnuz, 0x80).is_nan());
        assert_eq!(decode(DataType::Float4e2m1, 0x7), 6.0);
        assert_eq!(decode(DataType::Float4e2m1, 0xF), -6.0);
        assert_eq!(decode(DataType::Int4, 0xF), -1.0);
        assert_eq!(decode(DataType::Float8e8m0, 127), 1.0);
    }

    #[test]
    fn every_finite_code_encodes_back_to_itself() {
        for dt in [
            DataType::Float8e4m3fn,
            DataType::Float8e4m3fnuz,
            DataType::Float8e5m2,
            DataType::Float8e5m2fnuz,
            DataType::Float4e2m1,
        ] {
            for code in 0..(1u16 << bits(dt).unwrap_or(8)) {
                let v = decode(dt, code as u8);
                if v.is_finite() && !(v == 0.0 && code != 0) {
                    assert_eq!(encode(dt, v, true), code as u8, "{} code {code:#x} = {v}", dt.name());
                }
            }
        }
    }

    #[test]
    fn overflow_saturates_or_not() {
        assert_eq!(encode(DataType::Float8e4m3fn, 1e6, true), 0x7E);
        assert_eq!(encode(DataType::Float8e4m3fn, 1e6, false), 0x7F);
        assert_eq!(encode(DataType::Float8e5m2, -1e9, false), 0xFC);
    }

    #[test]
    fn packing_round_trips() {
        let codes = [1u8, 2, 3, 0, 3];
        assert_eq!(unpack(DataType::Uint2, &pack(DataType::Uint2, &codes), 5), Ok(codes.to_vec()));
    }
}
