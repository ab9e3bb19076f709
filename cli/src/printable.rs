//! Text for a terminal: what comes from a model (names, doc strings, metadata) may hold
//! control characters, and a terminal obeys escape sequences. Every human-readable line the
//! command writes goes through [`printable`]; JSON needs nothing (serde escapes control
//! characters in strings).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether a character must not reach a terminal as it is: C0 controls other than line
/// feed and tab (a carriage return is kept only before a line feed), DEL, and the C1
/// controls (U+0080–U+009F; U+009B starts an escape sequence on some terminals).
fn is_unsafe(c: char, next: Option<char>) -> bool {
    match c {
        '\n' | '\t' => false,
        '\r' => next != Some('\n'),
        c => c.is_control(),
    }
}

/// `text` with each unsafe control character written as an escape (`\u{1b}`).
pub fn printable(text: &str) -> Cow<'_, str> {
    let mut chars = text.chars().peekable();
    let mut at = 0;
    while let Some(c) = chars.next() {
        if is_unsafe(c, chars.peek().copied()) {
            return Cow::Owned(escaped_from(text, at));
        }
        at += c.len_utf8();
    }
    Cow::Borrowed(text)
}

fn escaped_from(text: &str, first: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    let mut chars = text[first..].chars().peekable();
    while let Some(c) = chars.next() {
        if is_unsafe(c, chars.peek().copied()) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// `source` with each unsafe control character replaced by as many `?` as it has bytes, so
/// that byte offsets (the places diagnostics point at) stay valid when it is shown.
pub fn printable_source(source: &str) -> Cow<'_, str> {
    if let Cow::Borrowed(_) = printable(source) {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        if is_unsafe(c, chars.peek().copied()) {
            out.extend(std::iter::repeat_n('?', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_escaped_and_the_rest_kept() {
        assert_eq!(printable("plain name: x/y:0"), "plain name: x/y:0");
        assert_eq!(printable("a\u{1b}[31mred"), "a\\u{1b}[31mred");
        assert_eq!(printable("bell\u{7}\u{9b}2J"), "bell\\u{7}\\u{9b}2J");
        assert_eq!(printable("two\nlines\tand tab"), "two\nlines\tand tab");
        assert_eq!(printable("crlf\r\nlone\rcr"), "crlf\r\nlone\\u{d}cr");
        let source = "x = \"a\u{1b}b\u{9b}\"\n";
        let shown = printable_source(source);
        assert_eq!(shown.len(), source.len());
        assert_eq!(shown, "x = \"a?b??\"\n");
    }
}
