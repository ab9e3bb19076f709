//! Screen 4: the checker's and inference's findings, all or errors or warnings only;
//! Enter jumps to a finding's node.

use onnx_core::diagnostic::Severity;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::component::{Component, Cursor, Outcome, Shared};
use crate::sanitize;
use crate::search::Target;
use crate::style::{dim, error_style, focus_block, heading, position, row, warning_style};
use crate::worker::{Analysis, Finding};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Filter {
    #[default]
    All,
    Errors,
    Warnings,
}

#[derive(Debug, Default)]
pub struct DiagnosticsScreen {
    cursor: Cursor,
    filter: Filter,
}

impl DiagnosticsScreen {
    /// The findings the filter lets through.
    pub fn shown<'a>(&self, analysis: Option<&'a Analysis>) -> Vec<&'a Finding> {
        let Some(a) = analysis else { return Vec::new() };
        a.diagnostics
            .iter()
            .filter(|f| match self.filter {
                Filter::All => true,
                Filter::Errors => f.diagnostic.severity == Severity::Error,
                Filter::Warnings => f.diagnostic.severity == Severity::Warning,
            })
            .collect()
    }

    /// `e`: all, errors, warnings.
    pub fn cycle_filter(&mut self) {
        self.filter = match self.filter {
            Filter::All => Filter::Errors,
            Filter::Errors => Filter::Warnings,
            Filter::Warnings => Filter::All,
        };
        self.cursor = Cursor::default();
    }
}

impl Component for DiagnosticsScreen {
    fn step(&mut self, delta: isize, cx: &Shared<'_>) {
        let len = self.shown(cx.analysis).len();
        self.cursor.step(delta, len);
    }

    fn enter(&mut self, cx: &Shared<'_>) -> Outcome {
        match self.shown(cx.analysis).get(self.cursor.selected).and_then(|f| f.node) {
            Some(n) => Outcome::GoTo(Target::Node(n)),
            None => Outcome::Flash("this finding is not about a node".into()),
        }
    }

    fn selected(&self, _: &Shared<'_>) -> usize {
        self.cursor.selected
    }

    fn select(&mut self, row: usize, _: &Shared<'_>) {
        self.cursor.selected = row;
    }

    fn list(&self, _: &Shared<'_>) -> Option<Cursor> {
        Some(self.cursor)
    }

    fn hint(&self, _: &Shared<'_>) -> &'static str {
        "Enter jumps to the node · e errors/warnings · ? help"
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let filter = match self.filter {
            Filter::All => "all",
            Filter::Errors => "errors",
            Filter::Warnings => "warnings",
        };
        if cx.analysis.is_none() {
            frame.render_widget(Paragraph::new("checking…").block(focus_block(" diagnostics ".into(), true)), area);
            return;
        }
        let shown = self.shown(cx.analysis);
        let len = shown.len();
        // The selected finding in full below the list: a row is cut at the screen's width,
        // and messages that say what is wrong and why are often longer.
        let (area, detail) = if len == 0 || area.height < 10 {
            (area, None)
        } else {
            let [list, detail] = Layout::vertical([Constraint::Min(3), Constraint::Length(7)]).areas(area);
            (list, Some(detail))
        };
        let window = self.cursor.shown_in(area, len);
        let selected = self.cursor.selected;
        let mut lines = Vec::new();
        for i in window {
            let f = shown[i];
            let (mark, style) = match f.diagnostic.severity {
                Severity::Error => ("error", error_style()),
                _ => ("warning", warning_style()),
            };
            let spans = vec![
                Span::styled(format!("{mark:<8}"), style),
                Span::styled(format!("{} ", f.diagnostic.code), heading()),
                Span::raw(sanitize::str(&f.diagnostic.message).into_owned()),
                Span::styled(format!("  {}", sanitize::str(&f.place)), dim()),
            ];
            lines.push(row(spans, i == selected));
        }
        if len == 0 {
            lines.push(Line::from("no findings: the checker and inference found the model valid"));
        }
        let title = format!(" diagnostics ({filter}) · {} ", position(selected, len));
        frame.render_widget(Paragraph::new(lines).block(focus_block(title, true)), area);
        if let (Some(detail), Some(f)) = (detail, shown.get(selected)) {
            let mut text = vec![Line::from(vec![
                Span::styled(format!("{} ", f.diagnostic.code), heading()),
                Span::raw(sanitize::str(&f.diagnostic.message).into_owned()),
            ])];
            text.push(Line::styled(format!("at {}", sanitize::str(&f.place)), dim()));
            for (_, what) in &f.diagnostic.related {
                text.push(Line::styled(format!("see also: {}", sanitize::str(what)), dim()));
            }
            let paragraph = Paragraph::new(text).wrap(Wrap { trim: false });
            frame.render_widget(paragraph.block(focus_block(" finding ".into(), false)), detail);
        }
    }
}
