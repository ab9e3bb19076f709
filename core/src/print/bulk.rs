//! Long value lists formatted on all cores. The text never depends on the number of cores:
//! lists are cut by value count, the pieces are formatted by whichever thread takes them,
//! and they are put together in order.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use onnx_threads::{cores, map_in_order, pool};

/// Lists shorter than this are formatted on the calling thread: handing work over costs
/// more than formatting them.
const MIN_PIECE: usize = 32 * 1024;

/// `0..count` cut into about one range per core.
fn pieces(count: usize) -> Vec<Range<usize>> {
    let wanted = (count / MIN_PIECE).clamp(1, cores());
    ranges(count, count.div_ceil(wanted))
}

/// `0..count` cut into ranges of `size` values (the last one shorter).
fn ranges(count: usize, size: usize) -> Vec<Range<usize>> {
    let size = size.max(1);
    (0..count).step_by(size).map(|start| start..(start + size).min(count)).collect()
}

/// Values per piece of a long list printed by [`join`]: small enough that the pieces keep
/// both cores busy to the end, large enough that handing one over costs nothing.
const JOIN_PIECE: usize = 32 * 1024;

/// Appends the texts of values `0..count` separated by `sep`; `write` writes value `i`'s
/// ASCII bytes.
///
/// Long lists are cut into pieces that every core takes one at a time; this thread also
/// appends finished pieces to `out` in order as they come. Appending is the one part that
/// cannot be shared (it is where `out`'s fresh memory is first touched, a page fault per
/// 4 KiB), so it overlaps with the other cores' formatting instead of following it. Each
/// piece is turned into text by the thread that wrote it (one UTF-8 check per piece).
pub fn join(out: &mut String, count: usize, sep: &str, write: impl Fn(&mut Vec<u8>, usize) + Sync) {
    join_on(out, count, sep, cores(), write);
}

/// [`join`] on at most `threads` threads.
fn join_on(out: &mut String, count: usize, sep: &str, threads: usize, write: impl Fn(&mut Vec<u8>, usize) + Sync) {
    let format = |range: Range<usize>| {
        let mut text = Vec::with_capacity(range.len() * 12);
        let first = range.start;
        for i in range {
            if i > first {
                // A one-byte separator (`,`) is one store, not a copy of unknown length.
                match sep.as_bytes() {
                    &[byte] => text.push(byte),
                    bytes => text.extend_from_slice(bytes),
                }
            }
            write(&mut text, i);
        }
        // Writers write text (numbers: ASCII), so this never fails.
        String::from_utf8(text).unwrap_or_default()
    };
    let helpers = threads.min(count / MIN_PIECE).saturating_sub(1);
    let Some(pool) = pool().filter(|_| helpers > 0) else {
        out.push_str(&format(0..count));
        return;
    };
    let pieces = ranges(count, JOIN_PIECE);
    let next = AtomicUsize::new(0);
    let claim = || Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < pieces.len());
    // The helpers are pool tasks; this thread runs the loop below in place. A helper that
    // starts late (the pool busy elsewhere) finds the pieces claimed and ends: this thread
    // formats whatever nobody has taken, so it never waits for a task that has not begun.
    pool.in_place_scope(|scope| {
        let (sender, receiver) = mpsc::channel::<(usize, String)>();
        for _ in 0..helpers {
            let sender = sender.clone();
            let (claim, format, pieces) = (&claim, &format, &pieces);
            scope.spawn(move |_| {
                while let Some(i) = claim() {
                    if sender.send((i, format(pieces[i].clone()))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut done: Vec<Option<String>> = vec![None; pieces.len()];
        let mut appended = 0;
        while appended < pieces.len() {
            while let Ok((i, text)) = receiver.try_recv() {
                done[i] = Some(text);
            }
            if let Some(text) = done[appended].take() {
                if appended > 0 {
                    out.push_str(sep);
                }
                out.push_str(&text);
                appended += 1;
            } else if let Some(i) = claim() {
                done[i] = Some(format(pieces[i].clone()));
            } else {
                // The next piece is being formatted by a helper: wait for it (or, should the
                // helpers be gone without it, format it here).
                match receiver.recv() {
                    Ok((i, text)) => done[i] = Some(text),
                    Err(_) => done[appended] = Some(format(pieces[appended].clone())),
                }
            }
        }
    });
}

/// Every value's text, in order, in pieces where the values are already joined by `, `
/// (so that a caller laying them out in lines copies a line's worth at once).
#[derive(Debug)]
pub struct Texts {
    /// Per piece: the texts joined by `, `, and where each text ends.
    pieces: Vec<(String, Vec<usize>)>,
}

/// What separates two texts inside a piece.
pub const TEXT_SEPARATOR: &str = ", ";

impl Texts {
    /// The length of all texts joined by `, `.
    pub fn joined_len(&self) -> usize {
        let texts: usize = self.pieces.iter().map(|(text, _)| text.len()).sum();
        texts + TEXT_SEPARATOR.len() * self.pieces.iter().filter(|(_, ends)| !ends.is_empty()).count().saturating_sub(1)
    }

    /// The width of all texts joined by `, `, in columns: characters, as the formatter counts
    /// them (numbers are ASCII, strings may not be).
    pub fn joined_width(&self) -> usize {
        let texts: usize =
            self.pieces.iter().map(|(text, _)| if text.is_ascii() { text.len() } else { text.chars().count() }).sum();
        texts + TEXT_SEPARATOR.len() * self.pieces.iter().filter(|(_, ends)| !ends.is_empty()).count().saturating_sub(1)
    }

    /// How many texts there are.
    pub fn count(&self) -> usize {
        self.pieces.iter().map(|(_, ends)| ends.len()).sum()
    }

    /// The pieces: texts joined by `, ` and where each text ends.
    pub fn pieces(&self) -> impl Iterator<Item = (&str, &[usize])> {
        self.pieces.iter().map(|(text, ends)| (text.as_str(), ends.as_slice()))
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.pieces().flat_map(|(text, ends)| (0..ends.len()).map(move |i| &text[text_start(ends, i)..ends[i]]))
    }
}

/// Where text `i` of a piece starts, given where each ends.
pub fn text_start(ends: &[usize], i: usize) -> usize {
    if i == 0 { 0 } else { ends[i - 1] + TEXT_SEPARATOR.len() }
}

/// How [`texts`] may spread its work.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Spread {
    /// Long lists on every core.
    AllCores,
    /// On the calling thread only: the caller is already one of several running at once.
    ThisThread,
}

/// Formats every value (on all cores for long lists, if `spread` allows) for a caller that
/// lays them out.
pub fn texts<T: Sync>(values: &[T], spread: Spread, write: impl Fn(&mut Vec<u8>, &T) + Sync) -> Texts {
    let format = |values: &[T]| {
        // Room for the longest common texts (`-0.012345678, `) so the buffer is not moved.
        let mut text = Vec::with_capacity(values.len() * 16);
        let mut ends = Vec::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                text.extend_from_slice(TEXT_SEPARATOR.as_bytes());
            }
            write(&mut text, v);
            ends.push(text.len());
        }
        // Writers write whole texts (numbers: ASCII), so this never fails.
        match String::from_utf8(text) {
            Ok(text) => (text, ends),
            Err(_) => (String::new(), Vec::new()),
        }
    };
    if spread == Spread::ThisThread {
        return Texts { pieces: vec![format(values)] };
    }
    let pieces = pieces(values.len()).into_iter().map(|r| &values[r]).collect::<Vec<_>>();
    Texts { pieces: map_in_order(pieces, format) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_text_is_the_same_on_any_number_of_threads() {
        let values: Vec<f32> =
            (0..300_001u32).map(|i| (i as f32).sqrt() * if i % 3 == 0 { -1.0 } else { 1e-3 }).collect();
        let write = |out: &mut Vec<u8>, i: usize| super::super::number::push_f32(out, values[i]);
        let expected = {
            let mut text = String::from("{");
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                text.push_str(&super::super::number::f32_text(*v));
            }
            text
        };
        for threads in 1..=5 {
            let mut out = String::from("{");
            join_on(&mut out, values.len(), ", ", threads, write);
            assert!(out == expected, "{threads} threads");
        }
        let mut out = String::from("{");
        join_on(&mut out, 0, ", ", 4, write);
        assert_eq!(out, "{");
    }
}
