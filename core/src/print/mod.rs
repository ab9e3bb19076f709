//! IR → text. Two styles:
//! * [`onnx_style`]: byte for byte what `onnx.printer.to_text` of onnx 1.23.2 prints, quirks
//!   included, for interoperability and as a golden test against the anchor;
//! * [`canonical`] (ours): reads back to exactly the same model, with `#@` annotations for
//!   what onnx's text cannot say.

pub mod bulk;
pub mod canonical;
pub mod digest;
pub mod number;
pub mod onnx_style;
pub mod outline;
mod shortest_f32;

/// About how long a model's text will be, to size the output once: a big model's text is
/// almost all tensor values (a printed f32 takes about 11 bytes with its comma). Guessing
/// high costs nothing until written; growing a 100 MB string by doubling copies it twice.
pub fn estimated_len(m: &crate::ir::Model) -> usize {
    let values: usize = m
        .tensors
        .iter()
        .map(|(_, t)| {
            t.float_data.len() * 12
                + t.double_data.len() * 20
                + (t.int32_data.len() + t.int64_data.len() + t.uint64_data.len()) * 8
                + t.raw_data.as_ref().map_or(0, |r| r.len() * 3)
        })
        .sum();
    values + m.nodes.len() * 80 + 4096
}

/// A string with room for the model's text, if that much memory can be had (else it grows
/// as it goes).
pub(crate) fn output_for(m: &crate::ir::Model) -> String {
    let mut out = String::new();
    let _ = out.try_reserve(estimated_len(m));
    out
}

/// Whether a name can be written bare: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(name: &[u8]) -> bool {
    match name.split_first() {
        Some((first, rest)) => {
            (first.is_ascii_alphabetic() || *first == b'_')
                && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        }
        None => false,
    }
}

/// A string literal: quotes around, `"` and `\` escaped with a backslash (the only escapes
/// the language has; newlines and other characters are written as they are).
pub fn quote(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}
