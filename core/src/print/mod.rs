//! IR → text. Two styles:
//! * [`onnx_style`]: byte for byte what `onnx.printer.to_text` of onnx 1.23.2 prints, quirks
//!   included, for interoperability and as a golden test against the anchor;
//! * [`canonical`] (ours): reads back to exactly the same model, with `#@` annotations for
//!   what onnx's text cannot say.

pub mod canonical;
pub mod number;
pub mod onnx_style;

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
