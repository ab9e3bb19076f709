//! The one boundary every string from a model passes before it reaches the terminal.
//!
//! Names, doc strings, metadata and string tensors come from files nobody vouches for.
//! ratatui filters control characters only on some of its paths (`Span` and `Paragraph`
//! pass ESC through), so a name holding `\x1b]52;…` could set the clipboard or repaint the
//! screen. Everything shown is therefore made visible here: C0 and C1 controls, DEL and the
//! bidirectional overrides become escapes, and bytes that are not UTF-8 become `\xNN`.

use std::borrow::Cow;

/// `text` with every control, bidi override and invalid byte spelled as a visible escape.
pub fn bytes(text: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(text) {
        Ok(s) => str(s),
        Err(_) => {
            let mut out = String::with_capacity(text.len() + 8);
            for chunk in text.utf8_chunks() {
                push_clean(&mut out, chunk.valid());
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            Cow::Owned(out)
        }
    }
}

/// [`bytes`] for text that is UTF-8 already; borrows when nothing needs escaping (the
/// common case, so drawing a list of clean names allocates nothing here).
pub fn str(text: &str) -> Cow<'_, str> {
    if text.chars().all(|c| !needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_clean(&mut out, text);
    Cow::Owned(out)
}

/// A model string (`Str`), cleaned.
pub fn name(s: &onnx_core::ir::Str) -> Cow<'_, str> {
    bytes(s.as_bytes())
}

/// An optional model string; empty when absent.
pub fn opt(s: Option<&onnx_core::ir::Str>) -> Cow<'_, str> {
    s.map_or(Cow::Borrowed(""), name)
}

fn push_clean(out: &mut String, text: &str) {
    for c in text.chars() {
        if !needs_escape(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_bad_bytes_become_visible() {
        assert_eq!(bytes(b"conv\x1b[2J\x07"), "conv\\x1b[2J\\x07");
        assert_eq!(bytes("a\u{9b}b\u{202e}c\u{7f}".as_bytes()), "a\\x9bb\\u{202e}c\\x7f");
        assert_eq!(bytes(b"x\xffy\nz"), "x\\xffy\\nz");
        assert!(matches!(str("plain/name:0 ünï"), Cow::Borrowed(_)));
    }
}
