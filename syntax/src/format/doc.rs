//! A small layout engine in the style of Wadler's "prettier printer": the formatter builds a
//! [`Doc`] tree of texts, optional line breaks and groups, and [`render`] decides for each
//! group whether it fits flat on the current line.
//!
//! Written here rather than taken from the `pretty` crate because the formatter needs two
//! things that crate does not offer: indentation written lazily (so blank lines carry no
//! trailing spaces and a closing bracket takes the indentation of its own level, whatever
//! broke the line before it), and breaks that are no-ops at the start of a line (so a comment,
//! which must end its line, composes with the list separators around it).

use crate::ast::NumberRun;

/// Width the formatter wraps at.
pub const WIDTH: usize = 100;
/// Indentation per nesting level.
const INDENT: usize = 2;

#[derive(Debug)]
pub enum Doc {
    /// Text without line breaks.
    Text(String),
    /// A space when flat, a line break when the group breaks.
    Line,
    /// Nothing when flat, a line break when the group breaks.
    SoftLine,
    /// Always a line break (none at the start of a line); its groups cannot be flat.
    Hard,
    /// An empty line; its groups cannot be flat.
    Blank,
    /// The content, one indentation level deeper after each line break.
    Nest(Vec<Doc>),
    /// Laid out flat when it fits in the width, else with its own breaks taken.
    Group(Vec<Doc>, Option<usize>),
    /// Texts separated by spaces, breaking a line only before an item that would not fit.
    Fill(FillItems),
    Concat(Vec<Doc>),
}

/// The items of a [`Doc::Fill`]: the values of a big tensor are millions of items, and a
/// `String` each took ten times their size.
#[derive(Debug)]
pub enum FillItems {
    /// Kept as one text and where each item ends.
    Owned { text: String, ends: Vec<usize> },
    /// The numbers of a run in the source being formatted, each followed by a comma but the
    /// last: read from the source when rendered, so formatting a text of a gigabyte of
    /// numbers holds no copy of them. `width` is their flat width, items joined by spaces.
    Run { run: NumberRun, width: usize },
}

impl Default for FillItems {
    fn default() -> Self {
        FillItems::Owned { text: String::new(), ends: Vec::new() }
    }
}

impl FillItems {
    /// Adds an item made of `parts` (a value and its comma, say).
    pub fn push(&mut self, parts: &[&str]) {
        if let FillItems::Owned { text, ends } = self {
            parts.iter().for_each(|p| text.push_str(p));
            ends.push(text.len());
        }
    }

    /// The numbers of `run`, in `source` (the text the document is rendered with).
    pub fn run(run: &NumberRun, source: &str) -> FillItems {
        let count = run.count as usize;
        let digits: usize = run.iter(source).map(|l| l.text.chars().count()).sum();
        FillItems::Run { run: run.clone(), width: digits + 2 * count.saturating_sub(1) }
    }

    /// Each item as its parts (a value, and its comma if one follows).
    fn for_each(&self, source: &str, mut item: impl FnMut(&str, &str)) {
        match self {
            FillItems::Owned { text, ends } => {
                let starts = std::iter::once(0).chain(ends.iter().copied());
                starts.zip(ends.iter().copied()).for_each(|(a, b)| item(&text[a..b], ""));
            }
            FillItems::Run { run, .. } => {
                let last = (run.count as usize).saturating_sub(1);
                run.iter(source).enumerate().for_each(|(i, l)| item(l.text, if i < last { "," } else { "" }));
            }
        }
    }

    fn flat_width(&self) -> usize {
        match self {
            FillItems::Owned { text, ends } => text.chars().count() + ends.len().saturating_sub(1),
            FillItems::Run { width, .. } => *width,
        }
    }
}

impl Doc {
    pub fn text(text: impl Into<String>) -> Doc {
        Doc::Text(text.into())
    }

    pub fn group(parts: Vec<Doc>) -> Doc {
        let width = flat_width_of(&parts);
        Doc::Group(parts, width)
    }

    /// The width of the document laid out flat; `None` if it holds a forced break.
    fn flat_width(&self) -> Option<usize> {
        match self {
            Doc::Text(t) => Some(t.chars().count()),
            Doc::Line => Some(1),
            Doc::SoftLine => Some(0),
            Doc::Hard | Doc::Blank => None,
            Doc::Nest(parts) | Doc::Concat(parts) => flat_width_of(parts),
            Doc::Group(_, width) => *width,
            Doc::Fill(items) => Some(items.flat_width()),
        }
    }
}

fn flat_width_of(parts: &[Doc]) -> Option<usize> {
    parts.iter().try_fold(0usize, |sum, d| Some(sum + d.flat_width()?))
}

/// Lays the document out in [`WIDTH`] columns.
#[cfg(test)]
pub fn render(doc: &Doc) -> String {
    render_into(doc, "", String::new())
}

/// Lays the document out in [`WIDTH`] columns, into `out` (sized by the caller: a formatted
/// text is about as long as its source, and growing a 100 MB string by doubling copies it
/// twice).
pub fn render_into(doc: &Doc, source: &str, out: String) -> String {
    let mut r = Renderer { source, out, column: 0, line_start: true, line_empty_before: true };
    r.doc(doc, 0, false);
    r.out
}

struct Renderer<'s> {
    /// The text being formatted, which [`FillItems::Run`] items are read from.
    source: &'s str,
    out: String,
    column: usize,
    /// Nothing but (not yet written) indentation on the current line.
    line_start: bool,
    /// The line before the current one is empty (or there is none).
    line_empty_before: bool,
}

impl Renderer<'_> {
    fn doc(&mut self, doc: &Doc, indent: usize, flat: bool) {
        match doc {
            Doc::Text(t) => self.text(t, indent),
            Doc::Line if flat => self.text(" ", indent),
            Doc::SoftLine if flat => {}
            Doc::Line | Doc::SoftLine | Doc::Hard => self.newline(),
            Doc::Blank => {
                self.newline();
                if !self.line_empty_before {
                    self.out.push('\n');
                    self.line_empty_before = true;
                }
            }
            Doc::Nest(parts) => parts.iter().for_each(|d| self.doc(d, indent + INDENT, flat)),
            Doc::Concat(parts) => parts.iter().for_each(|d| self.doc(d, indent, flat)),
            Doc::Group(parts, width) => {
                let start = if self.line_start { indent } else { self.column };
                let fits = flat || width.is_some_and(|w| start + w <= WIDTH);
                parts.iter().for_each(|d| self.doc(d, indent, fits));
            }
            Doc::Fill(items) => {
                let mut first = true;
                items.for_each(self.source, |value, comma| {
                    let width = value.chars().count() + comma.len();
                    if !first {
                        if flat || self.column + 1 + width <= WIDTH {
                            self.text(" ", indent);
                        } else {
                            self.newline();
                        }
                    }
                    first = false;
                    self.text(value, indent);
                    self.text(comma, indent);
                });
            }
        }
    }

    fn text(&mut self, text: &str, indent: usize) {
        if self.line_start {
            // Indentation is written only once the line has content.
            self.out.extend(std::iter::repeat_n(' ', indent));
            self.column = indent;
            self.line_start = false;
            // A separator space meant for after other text (a trailing comment's) is not
            // written at the start of a line.
            let text = text.trim_start_matches(' ');
            self.out.push_str(text);
            self.column += text.chars().count();
            return;
        }
        self.out.push_str(text);
        self.column += text.chars().count();
    }

    /// A line break, unless the current line is still empty.
    fn newline(&mut self) {
        if self.line_start {
            return;
        }
        // Spaces before a break are separators meant for a flat layout (texts never end in
        // a space: literals end in a quote or digit, comments are trimmed).
        self.out.truncate(self.out.trim_end_matches(' ').len());
        self.out.push('\n');
        self.column = 0;
        self.line_start = true;
        self.line_empty_before = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Doc {
        let mut inner = vec![Doc::SoftLine];
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                inner.push(Doc::text(","));
                inner.push(Doc::Line);
            }
            inner.push(Doc::text(*item));
        }
        Doc::group(vec![Doc::text("("), Doc::Nest(inner), Doc::SoftLine, Doc::text(")")])
    }

    #[test]
    fn a_group_that_fits_stays_flat() {
        assert_eq!(render(&list(&["a", "b"])), "(a, b)");
    }

    #[test]
    fn a_group_too_wide_breaks_one_item_per_line() {
        let long = "x".repeat(60);
        assert_eq!(render(&list(&[&long, &long])), format!("(\n  {long},\n  {long}\n)"));
    }

    #[test]
    fn a_forced_break_breaks_the_enclosing_group_and_blank_lines_have_no_spaces() {
        let doc = Doc::group(vec![
            Doc::text("{"),
            Doc::Nest(vec![Doc::Hard, Doc::text("a"), Doc::Blank, Doc::text("b")]),
            Doc::Hard,
            Doc::text("}"),
        ]);
        assert_eq!(render(&doc), "{\n  a\n\n  b\n}");
    }

    #[test]
    fn fill_packs_items_up_to_the_width() {
        let mut items = FillItems::default();
        for i in 0..40 {
            items.push(&[&format!("{i:03}"), ","]);
        }
        let text = render(&Doc::Nest(vec![Doc::Hard, Doc::Fill(items)]));
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert!(text.lines().count() > 1);
    }
}
