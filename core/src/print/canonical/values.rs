//! A tensor's values as text: each value written, then the list laid out, on one line where
//! it fits, else filled into lines of at most [`WIDTH`] columns.

use super::WIDTH;
use super::escape::{string, width};
use super::nan::{any_payload_nan_f32, nan_with_payload_f64};
use crate::ir::*;
use crate::print::bulk;
use crate::print::number::{push_f32, push_f64, push_int};

/// `{v, v, …}` from the typed field the data type selects, when the text reads back exactly;
/// long lists are filled into lines of at most 100 columns below the item at `indent`.
pub(super) fn typed_values(t: &Tensor, dt: DataType, indent: usize) -> Option<Payload> {
    value_texts(t, dt, bulk::Spread::AllCores).map(|texts| {
        // A list too wide even at the item's indentation breaks wherever it starts.
        // (A character takes at most four bytes: a longer text is wider than any line.)
        let short = texts.joined_len() <= 4 * WIDTH && indent + texts.joined_width() + 2 <= WIDTH;
        if short { Payload::Short(texts) } else { Payload::Text(pack(&texts, indent)) }
    })
}

/// A tensor's values, or the text that stands for them.
pub(super) enum Payload {
    /// Laid out already: values filled into lines, a streamed tensor's marker, external data
    /// entries.
    Text(String),
    /// Values that may fit on one line, laid out by the caller once it knows the column where
    /// they start ([`Payload::at`]).
    Short(bulk::Texts),
}

impl Payload {
    /// The text of the payload when its `{` is at `column`, in an item indented by `indent`:
    /// `{a, b}` when it ends by the width, as the formatter keeps a list that fits where it
    /// starts (whatever follows it on the line), else filled into lines.
    pub(super) fn at(self, column: usize, indent: usize) -> String {
        match self {
            Payload::Text(text) => text,
            Payload::Short(texts) if column + texts.joined_width() + 2 <= WIDTH => {
                let mut flat = String::with_capacity(texts.joined_len() + 2);
                flat.push('{');
                for (i, (text, _)) in texts.pieces().filter(|(_, ends)| !ends.is_empty()).enumerate() {
                    if i > 0 {
                        flat.push_str(bulk::TEXT_SEPARATOR);
                    }
                    flat.push_str(text);
                }
                flat.push('}');
                flat
            }
            Payload::Short(texts) => pack(&texts, indent),
        }
    }
}

/// The text of each value of a tensor held in its typed field; `None` when other typed
/// fields hold values too or a float is a NaN with a payload (neither reads back exactly).
pub(super) fn value_texts(t: &Tensor, dt: DataType, spread: bulk::Spread) -> Option<bulk::Texts> {
    let others_empty = |field: TypedField| {
        (field == TypedField::FloatData || t.float_data.is_empty())
            && (field == TypedField::Int32Data || t.int32_data.is_empty())
            && (field == TypedField::StringData || t.string_data.is_empty())
            && (field == TypedField::Int64Data || t.int64_data.is_empty())
            && (field == TypedField::DoubleData || t.double_data.is_empty())
            && (field == TypedField::Uint64Data || t.uint64_data.is_empty())
    };
    let field = dt.typed_field();
    if !others_empty(field) {
        return None;
    }
    match field {
        TypedField::FloatData => {
            if any_payload_nan_f32(t.float_data.iter().map(|v| v.to_bits())) {
                return None;
            }
            Some(bulk::texts(&t.float_data, spread, |out, v| push_f32(out, *v)))
        }
        TypedField::DoubleData => {
            if t.double_data.iter().any(|v| nan_with_payload_f64(*v)) {
                return None;
            }
            Some(bulk::texts(&t.double_data, spread, |out, v| push_f64(out, *v)))
        }
        TypedField::Int32Data => Some(bulk::texts(&t.int32_data, spread, push_int)),
        TypedField::Int64Data => Some(bulk::texts(&t.int64_data, spread, push_int)),
        // The parser stores uint32 values in uint64_data too; a value above 2^32 still reads back.
        TypedField::Uint64Data => Some(bulk::texts(&t.uint64_data, spread, push_int)),
        TypedField::StringData => {
            Some(bulk::texts(&t.string_data, spread, |out, v| out.extend_from_slice(string(v).as_bytes())))
        }
        TypedField::None => None,
    }
}

/// Spare capacity for what is put in front of a long value list.
const HEAD_ROOM: usize = 4096;

/// The values filled into lines of at most [`WIDTH`] columns below the item at `indent`,
/// `{` to `}`.
fn pack(texts: &bulk::Texts, indent: usize) -> String {
    let joined_len = texts.joined_len();
    // Room in front too: the item's head (`float[…] name =`) and annotations are inserted
    // before the values, which must not make a hundred megabytes move to a new allocation.
    let pad = indent + 2;
    let mut lines = String::with_capacity(joined_len + joined_len / 80 * (pad + 2) + pad + indent + 8 + HEAD_ROOM);
    let mut packer = Packer::new(indent, texts.count());
    packer.start(&mut lines);
    packer.feed(texts, &mut lines);
    packer.finish(&mut lines);
    lines
}

/// Lays a long value list out in lines, `{` to `}`, fed the texts of its values in order, a
/// batch at a time: [`pack`] feeds them all at once; streaming a big tensor feeds a chunk at
/// a time and writes out what each made, so the text is never whole in memory.
pub(super) struct Packer {
    indent: usize,
    /// Every value of the list, fed or not: the last one has no comma.
    count: usize,
    /// Values laid out so far.
    seen: usize,
    /// Columns taken on the current line after its indentation (0: nothing on it yet).
    line_len: usize,
}

impl Packer {
    pub(super) fn new(indent: usize, count: usize) -> Packer {
        Packer { indent, count, seen: 0, line_len: 0 }
    }

    pub(super) fn start(&self, out: &mut String) {
        out.push_str("{\n");
    }

    /// Lays out the next values. The texts come joined by `, `, as they are written inside a
    /// line: each line is one copy of a run of them (a value at a time would be millions of
    /// small copies). What is written is final: later batches only add to it.
    pub(super) fn feed(&mut self, texts: &bulk::Texts, out: &mut String) {
        let pad = self.indent + 2;
        for (text, ends) in texts.pieces() {
            // Numbers are ASCII; strings may have wider characters, counted as the formatter
            // counts columns.
            let ascii = text.is_ascii();
            // The part of the current line in this piece not written yet.
            let (mut run_start, mut run_end) = (0, 0);
            for (i, &end) in ends.iter().enumerate() {
                let start = bulk::text_start(ends, i);
                self.seen += 1;
                // The text and, but for the last, its comma.
                let text_width = if ascii { end - start } else { width(&text[start..end]) };
                let piece_len = text_width + usize::from(self.seen < self.count);
                if self.line_len > 0 && pad + self.line_len + 1 + piece_len > WIDTH {
                    out.push_str(&text[run_start..run_end]);
                    out.push_str(",\n");
                    self.line_len = 0;
                }
                if self.line_len == 0 {
                    out.extend(std::iter::repeat_n(' ', pad));
                    run_start = start;
                } else {
                    // The line goes on: `, ` is in the run, except between two pieces.
                    if i == 0 {
                        out.push_str(bulk::TEXT_SEPARATOR);
                        run_start = start;
                    }
                    self.line_len += 1;
                }
                run_end = end;
                self.line_len += piece_len;
            }
            out.push_str(&text[run_start..run_end]);
        }
    }

    pub(super) fn finish(&self, out: &mut String) {
        if self.line_len == 0 {
            out.extend(std::iter::repeat_n(' ', self.indent + 2));
        }
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', self.indent));
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout rule one value at a time, as plainly as it can be said: the oracle for
    /// `pack`, which copies runs of values at once.
    fn pack_value_by_value(texts: &[&str], indent: usize) -> String {
        let pad = " ".repeat(indent + 2);
        let mut out = String::from("{\n");
        let mut line = String::new();
        for (i, text) in texts.iter().enumerate() {
            let item = if i + 1 < texts.len() { format!("{text},") } else { text.to_string() };
            if !line.is_empty() && pad.len() + line.len() + 1 + item.len() > WIDTH {
                out.push_str(&format!("{pad}{line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&item);
        }
        out.push_str(&format!("{pad}{line}\n{}}}", " ".repeat(indent)));
        out
    }

    #[test]
    fn packed_lines_match_the_value_by_value_layout() {
        // Texts of varied widths, in one piece and (past 64K values) in several.
        for count in [0usize, 1, 2, 5, 17, 300, 70_001, 100_000] {
            let values: Vec<i64> =
                (0..count as i64).map(|i| (i * 7919) % 100_003 - 5_000 + i * i % 13 * 1_000_000).collect();
            let texts = bulk::texts(&values, bulk::Spread::AllCores, push_int);
            let listed: Vec<&str> = texts.iter().collect();
            assert_eq!(listed.len(), count);
            for indent in [0, 4, 58, 70] {
                let packed = pack(&texts, indent);
                assert!(packed == pack_value_by_value(&listed, indent), "{count} values, indent {indent}");
            }
        }
    }
}
