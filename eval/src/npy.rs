//! NumPy `.npy` files: values given to a run (`onnx run x.npy`, the browser's run dialog)
//! and values exported from the browser's viewer (`numpy.load` reads them in one line).
//!
//! Read: format versions 1 to 3, little-endian or single-byte numbers and booleans in C
//! order (what `numpy.save` writes for the element types ONNX has). Written: version 1.0;
//! types NumPy lacks (bfloat16, the float8 and 4-bit types) as float32; strings refused.

use std::path::Path;

use crate::value::{Data, Tensor};

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

/// The tensor in a `.npy` file. Errors say what is wrong with the file.
pub fn decode(bytes: &[u8]) -> Result<Tensor, String> {
    let rest = bytes.strip_prefix(b"\x93NUMPY").ok_or("not a .npy file (no \\x93NUMPY magic)")?;
    let (&major, rest) = rest.split_first().ok_or("truncated header")?;
    let rest = rest.get(1..).ok_or("truncated header")?;
    let (len, rest) = match major {
        1 => (
            usize::from(u16::from_le_bytes([*rest.first().ok_or("truncated")?, *rest.get(1).ok_or("truncated")?])),
            &rest[2..],
        ),
        2 | 3 => {
            let b: [u8; 4] = rest.get(..4).ok_or("truncated header")?.try_into().map_err(|_| "truncated header")?;
            (u32::from_le_bytes(b) as usize, &rest[4..])
        }
        v => return Err(format!("format version {v} is not one numpy writes")),
    };
    let header = rest.get(..len).ok_or("the header is longer than the file")?;
    let header = std::str::from_utf8(header).map_err(|_| "the header is not text")?;
    let body = &rest[len..];
    let descr = field(header, "descr").ok_or("the header has no 'descr'")?;
    let quote = descr.chars().next().filter(|c| *c == '\'' || *c == '"').ok_or("'descr' is not a string")?;
    let descr = descr[1..].split(quote).next().unwrap_or_default();
    if field(header, "fortran_order").is_some_and(|f| f.starts_with("True")) {
        return Err("Fortran-ordered arrays are not read; save with numpy.ascontiguousarray".into());
    }
    let shape = field(header, "shape").ok_or("the header has no 'shape'")?;
    let shape = shape.trim_start_matches('(');
    let shape = &shape[..shape.find(')').ok_or("the shape is not a tuple")?];
    let dims: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.trim_end_matches('L').parse::<usize>().map_err(|_| format!("dimension '{d}' is not a number")))
        .collect::<Result<_, _>>()?;
    let count = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or("the shape overflows")?;
    let (kind, width) = descr.split_at(descr.len().min(2));
    let width: usize = width.parse().map_err(|_| format!("element type '{descr}' is not one ONNX has"))?;
    if body.len() != count.checked_mul(width).ok_or("the shape overflows")? {
        return Err(format!("the shape {dims:?} needs {} bytes of data, the file holds {}", count * width, body.len()));
    }
    macro_rules! le {
        ($t:ty, $variant:ident) => {
            Data::$variant(
                body.chunks_exact(width).map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or_default())).collect(),
            )
        };
    }
    let data = match (kind, width) {
        ("<f" | "=f", 4) => le!(f32, F32),
        ("<f" | "=f", 8) => le!(f64, F64),
        ("<f" | "=f", 2) => Data::F16(body.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]])).collect()),
        ("|i" | "<i" | "=i", 1) => Data::I8(body.iter().map(|&b| b as i8).collect()),
        ("<i" | "=i", 2) => le!(i16, I16),
        ("<i" | "=i", 4) => le!(i32, I32),
        ("<i" | "=i", 8) => le!(i64, I64),
        ("|u" | "<u" | "=u", 1) => Data::U8(body.to_vec().into()),
        ("<u" | "=u", 2) => le!(u16, U16),
        ("<u" | "=u", 4) => le!(u32, U32),
        ("<u" | "=u", 8) => le!(u64, U64),
        ("|b", 1) => Data::Bool(body.iter().map(|&b| b != 0).collect()),
        _ => return Err(format!("element type '{descr}' is not read (big-endian, complex or objects?)")),
    };
    Ok(Tensor::new(dims, data))
}

/// The text after `'key':` in a header dictionary, up to the next top-level comma.
fn field<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let at = header.find(&format!("'{key}'")).or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = header[at + key.len() + 2..].trim_start().strip_prefix(':')?.trim_start();
    Some(rest)
}

/// Reads a `.npy` file.
pub fn read(path: &Path) -> Result<Tensor, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    decode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_padded_and_data_follows() {
        let t = Tensor::new(vec![2, 1], Data::I64(vec![3, -1].into()));
        let bytes = encode(&t).expect("encodes");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).expect("ascii");
        assert!(header.starts_with("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }"));
        assert_eq!(&bytes[10 + header_len..], [3i64.to_le_bytes(), (-1i64).to_le_bytes()].concat());
        assert_eq!(decode(&bytes), Ok(t));
    }

    #[test]
    fn what_numpy_writes_reads_back_and_bad_files_say_why() {
        // numpy.save(f, numpy.array([[1.5, -2.0, 0.25]], dtype=numpy.float32))
        let mut file = b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }".to_vec();
        file.resize(10 + 0x76 - 1, b' ');
        file.push(b'\n');
        for x in [1.5f32, -2.0, 0.25] {
            file.extend_from_slice(&x.to_le_bytes());
        }
        assert_eq!(decode(&file), Ok(Tensor::new(vec![1, 3], Data::F32(vec![1.5, -2.0, 0.25].into()))));
        let scalar = encode(&Tensor::new(vec![], Data::Bool(vec![true]))).expect("encodes");
        assert_eq!(decode(&scalar), Ok(Tensor::new(vec![], Data::Bool(vec![true]))));
        assert!(decode(b"PK\x03\x04").is_err_and(|e| e.contains("magic")));
        assert!(decode(&file[..file.len() - 1]).is_err_and(|e| e.contains("needs 12 bytes")));
        let big_endian = String::from_utf8_lossy(&file).replace("<f4", ">f4");
        assert!(decode(big_endian.as_bytes()).is_err());
    }
}
