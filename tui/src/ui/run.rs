//! Screen 5: the run: progress while it goes, then the outputs (and how they compare with
//! the expected ones), the nodes by time, and the time per operator type.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Wrap};

use super::graph::focus_block;
use super::{dim, error_style, heading, position, row};
use crate::app::{App, RunState};
use crate::sanitize;
use crate::view;

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    match &app.run {
        RunState::Idle => {
            let how = match &app.test_data {
                Some(dir) => format!("r runs the model on {}", sanitize::str(&dir.display().to_string())),
                None => "r runs the model on inputs made up from their declared types (R chooses how)".into(),
            };
            frame.render_widget(Paragraph::new(how).block(focus_block(" run ".into(), true)), area);
        }
        RunState::Failed(e) => {
            let lines: Vec<Line> =
                e.lines().map(|l| Line::styled(sanitize::str(l).into_owned(), error_style())).collect();
            // Wrapped: a failure names the node and why, often wider than the screen.
            let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
            frame.render_widget(paragraph.block(focus_block(" run failed ".into(), true)), area);
        }
        RunState::Running { started, .. } => {
            let (done, total, op) = app.progress().unwrap_or_default();
            let ratio = if total == 0 { 0.0 } else { done as f64 / total as f64 };
            let label =
                format!("node {} of {total} ({op}) · {:.1?} · x cancels", (done + 1).min(total), started.elapsed());
            let [gauge, _] = Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(area);
            let bar = Gauge::default().block(focus_block(" running ".into(), true)).ratio(ratio.min(1.0)).label(label);
            frame.render_widget(bar, gauge);
        }
        RunState::Done(_) => done(frame, area, app),
    }
}

fn done(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let [table, ops] = Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(area);
    let len = app.run_rows();
    let height = usize::from(table.height.saturating_sub(2));
    let window = app.run_cursor.window(height, len);
    let selected = app.run_cursor.selected;
    let RunState::Done(o) = &app.run else { return };
    let slowest = view::slowest(o);
    let total = o.total.as_secs_f64().max(f64::MIN_POSITIVE);
    let mut lines = Vec::new();
    for i in window {
        let spans = if let Some((name, value)) = o.outputs.get(i) {
            let check = o.check(name);
            let mut spans = vec![
                Span::styled("output ", heading()),
                Span::raw(format!("{} = {} {}", sanitize::str(name), value.describe(), view::preview(value))),
            ];
            match check {
                Some(c) if c.difference.is_none() => {
                    let largest = c.largest_error.map(|e| format!(" (largest error {e:.2e})")).unwrap_or_default();
                    spans.push(Span::raw(format!("  matches{largest}")));
                }
                Some(c) => {
                    let d = c.difference.as_deref().unwrap_or_default();
                    spans.push(Span::styled(format!("  differs: {}", sanitize::str(d)), error_style()));
                }
                None => {}
            }
            if let Some(Ok(st)) = o.output_stats.get(i) {
                let (lo, hi) = (st.min.map_or(f64::NAN, |m| m.0), st.max.map_or(f64::NAN, |m| m.0));
                let text =
                    format!("  min {} max {} mean {}", view::number(lo), view::number(hi), view::number(st.mean));
                spans.push(Span::styled(text, dim()));
                if st.nan + st.pos_inf + st.neg_inf > 0 {
                    spans.push(Span::styled(format!(" NaN {} Inf {}", st.nan, st.pos_inf + st.neg_inf), error_style()));
                }
            }
            spans
        } else {
            let (n, d) = slowest[i - o.outputs.len()];
            let share = d.as_secs_f64() / total * 100.0;
            vec![
                Span::raw(format!("{:>10} {share:>5.1}%  ", view::duration(d))),
                Span::styled(view::op_label(&app.model, n), heading()),
                Span::styled(format!(" {}", app.index.node_title(&app.model, n)), dim()),
            ]
        };
        lines.push(row(spans, i == selected));
    }
    let title = format!(" run · {} in all · {} ", view::duration(o.total), position(selected, len));
    frame.render_widget(Paragraph::new(lines).block(focus_block(title, true)), table);

    let mut summary = Vec::new();
    for (op, d, count) in view::by_op(&app.model, o) {
        let share = d.as_secs_f64() / total * 100.0;
        summary.push(Line::from(format!("{:>10} {share:>5.1}% {count:>5}× {op}", view::duration(d))));
    }
    if o.capture_full {
        let cap = view::bytes(crate::worker::KEPT_BYTES as u64);
        summary.push(Line::styled(format!("values past the first {cap} were not kept"), dim()));
    }
    if !o.nonfinite.is_empty() {
        summary.push(Line::styled(format!("{} node(s) wrote NaN or Inf", o.nonfinite.len()), error_style()));
    }
    frame.render_widget(Paragraph::new(summary).block(focus_block(" time by operator ".into(), false)), ops);
}
