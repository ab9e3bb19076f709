//! Which floats the text writes exactly: every one but a NaN with a payload, which text has no
//! way to write (such a tensor or attribute is embedded as protobuf instead). The checks over
//! many values are folds the compiler turns into vector code.

use super::{Out, unsupported};
use crate::print::number::f32_text;

/// An f32 in text that reads back to the same bits (NaN payloads cannot).
pub(super) fn f32_exact(v: f32) -> Out<String> {
    if nan_with_payload_f32(v) {
        return unsupported("a NaN with a payload");
    }
    Ok(f32_text(v))
}

/// A NaN other than the quiet one text writes as `nan` (its payload cannot be written).
fn nan_with_payload_f32(v: f32) -> bool {
    payload_nan_bits(v.to_bits())
}

/// [`nan_with_payload_f32`] of an f32's bits: a NaN (all exponent bits set, a fraction
/// that is not zero) other than the quiet one. Two comparisons and no branch, so that a fold
/// over many values becomes vector code.
#[inline]
fn payload_nan_bits(bits: u32) -> bool {
    let magnitude = bits & 0x7fff_ffff;
    (magnitude > 0x7f80_0000) & (magnitude != 0x7fc0_0000)
}

/// Whether one of these f32s (as bits) is [a NaN with a payload](nan_with_payload_f32): a
/// fold without an early exit, which the compiler turns into vector code (checking a
/// streamed tensor of millions of values took a twentieth of printing it, value by value).
pub(super) fn any_payload_nan_f32(bits: impl Iterator<Item = u32>) -> bool {
    bits.fold(false, |found, b| found | payload_nan_bits(b))
}

/// [`any_payload_nan_f32`] of little-endian f32 bytes (whole values), read a block of
/// sixteen at a time: value by value the compiler does not make vector code of it.
pub(super) fn any_payload_nan_f32_le(raw: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let blocks = raw.chunks_exact(BLOCK);
    let rest = blocks.remainder();
    let in_blocks = blocks.fold(false, |found, block| {
        let mut words = [0u32; BLOCK / 4];
        for (word, bytes) in words.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        found | any_payload_nan_f32(words.into_iter())
    });
    in_blocks || any_payload_nan_f32(rest.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
}

pub(super) fn nan_with_payload_f64(v: f64) -> bool {
    v.is_nan() && v.to_bits() & 0x7fff_ffff_ffff_ffff != 0x7ff8_0000_0000_0000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vector_payload_check_agrees_with_the_one_value_check() {
        let specials =
            [0u32, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0xffc0_0000, 0x7fc0_0001, 0x7f80_0001];
        for bits in specials.into_iter().chain([0x7fff_ffff, 0xffa0_0000, 0x3f80_0000, 0x0000_0001]) {
            let one = nan_with_payload_f32(f32::from_bits(bits));
            assert_eq!(any_payload_nan_f32([1.5f32.to_bits(), bits, 2.0f32.to_bits()].into_iter()), one, "{bits:#x}");
        }
        assert!(!any_payload_nan_f32(std::iter::empty()));
        // As bytes: in a block of sixteen and in the values after the last block.
        for at in [0, 5, 15, 16, 17, 20] {
            let mut values = [1.5f32; 21];
            values[at] = f32::from_bits(0x7fc0_0001);
            let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert!(any_payload_nan_f32_le(&raw), "at {at}");
            values[at] = f32::NAN;
            let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert!(!any_payload_nan_f32_le(&raw), "quiet NaN at {at}");
        }
    }
}
