//! Drawing: a pure function of the [`App`] state into a ratatui frame. Only the rows on
//! screen are formatted; every model string has been through [`crate::sanitize`].
//!
//! Layout: a title row (file, IR, opsets, counts, checker verdict, run progress), a tab
//! row (screens and the scope's breadcrumb), the body, drawn by the screen shown
//! ([`crate::screens`]), and a status row (the screen's keys, or a message). Overlays
//! ([`crate::overlays`]: search, chooser, help, run dialog, the tensor viewer) draw
//! themselves on top.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, SCREENS};
pub use crate::style::set_color;
use crate::style::{dim, error_style, heading, selected, warning_style};

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
    let screen = app.screen;
    let (cx, screens) = app.parts();
    screens.get_mut(screen).draw(frame, body, &cx);
    let hint = screens.get(screen).hint(&cx);
    frame.render_widget(Paragraph::new(status_line(app.flash.as_deref(), hint)), status);
    let ready = app.search_ready;
    for overlay in &mut app.overlays {
        overlay.draw(frame, area, ready);
    }
    // A message stays readable above an overlay that covers the status row (the tensor
    // viewer fills the screen: an export's "wrote …" or its failure would go unseen).
    if !app.overlays.is_empty()
        && let Some(flash) = app.flash.as_deref()
    {
        frame.render_widget(ratatui::widgets::Clear, status);
        frame.render_widget(Paragraph::new(status_line(Some(flash), "")), status);
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
    facts.push(crate::view::count(nodes, "node"));
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

/// The status line: the message of the last key, or the screen's keys.
fn status_line(flash: Option<&str>, hint: &'static str) -> Line<'static> {
    if let Some(flash) = flash {
        return Line::from(Span::styled(crate::sanitize::str(flash).into_owned(), heading()));
    }
    Line::from(Span::styled(hint, dim()))
}
