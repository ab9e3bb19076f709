//! Writing a tensor as a NumPy `.npy` file (format version 1.0), so a value seen in the
//! viewer can be loaded with `numpy.load` in one line. Types NumPy lacks (bfloat16, the
//! float8 and 4-bit types) are written as float32; strings are refused.

use std::path::Path;

use onnx_eval::{Data, Tensor};

/// The `.npy` bytes of a tensor.
pub fn encode(t: &Tensor) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let descr = match &*t.data {
        Data::F32(v) => put(&mut body, v, |x| x.to_le_bytes(), "<f4"),
        Data::F64(v) => put(&mut body, v, |x| x.to_le_bytes(), "<f8"),
        Data::F16(v) => put(&mut body, v, |x| x.to_le_bytes(), "<f2"),
        Data::I8(v) => put(&mut body, v, |x| x.to_le_bytes(), "|i1"),
        Data::I16(v) => put(&mut body, v, |x| x.to_le_bytes(), "<i2"),
        Data::I32(v) => put(&mut body, v, |x| x.to_le_bytes(), "<i4"),
        Data::I64(v) => put(&mut body, v, |x| x.to_le_bytes(), "<i8"),
        Data::U8(v) => put(&mut body, v, |x| x.to_le_bytes(), "|u1"),
        Data::U16(v) => put(&mut body, v, |x| x.to_le_bytes(), "<u2"),
        Data::U32(v) => put(&mut body, v, |x| x.to_le_bytes(), "<u4"),
        Data::U64(v) => put(&mut body, v, |x| x.to_le_bytes(), "<u8"),
        Data::Bool(v) => put(&mut body, v, |&x| [u8::from(x)], "|b1"),
        Data::Str(_) => return Err("string tensors have no .npy form without Python objects".into()),
        Data::Bf16(_) | Data::Coded(..) => {
            let wide: Vec<f32> = t.to_f64s()?.into_iter().map(|x| x as f32).collect();
            put(&mut body, &wide, |x| x.to_le_bytes(), "<f4")
        }
    };
    let shape: Vec<String> = t.shape.iter().map(ToString::to_string).collect();
    let shape = if shape.len() == 1 { format!("({},)", shape[0]) } else { format!("({})", shape.join(", ")) };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + body.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&u16::try_from(header.len()).map_err(|_| "shape too long")?.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

fn put<T, const N: usize>(out: &mut Vec<u8>, v: &[T], le: impl Fn(&T) -> [u8; N], descr: &'static str) -> &'static str {
    out.reserve(v.len() * N);
    for x in v {
        out.extend_from_slice(&le(x));
    }
    descr
}

/// Writes `t` to `path` atomically (the core's writer: temporary file, then rename).
pub fn write(path: &Path, t: &Tensor) -> Result<(), String> {
    let bytes = encode(t)?;
    onnx_core::write_atomically(path, |out| out.write_all(&bytes)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_padded_and_data_follows() {
        let t = Tensor::new(vec![2, 1], Data::I64(vec![3, -1]));
        let bytes = encode(&t).expect("encodes");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).expect("ascii");
        assert!(header.starts_with("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }"));
        assert_eq!(&bytes[10 + header_len..], [3i64.to_le_bytes(), (-1i64).to_le_bytes()].concat());
    }
}
