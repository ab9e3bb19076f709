//! Drawing: a pure function of the [`App`] state into a ratatui frame. Only the rows on
//! screen are formatted; every model string has been through [`crate::sanitize`].
//!
//! Layout: a title row (file, IR, opsets, counts, checker verdict, run progress), a tab
//! row (screens and the scope's breadcrumb), the body, and a status row (hints, position,
//! messages). Overlays (search, chooser, help, run dialog, the tensor viewer) draw on top.

mod graph;
mod lists;
mod overlays;
mod run;
mod summary;
mod viewer;

use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, Overlay, RunState, SCREENS, Screen};

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

/// The smallest terminal the layout is made for.
pub const MIN: (u16, u16) = (60, 12);

pub fn draw(frame: &mut Frame<'_>, app: &mut App) {
    let area = frame.area();
    if area.width < MIN.0 || area.height < MIN.1 {
        frame.render_widget(Paragraph::new(format!("terminal too small: {}x{}", area.width, area.height)), area);
        return;
    }
    let [title, tabs, body, status] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)])
            .areas(area);
    app.page = usize::from(body.height.saturating_sub(2)).max(1);
    frame.render_widget(Paragraph::new(title_line(app)), title);
    frame.render_widget(Paragraph::new(tab_line(app)), tabs);
    match app.screen {
        Screen::Graph => graph::draw(frame, body, app),
        Screen::Values => lists::values(frame, body, app),
        Screen::Tree => lists::tree(frame, body, app),
        Screen::Diagnostics => lists::diagnostics(frame, body, app),
        Screen::Run => run::draw(frame, body, app),
        Screen::Model => summary::draw(frame, body, app),
    }
    frame.render_widget(Paragraph::new(status_line(app)), status);
    for i in 0..app.overlays.len() {
        draw_overlay(frame, area, app, i);
    }
}

fn draw_overlay(frame: &mut Frame<'_>, area: Rect, app: &mut App, i: usize) {
    match &app.overlays[i] {
        Overlay::Viewer(_) => viewer::draw(frame, area, app, i),
        Overlay::Help { .. } => overlays::help(frame, area, app, i),
        Overlay::Search(_) => overlays::search(frame, area, app, i),
        Overlay::Chooser(_) => overlays::chooser(frame, area, app, i),
        Overlay::RunDialog(_) => overlays::run_dialog(frame, area, app, i),
    }
}

fn title_line(app: &App) -> Line<'static> {
    let m = &app.model;
    let file = std::path::Path::new(&app.label).file_name().map(|f| f.to_string_lossy().to_string());
    let mut spans = vec![Span::styled(crate::sanitize::str(&file.unwrap_or_default()).into_owned(), heading())];
    let mut facts = Vec::new();
    if let Some(ir) = m.ir_version {
        facts.push(format!("IR {ir}"));
    }
    let opsets: Vec<String> = m
        .opset_import
        .iter()
        .map(|o| {
            let d = crate::sanitize::opt(o.domain.as_ref());
            let d = if d.is_empty() { "ai.onnx".into() } else { d };
            format!("{d} {}", o.version.map_or("?".into(), |v| v.to_string()))
        })
        .collect();
    if !opsets.is_empty() {
        facts.push(opsets.join(", "));
    }
    if let Some(p) = &m.producer_name {
        facts.push(crate::sanitize::name(p).into_owned());
    }
    let nodes = app.index.node_count();
    facts.push(format!("{nodes} node{}", if nodes == 1 { "" } else { "s" }));
    spans.push(Span::raw(format!(" · {}", facts.join(" · "))));
    spans.push(Span::raw(" · "));
    match (&app.analysis, app.counts()) {
        (None, _) => spans.push(Span::styled("checking…", dim())),
        (Some(_), (0, 0)) => spans.push(Span::raw("valid")),
        (Some(_), (e, w)) => {
            if e > 0 {
                spans.push(Span::styled(format!("✗{e}"), error_style()));
                spans.push(Span::raw(" "));
            }
            if w > 0 {
                spans.push(Span::styled(format!("⚠{w}"), warning_style()));
            }
        }
    }
    if let Some((done, total, op)) = app.progress() {
        spans.push(Span::styled(format!(" · running node {} of {total} ({op})", done + 1), heading()));
    }
    Line::from(spans)
}

fn tab_line(app: &App) -> Line<'static> {
    let mut spans = Vec::new();
    for (k, (screen, name)) in SCREENS.iter().enumerate() {
        let style = if *screen == app.screen { selected() } else { Style::new() };
        spans.push(Span::styled(format!(" {} {name} ", k + 1), style));
    }
    let crumbs: Vec<String> =
        app.index.path(app.scope).iter().filter_map(|&s| Some(app.index.scopes.get(s)?.title.clone())).collect();
    if !crumbs.is_empty() {
        spans.push(Span::styled(format!("  {}", crumbs.join(" ▸ ")), dim()));
    }
    Line::from(spans)
}

fn status_line(app: &App) -> Line<'static> {
    if let Some(flash) = &app.flash {
        return Line::from(Span::styled(crate::sanitize::str(flash).into_owned(), heading()));
    }
    let hint = match app.screen {
        Screen::Graph => "j/k move · Enter open · p producer · c consumers · / search · r run · ? help · q quit",
        Screen::Values => "Enter opens the value · / search · ? help · q quit",
        Screen::Tree => "Enter makes the scope current · ? help · q quit",
        Screen::Diagnostics => "Enter jumps to the node · e errors/warnings · ? help",
        Screen::Run => match app.run {
            RunState::Running { .. } => "x cancels the run",
            _ => "r runs · R run dialog · Enter opens an output or a node",
        },
        Screen::Model => "j/k scroll · ? help · q quit",
    };
    Line::from(Span::styled(hint, dim()))
}

/// One row of a list, marked when selected (reversed, and a `›` that shows without
/// colour or attributes too).
fn row(mut text: Vec<Span<'static>>, is_selected: bool) -> Line<'static> {
    text.insert(0, Span::raw(if is_selected { "›" } else { " " }));
    let line = Line::from(text);
    if is_selected { line.style(selected()) } else { line }
}

/// "k of N" for a list's title.
fn position(selected: usize, len: usize) -> String {
    if len == 0 { "empty".into() } else { format!("{} of {len}", selected + 1) }
}
