//! Colours, emphasis and the small pieces every screen and overlay draws with: bordered
//! boxes, list rows, positions, centred boxes.

use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

static COLOR: AtomicBool = AtomicBool::new(true);

/// Turns colours off (`NO_COLOR`, `--theme mono`); emphasis stays.
pub fn set_color(on: bool) {
    COLOR.store(on, Ordering::Relaxed);
}

fn fg(c: Color) -> Style {
    if COLOR.load(Ordering::Relaxed) { Style::new().fg(c) } else { Style::new() }
}

pub fn error_style() -> Style {
    fg(Color::Red).add_modifier(Modifier::BOLD)
}

pub fn warning_style() -> Style {
    fg(Color::Yellow)
}

pub fn dim() -> Style {
    fg(Color::DarkGray)
}

pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

pub fn heading() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// A bordered box, its border emphasised when it has the keys.
pub fn focus_block(title: String, focused: bool) -> Block<'static> {
    let block = Block::bordered().title(title);
    if focused { block.border_style(heading()) } else { block.border_style(dim()) }
}

/// One row of a list, marked when selected (reversed, and a `›` that shows without
/// colour or attributes too).
pub fn row(mut text: Vec<Span<'static>>, is_selected: bool) -> Line<'static> {
    text.insert(0, Span::raw(if is_selected { "›" } else { " " }));
    let line = Line::from(text);
    if is_selected { line.style(selected()) } else { line }
}

/// "k of N" for a list's title.
pub fn position(selected: usize, len: usize) -> String {
    if len == 0 { "empty".into() } else { format!("{} of {len}", selected + 1) }
}

/// A box centred in `area`, `w`% wide and `h`% high.
pub fn centred(area: Rect, w: u16, h: u16) -> Rect {
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
