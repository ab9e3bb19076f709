//! Formatting: the formatter of `onnx fmt`, as one edit over the whole document. Text with
//! syntax errors is left as it is (its diagnostics say why).

use onnx_syntax::format::format_model;

use crate::lsp::*;
use crate::snapshot::Snapshot;

pub fn format(s: &Snapshot) -> Option<Vec<TextEdit>> {
    let formatted = format_model(&s.text).ok()?;
    if formatted == s.text {
        return Some(Vec::new());
    }
    let whole = onnx_core::diagnostic::Span { start: 0, end: s.text.len() as u32 };
    Some(vec![TextEdit { range: s.range(whole), new_text: formatted }])
}
