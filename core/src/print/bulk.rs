//! Long value lists formatted on all cores. The text never depends on the number of cores:
//! lists are cut by value count, each piece is formatted on its own thread, and the pieces
//! are put together in order.

use std::ops::Range;

use onnx_syntax::parallel::{cores, in_parallel};

/// Lists shorter than this are formatted on the calling thread: starting a thread costs
/// more than formatting them.
const MIN_PIECE: usize = 32 * 1024;

/// `0..count` cut into about one range per core.
fn pieces(count: usize) -> Vec<Range<usize>> {
    let wanted = (count / MIN_PIECE).clamp(1, cores());
    let size = count.div_ceil(wanted).max(1);
    (0..count).step_by(size).map(|start| start..(start + size).min(count)).collect()
}

/// Appends the texts of values `0..count` separated by `sep`; `write` writes value `i`.
pub fn join(out: &mut String, count: usize, sep: &str, write: impl Fn(&mut String, usize) + Sync) {
    let joined = |out: &mut String, range: Range<usize>| {
        let first = range.start;
        for i in range {
            if i > first {
                out.push_str(sep);
            }
            write(out, i);
        }
    };
    let pieces = pieces(count);
    if pieces.len() > 1 {
        let start = out.len();
        // The first piece goes straight into `out`; the others into texts appended after.
        let mut target = Some(&mut *out);
        let jobs: Vec<_> = pieces.into_iter().map(|piece| (piece, target.take())).collect();
        let rest = in_parallel(jobs, |(piece, target)| match target {
            Some(out) => {
                joined(out, piece);
                None
            }
            None => {
                let mut text = String::with_capacity(piece.len() * 12);
                joined(&mut text, piece);
                Some(text)
            }
        });
        if let Some(rest) = rest {
            for text in rest.into_iter().flatten() {
                out.push_str(sep);
                out.push_str(&text);
            }
            return;
        }
        // A thread could not be started: do it all here.
        out.truncate(start);
    }
    joined(out, 0..count);
}

/// Every value's text, in order.
#[derive(Debug)]
pub struct Texts {
    /// Per piece: the texts one after another, and where each ends.
    pieces: Vec<(String, Vec<usize>)>,
}

impl Texts {
    /// The bytes of all texts together.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(|(text, _)| text.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many texts there are.
    pub fn count(&self) -> usize {
        self.pieces.iter().map(|(_, ends)| ends.len()).sum()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().flat_map(|(text, ends)| {
            let starts = std::iter::once(0).chain(ends.iter().copied());
            starts.zip(ends.iter().copied()).map(move |(a, b)| &text[a..b])
        })
    }
}

/// Formats every value (on all cores for long lists) for a caller that lays them out.
pub fn texts<T: Sync>(values: &[T], write: impl Fn(&mut String, &T) + Sync) -> Texts {
    let format = |values: &[T]| {
        let mut text = String::with_capacity(values.len() * 12);
        let mut ends = Vec::with_capacity(values.len());
        for v in values {
            write(&mut text, v);
            ends.push(text.len());
        }
        (text, ends)
    };
    let pieces = pieces(values.len()).into_iter().map(|r| &values[r]).collect::<Vec<_>>();
    if pieces.len() > 1
        && let Some(pieces) = in_parallel(pieces, format)
    {
        return Texts { pieces };
    }
    Texts { pieces: vec![format(values)] }
}
