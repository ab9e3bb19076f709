//! `#@` annotations: fields of the next item that onnx's text cannot express. onnx reads
//! them as comments, so a file that uses them still loads in onnx (without those fields).
//!
//! Which item takes which key is listed in `docs/syntax.md` ("Annotations"); the readers
//! of each item are in `from_ast.rs`, the writers in `print::canonical`.
//!
//! Texts are strings or `b"…"` byte strings (which may hold line breaks and any bytes);
//! metadata is `["key": "value", …]`, where either side may be `unset`.

use onnx_syntax::ast::{self, AnnotationItem, AnnotationValue, LiteralKind};

use crate::diagnostic::{Diagnostic, Span};
use crate::ir::{Str, StringPair};

/// Every entry of a list of annotations, in order.
pub(super) fn entries(annotations: &[ast::Annotation]) -> impl Iterator<Item = &ast::AnnotationEntry> {
    annotations.iter().flat_map(|a| a.entries.iter())
}

fn value_span(v: &AnnotationValue) -> Span {
    match v {
        AnnotationValue::Literal(l) => l.span,
        AnnotationValue::Word(w) => w.span,
        AnnotationValue::List(_, s) => *s,
    }
}

/// Reads annotation values, reporting what does not fit.
pub(super) struct Reader<'d> {
    pub diagnostics: &'d mut Vec<Diagnostic>,
}

impl Reader<'_> {
    fn mismatch(&mut self, v: &AnnotationValue, expected: &str) {
        self.diagnostics.push(Diagnostic::error(
            "annotation-type-mismatch",
            value_span(v),
            format!("expected {expected} here"),
        ));
    }

    /// A string or byte string.
    pub fn text(&mut self, v: &AnnotationValue) -> Option<Str> {
        match v {
            AnnotationValue::Literal(l) if l.kind == LiteralKind::String => Some(Str::from(l.text.as_str())),
            AnnotationValue::Literal(l) if l.kind == LiteralKind::Bytes => self.bytes_literal(l),
            _ => {
                self.mismatch(v, "a string");
                None
            }
        }
    }

    /// The bytes of a `b"…"` literal; a bad escape was already reported by the parser.
    pub fn bytes_literal(&mut self, l: &ast::Literal) -> Option<Str> {
        onnx_syntax::lexer::unescape_bytes(&l.text).ok().map(|bytes| Str::from(&bytes[..]))
    }

    /// A bare word, such as `unset`.
    pub fn word<'v>(&mut self, v: &'v AnnotationValue, expected: &str) -> Option<&'v str> {
        match v {
            AnnotationValue::Word(w) if w.text == expected => Some(&w.text),
            _ => {
                self.mismatch(v, &format!("'{expected}'"));
                None
            }
        }
    }

    /// A string or byte string, or `None` for the word `unset` (a field left unset).
    pub fn text_or_unset(&mut self, v: &AnnotationValue) -> Option<Str> {
        match v {
            AnnotationValue::Word(w) if w.text == "unset" => None,
            _ => self.text(v),
        }
    }

    /// `["key": "value", …]`; either side may be `unset`.
    pub fn pairs(&mut self, v: &AnnotationValue) -> Option<Vec<StringPair>> {
        let AnnotationValue::List(items, _) = v else {
            self.mismatch(v, "a list of \"key\": \"value\" pairs");
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                AnnotationItem::Pair(k, value) => {
                    let key = self.text_or_unset(k);
                    let value = self.text_or_unset(value);
                    out.push(StringPair { key, value });
                }
                AnnotationItem::Value(value) => self.mismatch(value, "a \"key\": \"value\" pair"),
            }
        }
        Some(out)
    }

    /// An integer that fits in 64 bits.
    pub fn int(&mut self, v: &AnnotationValue) -> Option<i64> {
        match v {
            AnnotationValue::Literal(l) if l.kind == LiteralKind::Int => match l.text.parse() {
                Ok(i) => Some(i),
                Err(_) => {
                    self.mismatch(v, "a 64-bit integer");
                    None
                }
            },
            other => {
                self.mismatch(other, "an integer");
                None
            }
        }
    }

    pub fn ints(&mut self, v: &AnnotationValue) -> Option<Vec<i64>> {
        let AnnotationValue::List(items, _) = v else {
            self.mismatch(v, "a list of integers");
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                AnnotationItem::Value(value) => out.extend(self.int(value)),
                AnnotationItem::Pair(k, _) => self.mismatch(k, "an integer"),
            }
        }
        Some(out)
    }

    /// Reports a key the item does not take.
    pub fn unknown(&mut self, entry: &ast::AnnotationEntry, item: &str, known: &[&str]) {
        self.diagnostics.push(Diagnostic::error(
            "unknown-annotation",
            entry.key.span,
            format!(
                "{} {item} has no annotation '{}'; it takes {}",
                if item.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" },
                entry.key.text,
                known.join(", ")
            ),
        ));
    }
}
