//! Comparing two tensors' values: type and shape first, then the bytes, and where they
//! differ, by how much (how many elements, the largest absolute and relative difference).

use bytes::Bytes;

use crate::external::ExternalReader;
use crate::ir::{DataType, Tensor};
use crate::print::digest::element_reader;

/// A tensor's type and shape as the text writes them: `float[64,3,7,7]`.
pub(super) fn type_and_shape(t: &Tensor) -> String {
    let elem = t.data_type.map_or_else(|| "?".to_owned(), crate::ir::code_name);
    if t.dims.is_empty() {
        return elem;
    }
    let dims: Vec<String> = t.dims.iter().map(i64::to_string).collect();
    format!("{elem}[{}]", dims.join(","))
}

/// A tensor's values as little-endian bytes, wherever they are kept; strings and tensors that
/// cannot be read give `Err` with why.
fn value_bytes(t: &Tensor, reader: &mut ExternalReader) -> Result<Bytes, String> {
    if t.is_external() {
        return reader.read(t).map_err(|e| e.to_string());
    }
    if let Some(raw) = crate::print::digest::bytes_in_file(t) {
        return Ok(raw.clone());
    }
    let mut copy = t.clone();
    crate::ir::tensor_data::typed_to_raw(&mut copy)?;
    Ok(copy.raw_data.unwrap_or_default())
}

/// How two tensors differ, in words, or `None` when they hold the same values.
pub(super) fn tensor_difference(
    a: &Tensor,
    b: &Tensor,
    reader_a: &mut ExternalReader,
    reader_b: &mut ExternalReader,
) -> Option<String> {
    if a.data_type != b.data_type || a.dims != b.dims {
        return Some(format!("{} → {}", type_and_shape(a), type_and_shape(b)));
    }
    if a.elem_type() == Some(DataType::String) {
        return (a.string_data != b.string_data).then(|| "string values differ".to_owned());
    }
    let (bytes_a, bytes_b) = match (value_bytes(a, reader_a), value_bytes(b, reader_b)) {
        (Ok(x), Ok(y)) => (x, y),
        // Neither readable (no directory, a missing side file), but both point at the same
        // bytes: the same, as far as can be told.
        (Err(_), Err(_)) if a.is_external() && a.external_data == b.external_data => return None,
        // Values kept only in typed fields of a type with no raw form (4-bit types written
        // typed): the fields themselves.
        (Err(_), Err(_)) if !a.is_external() && same_typed_fields(a, b) => return None,
        (Err(e), _) | (_, Err(e)) => return Some(format!("values not compared: {e}")),
    };
    if bytes_a == bytes_b {
        return None;
    }
    Some(numeric_difference(a.elem_type(), &bytes_a, &bytes_b).unwrap_or_else(|| "values differ".to_owned()))
}

fn same_typed_fields(a: &Tensor, b: &Tensor) -> bool {
    a.int32_data == b.int32_data
        && a.int64_data == b.int64_data
        && a.uint64_data == b.uint64_data
        && a.float_data.iter().map(|f| f.to_bits()).eq(b.float_data.iter().map(|f| f.to_bits()))
        && a.double_data.iter().map(|f| f.to_bits()).eq(b.double_data.iter().map(|f| f.to_bits()))
        && a.raw_data == b.raw_data
}

/// For numbers of one type: `12 of 9,408 values differ; max |Δ| 0.5 at [3], max relative 1.2`.
fn numeric_difference(dt: Option<DataType>, a: &[u8], b: &[u8]) -> Option<String> {
    let (width, value) = element_reader(dt?)?;
    if a.len() != b.len() || !a.len().is_multiple_of(width) {
        return None;
    }
    let total = a.len() / width;
    let (mut differ, mut max_abs, mut at, mut max_rel) = (0usize, 0f64, 0usize, 0f64);
    for (i, (x, y)) in a.chunks_exact(width).zip(b.chunks_exact(width)).enumerate() {
        if x == y {
            continue;
        }
        differ += 1;
        let (x, y) = (value(x), value(y));
        let abs = (x - y).abs();
        // NaN against a number is the biggest difference there is.
        let abs = if abs.is_nan() && !(x.is_nan() && y.is_nan()) { f64::INFINITY } else { abs };
        if abs > max_abs || (differ == 1 && abs.is_nan()) {
            max_abs = abs;
            at = i;
        }
        let scale = x.abs().max(y.abs());
        if scale > 0.0 && abs.is_finite() {
            max_rel = max_rel.max(abs / scale);
        }
    }
    let mut text =
        format!("{} of {} values differ; max |Δ| {} at flat index {at}", group(differ), group(total), short(max_abs));
    if max_rel > 0.0 {
        text.push_str(&format!(", max relative {}", short(max_rel)));
    }
    Some(text)
}

fn short(v: f64) -> String {
    if v == 0.0 || v.is_infinite() || v.is_nan() {
        return format!("{v}");
    }
    if (1e-3..1e6).contains(&v.abs()) { format!("{}", (v * 1e4).round() / 1e4) } else { format!("{v:.3e}") }
}

fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
