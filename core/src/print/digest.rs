//! A tensor's values in one line (`6.8 KiB; min -0.6702, max 0.6105, mean 0.001234`): what the
//! outline text shows in place of the numbers of a tensor it refers to, and what a person
//! looks at first (a scale of zeros, NaNs, a range far too wide).

use half::{bf16, f16};

use bytes::Bytes;

use crate::external;
use crate::ir::{DataType, Tensor};
use crate::summary::human_bytes;

/// The file's bytes of a tensor, which its digest describes and the outline shows by
/// reference when they are at least the threshold: its raw data, or its floats packed in
/// one typed field.
pub fn bytes_in_file(t: &Tensor) -> Option<&Bytes> {
    t.raw_data.as_ref().or(external::packed_values(t))
}

/// The size of a tensor's raw data and, for numeric element types, the minimum, maximum and
/// mean of its values and how many are NaN or infinite. `None` when the tensor has no raw data
/// in memory.
pub fn tensor_digest(t: &Tensor) -> Option<String> {
    let raw = bytes_in_file(t)?;
    let size = human_bytes(raw.len() as u64);
    let stats = t.elem_type().and_then(element_reader).and_then(|(width, value)| Stats::of(raw, width, value));
    Some(match stats {
        Some(s) => format!("{size}; {}", s.text()),
        None => size,
    })
}

/// One element's value from its little-endian bytes.
pub type ReadElement = fn(&[u8]) -> f64;

/// How to read one element of a numeric type from its little-endian bytes: the element's width
/// and its value as f64 (exact for every type but 64-bit integers beyond 2^53). `None` for
/// types that are not plain numbers (strings, booleans, packed 4-bit types, complex).
pub fn element_reader(dt: DataType) -> Option<(usize, ReadElement)> {
    fn word<const N: usize>(b: &[u8]) -> [u8; N] {
        b.get(..N).and_then(|b| b.try_into().ok()).unwrap_or([0; N])
    }
    Some(match dt {
        DataType::Float => (4, |b| f64::from(f32::from_le_bytes(word(b)))),
        DataType::Double => (8, |b| f64::from_le_bytes(word(b))),
        DataType::Float16 => (2, |b| f16::from_le_bytes(word(b)).to_f64()),
        DataType::Bfloat16 => (2, |b| bf16::from_le_bytes(word(b)).to_f64()),
        DataType::Int8 => (1, |b| f64::from(i8::from_le_bytes(word(b)))),
        DataType::Uint8 => (1, |b| f64::from(u8::from_le_bytes(word(b)))),
        DataType::Int16 => (2, |b| f64::from(i16::from_le_bytes(word(b)))),
        DataType::Uint16 => (2, |b| f64::from(u16::from_le_bytes(word(b)))),
        DataType::Int32 => (4, |b| f64::from(i32::from_le_bytes(word(b)))),
        DataType::Uint32 => (4, |b| f64::from(u32::from_le_bytes(word(b)))),
        DataType::Int64 => (8, |b| i64::from_le_bytes(word(b)) as f64),
        DataType::Uint64 => (8, |b| u64::from_le_bytes(word(b)) as f64),
        _ => return None,
    })
}

struct Stats {
    min: f64,
    max: f64,
    sum: f64,
    /// Finite values, which the minimum, maximum and mean are of.
    finite: u64,
    nan: u64,
    infinite: u64,
}

impl Stats {
    /// The statistics of `raw` read as values of `width` bytes; `None` when it does not hold
    /// a whole number of them or holds none.
    fn of(raw: &[u8], width: usize, value: ReadElement) -> Option<Stats> {
        if raw.is_empty() || !raw.len().is_multiple_of(width) {
            return None;
        }
        let mut s = Stats { min: f64::INFINITY, max: f64::NEG_INFINITY, sum: 0.0, finite: 0, nan: 0, infinite: 0 };
        for chunk in raw.chunks_exact(width) {
            let v = value(chunk);
            if v.is_nan() {
                s.nan += 1;
            } else if v.is_infinite() {
                s.infinite += 1;
            } else {
                s.min = s.min.min(v);
                s.max = s.max.max(v);
                s.sum += v;
                s.finite += 1;
            }
        }
        Some(s)
    }

    fn text(&self) -> String {
        let mut parts = Vec::new();
        if self.finite > 0 {
            parts.push(format!("min {}", short(self.min)));
            parts.push(format!("max {}", short(self.max)));
            parts.push(format!("mean {}", short(self.sum / self.finite as f64)));
        }
        if self.nan > 0 {
            parts.push(format!("{} NaN", self.nan));
        }
        if self.infinite > 0 {
            parts.push(format!("{} infinite", self.infinite));
        }
        parts.join(", ")
    }
}

/// Four significant digits, without trailing zeros; scientific outside `[1e-3, 1e6)`.
fn short(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let magnitude = v.abs();
    if !(1e-3..1e6).contains(&magnitude) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - magnitude.log10().floor() as i32).max(0) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_tensor(dt: DataType, raw: Vec<u8>) -> Tensor {
        Tensor { data_type: Some(dt as i32), raw_data: Some(raw.into()), ..Tensor::default() }
    }

    #[test]
    fn floats_give_size_range_and_mean() {
        let values: Vec<u8> = [-1.5f32, 0.25, 2.0, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        let text = tensor_digest(&raw_tensor(DataType::Float, values)).unwrap_or_default();
        assert_eq!(text, "16 B; min -1.5, max 2, mean 0.25, 1 NaN");
    }

    #[test]
    fn integers_and_odd_lengths() {
        let text = tensor_digest(&raw_tensor(DataType::Int8, vec![0xff, 3])).unwrap_or_default();
        assert_eq!(text, "2 B; min -1, max 3, mean 1");
        assert_eq!(tensor_digest(&raw_tensor(DataType::Float, vec![0; 3])).unwrap_or_default(), "3 B");
        assert_eq!(tensor_digest(&raw_tensor(DataType::String, vec![1])).unwrap_or_default(), "1 B");
        assert_eq!(tensor_digest(&Tensor::default()), None);
    }

    #[test]
    fn short_numbers_keep_four_digits() {
        assert_eq!(short(0.0012341), "0.001234");
        assert_eq!(short(123.456), "123.5");
        assert_eq!(short(-0.67021), "-0.6702");
        assert_eq!(short(1e-7), "1.000e-7");
        assert_eq!(short(2.5e9), "2.500e9");
    }
}
