//! Moving tensor values between `raw_data` (little-endian bytes) and the typed fields.
//!
//! The text format writes values into the typed fields (as onnx's parser does); a model that
//! stored them raw gets them back raw through `#@ storage: raw`, which uses these two
//! conversions. Both are exact for the types they accept: each is the inverse of the other.

use bytes::Bytes;

use super::{DataType, Tensor};

/// Whether values of this type can move between raw and typed storage element by element.
/// Sub-byte types are packed and strings have no raw form, so they cannot.
pub fn converts_raw(dt: DataType) -> bool {
    dt.bits() >= 8
}

/// Moves the typed values into `raw_data`. Fails for types that do not convert, or when the
/// tensor already has raw data.
pub fn typed_to_raw(t: &mut Tensor) -> Result<(), String> {
    let dt = t.elem_type().ok_or("the tensor has no known element type")?;
    if !converts_raw(dt) {
        return Err(format!("{} values cannot be converted to raw storage; write raw_data: b\"…\"", dt.name()));
    }
    if t.raw_data.is_some() {
        return Err("the tensor already has raw_data".into());
    }
    let width = (dt.bits() / 8) as usize;
    let mut out = Vec::new();
    use DataType as D;
    match dt {
        D::Float | D::Complex64 => t.float_data.drain(..).for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Double | D::Complex128 => t.double_data.drain(..).for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Int64 => t.int64_data.drain(..).for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Uint64 => t.uint64_data.drain(..).for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        D::Uint32 => t.uint64_data.drain(..).for_each(|v| out.extend_from_slice(&(v as u32).to_le_bytes())),
        // 8-, 16- and 32-bit types kept in int32_data: the low `width` bytes of each value.
        _ => t.int32_data.drain(..).for_each(|v| out.extend_from_slice(&v.to_le_bytes()[..width])),
    }
    t.raw_data = Some(Bytes::from(out));
    Ok(())
}

/// The tensor with its `raw_data` moved into the typed fields, or `None` when that would not
/// be exact (a type that does not convert, a byte count that is not a whole number of
/// elements, or typed fields already in use).
pub fn raw_to_typed(t: &Tensor) -> Option<Tensor> {
    let dt = t.elem_type()?;
    let raw = t.raw_data.as_ref()?;
    if !converts_raw(dt) || !has_no_typed_values(t) {
        return None;
    }
    // Complex values are stored as their real and imaginary components.
    let width = match dt {
        DataType::Complex64 => 4,
        DataType::Complex128 => 8,
        _ => (dt.bits() / 8) as usize,
    };
    if raw.len() % width != 0 {
        return None;
    }
    let mut typed = Tensor { raw_data: None, ..t.clone() };
    let le = |c: &[u8]| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    };
    let chunks = raw.chunks_exact(width);
    use DataType as D;
    match dt {
        D::Float | D::Complex64 => typed.float_data = chunks.map(|c| f32::from_bits(le(c) as u32)).collect(),
        D::Double | D::Complex128 => typed.double_data = chunks.map(|c| f64::from_bits(le(c))).collect(),
        D::Int64 => typed.int64_data = chunks.map(|c| le(c) as i64).collect(),
        D::Uint64 | D::Uint32 => typed.uint64_data = chunks.map(le).collect(),
        D::Int8 => typed.int32_data = chunks.map(|c| i32::from(c[0] as i8)).collect(),
        D::Int16 => typed.int32_data = chunks.map(|c| i32::from(le(c) as u16 as i16)).collect(),
        D::Int32 => typed.int32_data = chunks.map(|c| le(c) as u32 as i32).collect(),
        // Unsigned and bit-pattern types (uint8, bool, float16, bfloat16, float8…).
        _ => typed.int32_data = chunks.map(|c| le(c) as i32).collect(),
    }
    Some(typed)
}

pub(crate) fn has_no_typed_values(t: &Tensor) -> bool {
    t.float_data.is_empty()
        && t.int32_data.is_empty()
        && t.string_data.is_empty()
        && t.int64_data.is_empty()
        && t.double_data.is_empty()
        && t.uint64_data.is_empty()
}

/// The values of an int32 or int64 tensor held in memory (raw or typed), widened to `i64`;
/// `None` for other types, external data, or raw bytes that are not whole elements.
pub fn int_values(t: &Tensor) -> Option<Vec<i64>> {
    if t.is_external() {
        return None;
    }
    let raw = t.raw_data.as_ref().filter(|r| !r.is_empty());
    match (t.elem_type()?, raw) {
        (DataType::Int64, Some(raw)) if raw.len() % 8 == 0 => {
            Some(raw.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
        }
        (DataType::Int32, Some(raw)) if raw.len() % 4 == 0 => {
            Some(raw.chunks_exact(4).map(|c| i64::from(i32::from_le_bytes(c.try_into().unwrap_or([0; 4])))).collect())
        }
        (DataType::Int64, None) => Some(t.int64_data.clone()),
        (DataType::Int32, None) => Some(t.int32_data.iter().map(|&v| i64::from(v)).collect()),
        _ => None,
    }
}

/// The values of a float32 tensor held in memory (raw or typed); `None` for other types,
/// external data, or raw bytes that are not whole elements.
pub fn float_values(t: &Tensor) -> Option<Vec<f32>> {
    if t.is_external() || t.elem_type()? != DataType::Float {
        return None;
    }
    match t.raw_data.as_ref().filter(|r| !r.is_empty()) {
        Some(raw) if raw.len() % 4 == 0 => {
            Some(raw.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4]))).collect())
        }
        Some(_) => None,
        None => Some(t.float_data.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_typed_are_inverse() {
        for (dt, raw) in [
            (DataType::Float, vec![0, 0, 0xc0, 0x7f, 1, 0, 0xc0, 0xff]),
            (DataType::Int8, vec![0xff, 0x01]),
            (DataType::Uint16, vec![0xff, 0xff, 0, 1]),
            (DataType::Bfloat16, vec![0x80, 0x3f]),
            (DataType::Uint32, vec![0xff, 0xff, 0xff, 0xff]),
            (DataType::Int64, vec![0xfe; 8]),
            (DataType::Complex64, vec![0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]),
        ] {
            let t =
                Tensor { data_type: Some(dt.code()), raw_data: Some(Bytes::from(raw.clone())), ..Tensor::default() };
            let mut typed = raw_to_typed(&t).expect("converts");
            typed_to_raw(&mut typed).expect("back");
            assert_eq!(typed.raw_data.as_deref(), Some(&raw[..]), "{dt}");
        }
        let packed = Tensor {
            data_type: Some(DataType::Int4.code()),
            raw_data: Some(Bytes::from_static(&[1])),
            ..Tensor::default()
        };
        assert!(raw_to_typed(&packed).is_none());
    }
}
