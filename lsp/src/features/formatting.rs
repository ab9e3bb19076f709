//! Formatting: the formatter of `onnx fmt`, answered as the edits that turn the document
//! into its formatted text, one per run of changed lines, so that a one-line change of a
//! 10 MB document is answered with one small edit (an editor applies a whole-document
//! replacement slowly and loses the cursor, folds and marks with it). Range formatting
//! formats the whole text and keeps the edits that touch the range. Text with syntax errors
//! is left as it is (its diagnostics say why).

use std::time::{Duration, Instant};

use onnx_core::diagnostic::Span;
use onnx_syntax::format::format_model;
use similar::{Algorithm, DiffOp, TextDiff};

use crate::lsp::*;
use crate::snapshot::Snapshot;

/// How long the line diff may look for the smallest set of edits before it settles for
/// bigger ones (still correct); a formatted text differs from its source in few lines.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

pub fn format(s: &Snapshot) -> Option<Vec<TextEdit>> {
    let formatted = format_model(&s.text).ok()?;
    Some(
        edits(&s.text, &formatted)
            .into_iter()
            .map(|(span, new_text)| TextEdit { range: s.range(span), new_text })
            .collect(),
    )
}

/// `textDocument/rangeFormatting`: the edits of [`format`] that touch the lines of `range`.
pub fn format_range(s: &Snapshot, range: Range) -> Option<Vec<TextEdit>> {
    let formatted = format_model(&s.text).ok()?;
    let wanted = s.span(range);
    Some(
        edits(&s.text, &formatted)
            .into_iter()
            .filter(|(span, _)| touches(*span, wanted))
            .map(|(span, new_text)| TextEdit { range: s.range(span), new_text })
            .collect(),
    )
}

/// Whether an edit of `span` changes what is in `wanted`: they overlap; an insertion or an
/// empty range (a cursor) counts at either end of the other.
fn touches(span: Span, wanted: Span) -> bool {
    if span.start == span.end || wanted.start == wanted.end {
        span.start <= wanted.end && wanted.start <= span.end
    } else {
        span.start < wanted.end && wanted.start < span.end
    }
}

/// The spans of `old` to replace, each by its text, to make `new`: whole lines, one edit per
/// run of lines that differ, in document order and never overlapping.
fn edits(old: &str, new: &str) -> Vec<(Span, String)> {
    if old == new {
        return Vec::new();
    }
    // The lines both begin and end with are left out of the diff: after a one-line change of
    // a big document, the diff sees a few lines, not all of them.
    let (head, tail) = common_lines(old, new);
    let (old_middle, new_middle) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(Instant::now() + DIFF_DEADLINE)
        .diff_lines(old_middle, new_middle);
    let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
    // Byte offset in `old` of each line start of the middle, and of the middle's end.
    let mut starts = Vec::with_capacity(old_lines.len() + 1);
    let mut at = head as u32;
    for line in old_lines {
        starts.push(at);
        at += line.len() as u32;
    }
    starts.push(at);
    let mut out: Vec<(Span, String)> = Vec::new();
    for op in diff.ops() {
        let (old_range, new_range) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete { old_index, old_len, new_index } => (old_index..old_index + old_len, new_index..new_index),
            DiffOp::Insert { old_index, new_index, new_len } => (old_index..old_index, new_index..new_index + new_len),
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                (old_index..old_index + old_len, new_index..new_index + new_len)
            }
        };
        let span = Span { start: starts[old_range.start], end: starts[old_range.end] };
        let text: String = new_lines[new_range].concat();
        // Runs that touch (a delete next to an insert) become one edit.
        match out.last_mut() {
            Some((last, last_text)) if last.end == span.start => {
                last.end = span.end;
                last_text.push_str(&text);
            }
            _ => out.push((span, text)),
        }
    }
    out
}

/// The lengths in bytes of the whole lines `old` and `new` begin with alike, and of those
/// they end with alike (not overlapping the first).
fn common_lines(old: &str, new: &str) -> (usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let same = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let head = a[..same].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let room = a.len().min(b.len()) - head;
    let same_end = a.iter().rev().zip(b.iter().rev()).take(room).position(|(x, y)| x != y).unwrap_or(room);
    // The common end starts just after a line break (or is the whole rest).
    let tail_start = a.len() - same_end;
    let tail = if tail_start == head || a[tail_start - 1] == b'\n' {
        same_end
    } else {
        a[tail_start..].iter().position(|&c| c == b'\n').map_or(0, |i| same_end - i - 1)
    };
    (head, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(old: &str, edits: &[(Span, String)]) -> String {
        let mut out = old.to_owned();
        for (span, text) in edits.iter().rev() {
            out.replace_range(span.start as usize..span.end as usize, text);
        }
        out
    }

    #[test]
    fn edits_cover_only_the_lines_that_change() {
        let old = "a\nb\n  c\nd\ne";
        let new = "a\nb\nc\nd\ne\n";
        let changes = edits(old, new);
        assert_eq!(apply(old, &changes), new);
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert_eq!(changes[0], (Span { start: 4, end: 8 }, "c\n".to_owned()));
        // Lines added, removed and joined, and text without a final line break.
        for (old, new) in
            [("x", "x\n"), ("a\n\n\nb\n", "a\n\nb\n"), ("a(\n  b)\n", "a(b)\n"), ("", "a\n"), ("é\nü", "é\n ü\n")]
        {
            assert_eq!(apply(old, &edits(old, new)), new, "{old:?} → {new:?}");
        }
        assert!(edits("same\n", "same\n").is_empty());
        // One line changed among many: its edit alone.
        let many: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let changed = many.replace("line 500\n", "line  500\n");
        assert_eq!(edits(&many, &changed), vec![(Span { start: 4390, end: 4399 }, "line  500\n".to_owned())]);
        for (old, new) in [("a\nb\nc\n", "a\nc\n"), ("ab\nb\n", "b\nb\n"), ("x\ny", "x\nyy"), ("k\nk\n", "k\nk\nk\n")] {
            assert_eq!(apply(old, &edits(old, new)), new, "{old:?} → {new:?}");
        }
    }
}
