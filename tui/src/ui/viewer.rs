//! The full-screen tensor viewer: type and shape, statistics (computed on a worker, shown
//! when they arrive), a histogram of the finite values, and a grid over the last two axes
//! at the chosen index of the leading ones. Only the cells on screen are formatted.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Sparkline};

use super::graph::focus_block;
use super::{dim, error_style, heading, selected};
use crate::app::{App, Overlay, Viewer};
use crate::sanitize;
use crate::stats::unravel;
use crate::view;

const CELL: usize = 11;

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &mut App, i: usize) {
    let Overlay::Viewer(v) = &app.overlays[i] else { return };
    frame.render_widget(Clear, area);
    let [head, stats, hist, grid, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(4),
        Constraint::Length(4),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let t = &v.tensor;
    let shape: Vec<String> = t.shape.iter().map(ToString::to_string).collect();
    let title =
        format!("{} · {}[{}] · {} elements", sanitize::str(&v.name), t.data_type().name(), shape.join(","), t.len());
    frame.render_widget(Paragraph::new(Line::styled(title, heading())), head);
    frame.render_widget(Paragraph::new(stat_lines(v)), stats);
    if let Some(Ok(s)) = &v.stats
        && !s.histogram.is_empty()
    {
        let block = focus_block(" histogram of finite values ".into(), false);
        // Each bin drawn as wide as the box allows.
        let per_bin = (usize::from(hist.width.saturating_sub(2)) / s.histogram.len()).max(1);
        let bars: Vec<u64> = s.histogram.iter().flat_map(|&c| std::iter::repeat_n(c, per_bin)).collect();
        frame.render_widget(Sparkline::default().data(&bars).block(block), hist);
    }
    draw_grid(frame, grid, v);
    let hint = "j/k h/l move · PgUp/PgDn · < > leading axes · E export .npy · Esc close";
    frame.render_widget(Paragraph::new(Line::styled(hint, dim())), keys);
}

fn stat_lines(v: &Viewer) -> Vec<Line<'static>> {
    let shape = &v.tensor.shape;
    match &v.stats {
        None => vec![Line::styled("computing statistics…", dim())],
        Some(Err(e)) => vec![Line::styled(sanitize::str(e).into_owned(), dim())],
        Some(Ok(s)) => {
            let at = |p: usize| format!("{:?}", unravel(p, shape));
            let (min, max) = match (s.min, s.max) {
                (Some(lo), Some(hi)) => (
                    format!("{} at {}", view::number(lo.0), at(lo.1)),
                    format!("{} at {}", view::number(hi.0), at(hi.1)),
                ),
                _ => ("none".into(), "none".into()),
            };
            let mut counts = vec![
                Span::raw(format!("zeros {}  ", s.zeros)),
                Span::raw(format!("NaN {}  +Inf {}  -Inf {}", s.nan, s.pos_inf, s.neg_inf)),
            ];
            if s.nan + s.pos_inf + s.neg_inf > 0 {
                counts[1] =
                    Span::styled(format!("NaN {}  +Inf {}  -Inf {}", s.nan, s.pos_inf, s.neg_inf), error_style());
            }
            vec![
                Line::from(format!("min {min}   max {max}")),
                Line::from(format!("mean {}   std {}", view::number(s.mean), view::number(s.std))),
                Line::from(format!(
                    "p1 {}   p50 {}   p99 {}",
                    view::number(s.percentiles[0]),
                    view::number(s.percentiles[1]),
                    view::number(s.percentiles[2])
                )),
                Line::from(counts),
            ]
        }
    }
}

fn draw_grid(frame: &mut Frame<'_>, area: Rect, v: &Viewer) {
    let t = &v.tensor;
    let rank = t.shape.len();
    let (rows, cols) = match rank {
        0 => (1, 1),
        1 => (1, t.shape[0]),
        r => (t.shape[r - 2], t.shape[r - 1]),
    };
    let lead: Vec<String> = v.lead.iter().map(ToString::to_string).collect();
    let at = if lead.is_empty() { String::new() } else { format!("[{}, :, :] ", lead.join(", ")) };
    let block = focus_block(format!(" {at}rows {rows} × columns {cols} "), true);
    let inner_h = usize::from(area.height.saturating_sub(3));
    let inner_w = usize::from(area.width.saturating_sub(8)) / CELL;
    // The page that holds the cursor.
    let first_row = v.row / inner_h.max(1) * inner_h.max(1);
    let first_col = v.col / inner_w.max(1) * inner_w.max(1);
    let base = v.lead.iter().zip(&t.shape).fold(0usize, |acc, (&k, &d)| acc * d + k) * rows * cols;
    let mut lines = Vec::new();
    let header: String = (first_col..(first_col + inner_w).min(cols)).map(|c| format!("{c:>CELL$}")).collect();
    lines.push(Line::styled(format!("{:>7}{header}", ""), dim()));
    for r in first_row..(first_row + inner_h).min(rows) {
        let mut spans = vec![Span::styled(format!("{r:>7}"), dim())];
        for c in first_col..(first_col + inner_w).min(cols) {
            let text = format!("{:>CELL$}", cell(t, base + r * cols + c));
            let style = if r == v.row && c == v.col { selected() } else { ratatui::style::Style::new() };
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// One element as short text.
fn cell(t: &onnx_eval::Tensor, i: usize) -> String {
    use onnx_eval::Data;
    let text = match &*t.data {
        Data::F32(v) => v.get(i).map(|x| view::number(f64::from(*x))),
        Data::F64(v) => v.get(i).map(|x| view::number(*x)),
        Data::F16(v) => v.get(i).map(|x| view::number(f64::from(*x))),
        Data::Bf16(v) => v.get(i).map(|x| view::number(f64::from(*x))),
        Data::Bool(v) => v.get(i).map(|x| x.to_string()),
        Data::Str(v) => v.get(i).map(|s| sanitize::bytes(s).chars().take(CELL - 1).collect()),
        Data::I8(v) => v.get(i).map(ToString::to_string),
        Data::I16(v) => v.get(i).map(ToString::to_string),
        Data::I32(v) => v.get(i).map(ToString::to_string),
        Data::I64(v) => v.get(i).map(ToString::to_string),
        Data::U8(v) => v.get(i).map(ToString::to_string),
        Data::U16(v) => v.get(i).map(ToString::to_string),
        Data::U32(v) => v.get(i).map(ToString::to_string),
        Data::U64(v) => v.get(i).map(ToString::to_string),
        Data::Coded(dt, v) => v.get(i).map(|&c| view::number(onnx_eval::coded::decode(*dt, c))),
    };
    text.unwrap_or_default()
}
