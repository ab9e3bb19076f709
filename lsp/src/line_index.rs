//! Byte offsets ⇄ LSP positions. The server works in byte offsets (the syntax tree's spans);
//! clients speak in lines and characters counted in UTF-16 code units unless both sides
//! agreed on UTF-8 at initialization. Only lines holding non-ASCII text need the slow path.

use crate::lsp::{Position, Range};
use onnx_core::diagnostic::Span;

/// How a position's `character` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
}

#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Byte offset where each line starts; the first is 0.
    line_starts: Vec<u32>,
    /// Lines that hold a non-ASCII character (their columns differ between encodings).
    wide_lines: Vec<bool>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        let mut wide_lines = Vec::new();
        let mut start = 0;
        // Lines end at `\n`, `\r\n` or a lone `\r`, as the protocol says (LSP 3.17, "Text
        // Documents"); a client splitting otherwise would see every later line shifted.
        // Line breaks are found with memchr and each line is checked for non-ASCII bytes a
        // word at a time: a byte-by-byte loop took 40 ms on a 36 MB document, on each change.
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                continue;
            }
            wide_lines.push(!bytes[start..i].is_ascii());
            start = i + 1;
            line_starts.push(start as u32);
        }
        wide_lines.push(!bytes[start..].is_ascii());
        LineIndex { line_starts, wide_lines, len: text.len() as u32 }
    }

    pub fn line_count(&self) -> u32 {
        self.line_starts.len() as u32
    }

    /// The line holding `offset` (0-based).
    pub fn line_of(&self, offset: u32) -> u32 {
        (self.line_starts.partition_point(|&s| s <= offset) - 1) as u32
    }

    pub fn line_start(&self, line: u32) -> u32 {
        self.line_starts.get(line as usize).copied().unwrap_or(self.len)
    }

    /// The position of a byte offset; an offset inside a character counts as its start, and
    /// one between the `\r` and the `\n` of a line break as the end of the line (a range
    /// that takes in the `\r` ends there, not past the line).
    pub fn position(&self, text: &str, offset: u32, encoding: Encoding) -> Position {
        let offset = offset.min(self.len);
        let line = self.line_of(offset);
        let start = self.line_starts[line as usize];
        let offset = if offset > start && text.as_bytes().get(offset as usize - 1) == Some(&b'\r') {
            offset - 1
        } else {
            offset
        };
        let character = if encoding == Encoding::Utf8 || !self.wide_lines[line as usize] {
            offset - start
        } else {
            let mut units = 0;
            for (i, c) in text[start as usize..].char_indices() {
                if start + i as u32 >= offset {
                    break;
                }
                units += c.len_utf16() as u32;
            }
            units
        };
        Position { line, character }
    }

    /// The byte offset of a position. Positions past the end of a line clamp to its end (the
    /// protocol says so); past the last line, to the end of the text.
    pub fn offset(&self, text: &str, position: Position, encoding: Encoding) -> u32 {
        let Some(&start) = self.line_starts.get(position.line as usize) else {
            return self.len;
        };
        let end = self.line_starts.get(position.line as usize + 1).map_or(self.len, |&next| next - 1);
        let line = &text[start as usize..end as usize];
        let line = line.strip_suffix('\r').unwrap_or(line);
        let wide = self.wide_lines[position.line as usize];
        if !wide {
            return start + position.character.min(line.len() as u32);
        }
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= position.character {
                return start + i as u32;
            }
            units += match encoding {
                Encoding::Utf8 => c.len_utf8() as u32,
                Encoding::Utf16 => c.len_utf16() as u32,
            };
        }
        start + line.len() as u32
    }

    pub fn range(&self, text: &str, span: Span, encoding: Encoding) -> Range {
        Range { start: self.position(text, span.start, encoding), end: self.position(text, span.end, encoding) }
    }

    pub fn span(&self, text: &str, range: Range, encoding: Encoding) -> Span {
        let start = self.offset(text, range.start, encoding);
        let end = self.offset(text, range.end, encoding).max(start);
        Span { start, end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_positions_are_byte_columns() {
        let text = "ab\ncd\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 4, Encoding::Utf16), Position { line: 1, character: 1 });
        assert_eq!(index.offset(text, Position { line: 1, character: 1 }, Encoding::Utf16), 4);
        assert_eq!(index.offset(text, Position { line: 1, character: 99 }, Encoding::Utf16), 5);
        assert_eq!(index.offset(text, Position { line: 9, character: 0 }, Encoding::Utf16), 6);
    }

    #[test]
    fn non_ascii_columns_depend_on_the_encoding() {
        // 'é' is 2 bytes and 1 UTF-16 unit; '😀' is 4 bytes and 2 UTF-16 units.
        let text = "x\n\"é😀\" y\n";
        let index = LineIndex::new(text);
        let y = text.find('y').unwrap_or_default() as u32;
        assert_eq!(index.position(text, y, Encoding::Utf16), Position { line: 1, character: 6 });
        assert_eq!(index.position(text, y, Encoding::Utf8), Position { line: 1, character: 9 });
        assert_eq!(index.offset(text, Position { line: 1, character: 6 }, Encoding::Utf16), y);
        assert_eq!(index.offset(text, Position { line: 1, character: 9 }, Encoding::Utf8), y);
        // A position inside a surrogate pair or a UTF-8 sequence lands on a boundary.
        let inside = index.offset(text, Position { line: 1, character: 3 }, Encoding::Utf16);
        assert!(text.is_char_boundary(inside as usize));
        let inside = index.offset(text, Position { line: 1, character: 2 }, Encoding::Utf8);
        assert!(text.is_char_boundary(inside as usize));
    }

    #[test]
    fn a_lone_carriage_return_ends_a_line() {
        let text = "ab\rcd\r\nef";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 3);
        assert_eq!(index.position(text, 3, Encoding::Utf16), Position { line: 1, character: 0 });
        assert_eq!(index.offset(text, Position { line: 0, character: 10 }, Encoding::Utf16), 2);
        assert_eq!(index.offset(text, Position { line: 1, character: 10 }, Encoding::Utf16), 5);
        assert_eq!(index.offset(text, Position { line: 2, character: 1 }, Encoding::Utf16), 8);
    }

    #[test]
    fn crlf_lines_end_before_the_carriage_return() {
        let text = "ab\r\ncd";
        let index = LineIndex::new(text);
        assert_eq!(index.offset(text, Position { line: 0, character: 10 }, Encoding::Utf16), 2);
        // Between the two characters of the break: the end of the line.
        assert_eq!(index.position(text, 3, Encoding::Utf16), Position { line: 0, character: 2 });
    }
}
