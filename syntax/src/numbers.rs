//! A fast path for the bulk of big text models: `{…}` lists of numbers.
//!
//! A printed model's size is almost all tensor values. Going through the general lexer and
//! the LR parser costs tokens, tree nodes and allocations per value; instead the parser asks
//! [`scan_list`] whether a `{` starts a plain list of numbers (with any whitespace and
//! comments) and, if so, takes it as one token whose values are read, once, when lowering.
//! Anything unusual in the list (a string, a malformed number, an annotation, a missing `}`)
//! makes the scan give up, and the general path then parses the list and reports errors.
//!
//! The scanner accepts exactly the numbers the lexer does: `-?[0-9]+` (integer),
//! `-?[0-9]+.[0-9]*([eE][+-]?[0-9]+)?` and `-?[0-9]+[eE][+-]?[0-9]+` (float), and inf,
//! infinity, nan in any letter case, optionally negative.

use crate::ast::LiteralKind;

/// What a number list holds: its first and last value's range ends, the value count and
/// where its `}` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListScan {
    pub first: usize,
    pub last_end: usize,
    pub count: u32,
    pub close: usize,
}

/// Scans a list of numbers starting at `from` (just after a `{`) up to its `}`; `None` when
/// the list is not exactly numbers separated by commas.
pub fn scan_list(source: &str, from: usize) -> Option<ListScan> {
    let mut items = Items { text: source, pos: from };
    let (mut count, mut first, mut last_end, mut expect_number) = (0u32, None, 0, true);
    loop {
        match items.step()? {
            Step::Item(_, start, end) if expect_number => {
                count = count.checked_add(1)?;
                first.get_or_insert(start);
                last_end = end;
                expect_number = false;
            }
            Step::Comma if !expect_number => expect_number = true,
            Step::Close(close) if !expect_number => {
                return Some(ListScan { first: first?, last_end, count, close });
            }
            _ => return None,
        }
    }
}

/// The values of a list [`scan_list`] accepted: each value's kind and range within `text`.
pub fn values(text: &str) -> impl Iterator<Item = (LiteralKind, usize, usize)> + '_ {
    let mut items = Items { text, pos: 0 };
    std::iter::from_fn(move || {
        loop {
            match items.step()? {
                Step::Item(kind, start, end) => return Some((kind, start, end)),
                Step::Comma => {}
                Step::Close(_) | Step::Bad => return None,
            }
        }
    })
}

/// The kind of a number written as `text`, or `None` if the lexer would not read it as one
/// number.
pub fn number_kind(text: &str) -> Option<LiteralKind> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let bytes = unsigned.as_bytes();
    if bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        let word = ["inf", "infinity", "nan"].iter().any(|w| w.eq_ignore_ascii_case(unsigned));
        return word.then_some(LiteralKind::FloatWord);
    }
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut pos = digits(0);
    if pos == 0 {
        return None;
    }
    let mut float = false;
    if bytes.get(pos) == Some(&b'.') {
        float = true;
        pos += 1;
        pos += digits(pos);
    }
    if matches!(bytes.get(pos), Some(b'e' | b'E')) {
        float = true;
        pos += 1;
        if matches!(bytes.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let exponent = digits(pos);
        if exponent == 0 {
            return None;
        }
        pos += exponent;
    }
    (pos == bytes.len()).then_some(if float { LiteralKind::Float } else { LiteralKind::Int })
}

enum Step {
    /// A number and its range.
    Item(LiteralKind, usize, usize),
    Comma,
    Close(usize),
    /// Something the fast path does not handle (not a number, an annotation).
    Bad,
}

/// Splits a list into values, commas and the closing brace, skipping whitespace and `#`
/// comments.
struct Items<'a> {
    text: &'a str,
    pos: usize,
}

/// Bytes that end a value: whitespace, a comment, a comma, the closing brace.
const fn delimiters() -> [bool; 256] {
    let mut table = [false; 256];
    let list = [b' ', b'\t', b'\n', b'\r', 0x0B, 0x0C, b'#', b',', b'}'];
    let mut i = 0;
    while i < list.len() {
        table[list[i] as usize] = true;
        i += 1;
    }
    table
}

static DELIMITER: [bool; 256] = delimiters();

impl Items<'_> {
    fn step(&mut self) -> Option<Step> {
        let bytes = self.text.as_bytes();
        loop {
            let &b = bytes.get(self.pos)?;
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C => self.pos += 1,
                b'#' if bytes.get(self.pos + 1) == Some(&b'@') => return Some(Step::Bad),
                b'#' => {
                    let rest = &bytes[self.pos..];
                    self.pos += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                }
                b',' => {
                    self.pos += 1;
                    return Some(Step::Comma);
                }
                b'}' => {
                    self.pos += 1;
                    return Some(Step::Close(self.pos - 1));
                }
                _ => {
                    let start = self.pos;
                    let end = start
                        + bytes[start..].iter().position(|&c| DELIMITER[c as usize]).unwrap_or(bytes.len() - start);
                    self.pos = end;
                    // Delimiters are ASCII, so `start..end` lies on character boundaries.
                    let text = self.text.get(start..end);
                    return Some(match text.and_then(number_kind) {
                        Some(kind) => Step::Item(kind, start, end),
                        None => Step::Bad,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::{self, TokenKind};

    #[test]
    fn kinds_match_the_lexer() {
        for (text, kind) in [
            ("0", Some(LiteralKind::Int)),
            ("-12", Some(LiteralKind::Int)),
            ("1.", Some(LiteralKind::Float)),
            ("1.5e-3", Some(LiteralKind::Float)),
            ("2E+10", Some(LiteralKind::Float)),
            ("-Inf", Some(LiteralKind::FloatWord)),
            ("NaN", Some(LiteralKind::FloatWord)),
            ("infinity", Some(LiteralKind::FloatWord)),
            ("1e", None),
            (".5", None),
            ("+1", None),
            ("1.5.3", None),
            ("inf1", None),
            ("- 1", None),
            ("1x", None),
        ] {
            assert_eq!(number_kind(text), kind, "{text}");
            // Whatever the scanner accepts, the lexer reads as exactly one number token.
            if kind.is_some() {
                let tokens = lexer::lex(text);
                assert_eq!(tokens.len(), 1, "{text}");
                assert!(matches!(
                    tokens[0].kind,
                    TokenKind::Int | TokenKind::Float | TokenKind::SignedFloatWord | TokenKind::Ident
                ));
            }
        }
    }

    #[test]
    fn scans_plain_lists_and_gives_up_on_anything_else() {
        let text = "{1, -2.5 # note\n , nan}rest";
        let scan = scan_list(text, 1).expect("a number list");
        assert_eq!((scan.first, scan.count, &text[scan.close..scan.close + 1]), (1, 3, "}"));
        let values: Vec<_> = values(&text[scan.first..scan.last_end]).map(|(_, s, e)| &text[1 + s..1 + e]).collect();
        assert_eq!(values, ["1", "-2.5", "nan"]);
        for bad in ["{}", "{1,}", "{1 2}", "{\"s\"}", "{1, 1e}", "{1\n#@ x: 1\n}", "{1, 2"] {
            assert_eq!(scan_list(bad, 1), None, "{bad}");
        }
    }
}
