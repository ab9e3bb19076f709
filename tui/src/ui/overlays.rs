//! Overlays drawn over a screen: help, the search picker, a chooser, the run dialog.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::graph::focus_block;
use super::{dim, heading, position, row};
use crate::app::{App, Overlay};
use crate::dialog::Choice;
use crate::keys::{BINDINGS, Context};

/// A box centred in `area`, `w`% wide and `h`% high.
fn centred(area: Rect, w: u16, h: u16) -> Rect {
    let [_, mid, _] = Layout::vertical([
        Constraint::Percentage((100 - h) / 2),
        Constraint::Percentage(h),
        Constraint::Percentage((100 - h) / 2),
    ])
    .areas(area);
    let [_, mid, _] = Layout::horizontal([
        Constraint::Percentage((100 - w) / 2),
        Constraint::Percentage(w),
        Constraint::Percentage((100 - w) / 2),
    ])
    .areas(mid);
    mid
}

pub fn help(frame: &mut Frame<'_>, area: Rect, app: &mut App, i: usize) {
    let Overlay::Help { scroll } = &app.overlays[i] else { return };
    let area = centred(area, 90, 90);
    frame.render_widget(Clear, area);
    let mut lines = Vec::new();
    for (context, title) in
        [(Context::Browse, "screens"), (Context::Viewer, "tensor viewer"), (Context::Overlay, "pickers")]
    {
        lines.push(Line::styled(title, heading()));
        for b in BINDINGS.iter().filter(|b| b.context == context) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<22}", b.keys.join(" ")), heading()),
                Span::raw(b.what),
            ]));
        }
    }
    lines.push(Line::styled("search: fzf syntax ('exact ^prefix suffix$ !not); Enter jumps, n/N walk the hits", dim()));
    let scroll = u16::try_from(*scroll).unwrap_or(0);
    let block = focus_block(" keys (Esc closes) ".into(), true);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), area);
}

pub fn search(frame: &mut Frame<'_>, area: Rect, app: &mut App, i: usize) {
    let ready = app.search_ready;
    let page = usize::from(centred(area, 80, 70).height.saturating_sub(3));
    let Overlay::Search(s) = &mut app.overlays[i] else { return };
    let area = centred(area, 80, 70);
    frame.render_widget(Clear, area);
    let window = s.cursor.window(page, s.hits.len());
    let mut lines = vec![Line::from(vec![Span::styled("/", heading()), Span::raw(s.query.clone()), Span::raw("█")])];
    for k in window {
        lines.push(row(vec![Span::raw(s.hits[k].label.clone())], k == s.cursor.selected));
    }
    let state = if !ready {
        "indexing…".to_owned()
    } else if s.waiting {
        "searching…".to_owned()
    } else {
        position(s.cursor.selected, s.hits.len())
    };
    let block = focus_block(format!(" search · {state} "), true);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

pub fn chooser(frame: &mut Frame<'_>, area: Rect, app: &mut App, i: usize) {
    let Overlay::Chooser(c) = &mut app.overlays[i] else { return };
    let area = centred(area, 70, 50);
    frame.render_widget(Clear, area);
    let window = c.cursor.window(usize::from(area.height.saturating_sub(2)), c.items.len());
    let lines: Vec<Line> = window.map(|k| row(vec![Span::raw(c.items[k].0.clone())], k == c.cursor.selected)).collect();
    let block = focus_block(format!(" {} ", c.title), true);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

pub fn run_dialog(frame: &mut Frame<'_>, area: Rect, app: &mut App, i: usize) {
    let Overlay::RunDialog(d) = &app.overlays[i] else { return };
    let area = centred(area, 80, 70);
    frame.render_widget(Clear, area);
    let mut lines = vec![Line::styled("inputs (Space or ←/→ changes where a value comes from)", heading())];
    for (k, row) in d.inputs.iter().enumerate() {
        let source = match row.choice {
            Choice::Zeros => "zeros".to_owned(),
            Choice::Random => format!("random, seed {}", row.seed),
            Choice::File => format!("file {}▏", row.path),
        };
        let text = format!("  {} {}: {source}", crate::sanitize::str(&row.name), row.ty);
        lines.push(super::row(vec![Span::raw(text)], d.selected == k));
    }
    if d.inputs.is_empty() {
        lines.push(Line::from("  every input has an initializer"));
    }
    if !d.dims.is_empty() {
        lines.push(Line::styled("symbolic dimensions (type a number)", heading()));
    }
    for (k, (name, typed)) in d.dims.iter().enumerate() {
        let text = format!("  {} = {typed}", crate::sanitize::str(name));
        lines.push(super::row(vec![Span::raw(text)], d.selected == d.inputs.len() + k));
    }
    lines.push(Line::styled("Enter runs · ↑/↓ move · files: .pb (TensorProto) or .npy · Esc closes", dim()));
    frame.render_widget(Paragraph::new(lines).block(focus_block(" run ".into(), true)), area);
}
