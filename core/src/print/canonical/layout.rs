//! Lists on one line when they fit, one item per line otherwise; and the parts whose quick
//! layout may not be the formatter's, handed to the formatter to lay out.

use std::borrow::Cow;
use std::fmt::Write as _;

use onnx_syntax::format::{Fragment, format_fragment};

use super::escape::width;
use super::stream::{DRAIN_AT, STREAM_MARK, stream_values};
use super::{Printer, WIDTH};

impl Printer<'_, '_> {
    /// `open items close` on one line when it fits and no item carries an annotation line,
    /// one item per line otherwise.
    pub(super) fn list(&mut self, open: &str, close: &str, items: &[String], indent: usize) {
        self.list_with(open, close, items.len(), indent, |_, i| Cow::Borrowed(items[i].as_str()));
    }

    /// [`Self::list`] of `count` items made by `make` one at a time, as they are written: an
    /// initializer's text can be a hundred megabytes, and only one is held at once. Items are
    /// made ahead only while the list might still fit on one line.
    pub(super) fn list_with<'i>(
        &mut self,
        open: &str,
        close: &str,
        count: usize,
        indent: usize,
        make: impl Fn(&Self, usize) -> Cow<'i, str>,
    ) {
        let line_start = self.out.rfind('\n').map_or(0, |i| i + 1);
        let current = width(&self.out[line_start..]);
        let mut made = Vec::new();
        let mut flat_len = 2 * count.saturating_sub(1);
        let mut fits = true;
        while made.len() < count {
            let item = make(self, made.len());
            // Columns, as the formatter counts them (a character takes at most four bytes: a
            // longer item is wider than any line).
            flat_len += if item.len() > 4 * WIDTH { item.len() } else { width(&item) };
            // A streamed tensor's values are many lines, whatever its placeholder's length.
            fits = current + flat_len + 2 <= WIDTH && !item.contains('\n') && !item.contains(STREAM_MARK);
            made.push(item);
            if !fits {
                break;
            }
        }
        if fits {
            let flat = made.join(", ");
            // `w =` (an initializer without data) before `>` would read as `=>`.
            let space = if flat.ends_with('=') { " " } else { "" };
            let _ = write!(self.out, "{open}{flat}{space}{close}");
            return;
        }
        self.out.push_str(open);
        self.out.push('\n');
        let ahead = made.len();
        for (i, item) in made.into_iter().enumerate() {
            self.list_item(&item, indent, i + 1 < count);
        }
        for i in ahead..count {
            let item = make(self, i);
            self.list_item(&item, indent, i + 1 < count);
        }
        self.out.push_str(&" ".repeat(indent));
        self.out.push_str(close);
    }

    /// One item of a list written one item per line.
    fn list_item(&mut self, item: &str, indent: usize, comma: bool) {
        // A declaration too wide for its line (a long name with its value) is laid out by
        // the formatter.
        let relaid;
        // An item with annotation lines starts with its indentation; others get it here.
        let first = if item.starts_with(' ') { 0 } else { indent + 2 };
        let item = if too_wide(item, first) {
            relaid = relayout(Fragment::Declaration, item.to_owned(), indent + 2);
            relaid.as_str()
        } else {
            item
        };
        if !item.starts_with(' ') {
            self.out.push_str(&" ".repeat(indent + 2));
        }
        let m = self.m;
        match self.sink.as_mut() {
            // A big item goes straight out, after what is before it on its line; a tensor
            // left to stream is printed a chunk at a time where its marker stands.
            Some(sink) if self.capturing == 0 && (item.len() >= DRAIN_AT || item.contains(STREAM_MARK)) => {
                sink.write(&self.out);
                self.out.clear();
                let mut parts = item.split(STREAM_MARK);
                sink.write(parts.next().unwrap_or_default());
                while let (Some(marker), Some(after)) = (parts.next(), parts.next()) {
                    stream_values(m, marker, sink);
                    sink.write(after);
                }
            }
            _ => self.out.push_str(item),
        }
        if comma {
            self.out.push(',');
        }
        self.out.push('\n');
        self.drain();
    }
}

/// The largest printed part whose lines are measured for [`relayout`]: bigger ones are the
/// values of big tensors, which the printer packs into lines as the formatter does.
const RELAYOUT_LIMIT: usize = 1 << 16;

/// Whether a printed part (at most [`RELAYOUT_LIMIT`] long) has a line wider than the
/// formatter allows, its first line starting `first` columns after where the text begins.
/// Widths are counted in characters, as the formatter counts them.
pub(super) fn too_wide(text: &str, first: usize) -> bool {
    text.len() <= RELAYOUT_LIMIT
        && !text.contains(STREAM_MARK)
        && text.lines().enumerate().any(|(i, l)| if i == 0 { first } else { 0 } + l.chars().count() > WIDTH)
}

/// `text`, a part written at `indent` whose quick layout may not be the formatter's, laid
/// out by the formatter, starting with its indentation (`text` unchanged if it cannot be,
/// which the corpus tests would show).
pub(super) fn relayout(fragment: Fragment, text: String, indent: usize) -> String {
    match format_fragment(fragment, text.trim_start(), indent) {
        Some(laid) => laid,
        None => text,
    }
}
