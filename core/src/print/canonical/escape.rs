//! How names, strings and bytes are written: bare or quoted names, string literals, byte
//! strings for what is not UTF-8 or holds control characters, and widths in columns.

use super::{Out, unsupported};
use crate::ir::*;
use crate::print::{is_identifier, quote};

/// A name as text; names that are not UTF-8 have no text form yet.
pub(super) fn utf8(s: &Str, what: &str) -> Out<String> {
    match s.as_str() {
        Some(t) => Ok(t.to_owned()),
        None => unsupported(format!("a {what} that is not valid UTF-8")),
    }
}

/// A name, bare when it is an identifier, quoted otherwise, and a byte string `b"…"` when
/// it is not UTF-8.
pub(super) fn name(s: &Str) -> String {
    let Some(text) = s.as_str() else { return onnx_syntax::lexer::escape_bytes(s.as_bytes()) };
    if is_identifier(text.as_bytes()) {
        text.to_owned()
    } else {
        let mut q = String::new();
        quote(&mut q, text);
        q
    }
}

/// A name that must not be read as a keyword where a type or number may start.
pub(super) fn plain_name(s: &Str) -> String {
    let Some(text) = s.as_str() else { return name(s) };
    let word = onnx_syntax::lexer::classify_word(text);
    if is_identifier(text.as_bytes()) && word == onnx_syntax::lexer::WordClass::Plain {
        text.to_owned()
    } else {
        let mut q = String::new();
        quote(&mut q, text);
        q
    }
}

/// An identifier that reads like `s` (other characters become `_`), for a placeholder where
/// onnx's parser takes only an identifier and an annotation keeps the real name.
pub(super) fn identifier_like(s: &Str) -> String {
    let mut text: String = String::from_utf8_lossy(s.as_bytes())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        || onnx_syntax::lexer::classify_word(&text) != onnx_syntax::lexer::WordClass::Plain
    {
        text.insert(0, '_');
    }
    text
}

/// A string value: quoted, or a byte string when it is not UTF-8 or holds control
/// characters other than line breaks and tabs (which editors would not keep intact).
pub(super) fn string(s: &Str) -> String {
    match s.as_str() {
        Some(t) if !t.chars().any(|c| c.is_control() && c != '\n' && c != '\t') => {
            let mut q = String::new();
            quote(&mut q, t);
            q
        }
        _ => onnx_syntax::lexer::escape_bytes(s.as_bytes()),
    }
}

/// A text inside an annotation: a single-line string, or a byte string when it has line
/// breaks, quotes or backslashes the annotation line cannot hold otherwise.
pub(super) fn annotation_text(s: &Str) -> String {
    match s.as_str() {
        Some(t) if !t.contains(['\n', '\r']) => {
            let mut q = String::new();
            quote(&mut q, t);
            q
        }
        _ => onnx_syntax::lexer::escape_bytes(s.as_bytes()),
    }
}

/// Protobuf bytes as a byte string.
pub(super) fn embed(bytes: &[u8]) -> String {
    onnx_syntax::lexer::escape_bytes(bytes)
}

pub(super) fn slots(names: &[Str]) -> String {
    names.iter().map(|n| if n.is_empty() { "\"\"".to_owned() } else { name(n) }).collect::<Vec<_>>().join(", ")
}

/// A text's width in columns: characters, as the formatter counts them.
pub(super) fn width(text: &str) -> usize {
    text.chars().count()
}
