//! Screen 5: the run: how the next run gets its inputs (test data, or the choices made in
//! the run dialog), progress while it goes, then the outputs (and how they compare with the
//! expected ones), the nodes by time, and the time per operator type.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use onnx_core::ir::Model;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Wrap};

use crate::component::{Component, Cursor, Effect, Outcome, RunState, Shared};
use crate::inputs::Source;
use crate::overlays::RunDialog;
use crate::sanitize;
use crate::search::Target;
use crate::style::{dim, error_style, focus_block, heading, position, row};
use crate::view;
use crate::worker::{RunError, RunOutcome, RunRequest};

#[derive(Debug)]
pub struct RunScreen {
    cursor: Cursor,
    /// A test-data directory: its inputs are run and its expected outputs compared.
    test_data: Option<PathBuf>,
    /// How inputs without test data were made last time (`None`: not chosen yet).
    sources: Option<BTreeMap<String, Source>>,
    dims: BTreeMap<String, usize>,
    /// `:compare DIR`: the values the runs are compared with, from then on.
    compare_values: Option<PathBuf>,
}

impl RunScreen {
    pub fn new(test_data: Option<PathBuf>) -> RunScreen {
        RunScreen { cursor: Cursor::default(), test_data, sources: None, dims: BTreeMap::new(), compare_values: None }
    }

    /// `:compare DIR`: compares this run's values (and the next ones') with `dir`'s.
    pub fn compare_with(&mut self, dir: PathBuf) {
        self.compare_values = Some(dir);
    }

    /// `r`: runs the model, unless a run is going on.
    pub fn start(&mut self, run: &mut RunState, model: &Model, max_memory: usize) -> Outcome {
        if matches!(run, RunState::Running { .. }) {
            return Outcome::Flash("a run is going on: x cancels it".into());
        }
        // Test data gives the inputs; otherwise the first run asks how to make them.
        if self.test_data.is_none() && self.sources.is_none() {
            return Outcome::RunDialog;
        }
        self.launch(run, model, max_memory)
    }

    /// Runs with what the run dialog chose, and keeps the choices for the next run.
    pub fn run_with(
        &mut self,
        sources: BTreeMap<String, Source>,
        dims: BTreeMap<String, usize>,
        run: &mut RunState,
        model: &Model,
        max_memory: usize,
    ) -> Outcome {
        self.sources = Some(sources);
        self.dims = dims;
        self.launch(run, model, max_memory)
    }

    fn launch(&self, run: &mut RunState, model: &Model, max_memory: usize) -> Outcome {
        let progress = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let total = model.main_graph().map_or(0, |g| g.nodes.len());
        let effect = Effect::Run(RunRequest {
            test_data: self.test_data.clone(),
            sources: self.sources.clone().unwrap_or_default(),
            dims: self.dims.clone(),
            cancel: Arc::clone(&cancel),
            progress: Arc::clone(&progress),
            max_memory,
            compare_values: self.compare_values.clone(),
        });
        *run = RunState::Running { started: Instant::now(), progress, cancel, total };
        Outcome::Start { effect, saying: None }
    }

    /// The run dialog, showing the choices made last time.
    pub fn dialog(&self, model: &Model) -> RunDialog {
        let sources = self.sources.clone().unwrap_or_default();
        RunDialog::new(model, &sources, &self.dims, self.test_data.is_some())
    }

    /// `x`: asks a run going on to stop.
    pub fn cancel(run: &RunState) -> Outcome {
        match run {
            RunState::Running { cancel, .. } => {
                cancel.store(true, Ordering::Relaxed);
                Outcome::Flash("cancelling…".into())
            }
            _ => Outcome::Stay,
        }
    }

    /// The state a finished run leaves, and what the status line says of it.
    pub fn finished(result: Result<Box<RunOutcome>, RunError>) -> (RunState, String) {
        match result {
            Ok(outcome) => {
                let failed = outcome.comparison.iter().filter(|c| c.difference.is_some()).count();
                let said = match (outcome.comparison.len(), failed) {
                    (0, _) => match &outcome.not_compared {
                        Some(why) => format!("ran in {:.1?}; {why}", outcome.total),
                        None => format!("ran in {:.1?}", outcome.total),
                    },
                    (n, 0) => format!("ran in {:.1?}: all {n} outputs match", outcome.total),
                    (n, f) => format!("ran in {:.1?}: {f} of {n} outputs differ", outcome.total),
                };
                let said = match &outcome.divergence {
                    Some(Ok(d)) => match &d.first {
                        Some((_, name, how)) => format!("{said}; first difference at '{name}': {how}"),
                        None => format!("{said}; {} intermediate values match", d.compared),
                    },
                    Some(Err(e)) => format!("{said}; values not compared: {e}"),
                    None => said,
                };
                (RunState::Done(outcome), said)
            }
            Err(RunError::Cancelled) => (RunState::Cancelled, "run cancelled: r runs again".into()),
            Err(RunError::Failed(e)) => (RunState::Failed(e), "the run failed: see the Run screen (5)".into()),
        }
    }

    /// Progress of a run going on: nodes done, total, and the op of the node running.
    pub fn progress(run: &RunState, model: &Model) -> Option<(usize, usize, String)> {
        let RunState::Running { progress, total, .. } = run else { return None };
        let done = progress.load(Ordering::Relaxed);
        let op = model
            .main_graph()
            .and_then(|g| g.nodes.get(done))
            .map(|&n| crate::sanitize::opt(model.nodes[n].op_type.as_ref()).into_owned())
            .unwrap_or_default();
        Some((done, *total, op))
    }

    /// A finished run: its outputs, then its nodes slowest first; beside them, the time per
    /// operator type.
    fn draw_done(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>, o: &RunOutcome) {
        let [table, ops] = Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(area);
        let len = rows(cx.run);
        let window = self.cursor.shown_in(table, len);
        let selected = self.cursor.selected;
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
                        spans.push(Span::styled(
                            format!(" NaN {} Inf {}", st.nan, st.pos_inf + st.neg_inf),
                            error_style(),
                        ));
                    }
                }
                spans
            } else {
                let (n, d) = slowest[i - o.outputs.len()];
                let share = d.as_secs_f64() / total * 100.0;
                // A node inside a subgraph says which one (its time is in its holder's too).
                let inside = match cx.index.node_at.get(&n) {
                    Some(&(scope, _)) if scope != 0 => {
                        format!("  in {}", cx.index.scopes.get(scope).map_or("", |s| s.title.as_str()))
                    }
                    _ => String::new(),
                };
                vec![
                    Span::raw(format!("{:>10} {share:>5.1}%  ", view::duration(d))),
                    Span::styled(view::op_label(cx.model, n), heading()),
                    Span::styled(format!(" {}{inside}", cx.index.node_title(cx.model, n)), dim()),
                ]
            };
            lines.push(row(spans, i == selected));
        }
        let runs = if o.runs > 1 { format!(", median of {} runs", o.runs) } else { String::new() };
        let title = format!(" run · {} in all{runs} · {} ", view::duration(o.total), position(selected, len));
        frame.render_widget(Paragraph::new(lines).block(focus_block(title, true)), table);

        let mut summary = Vec::new();
        match &o.divergence {
            Some(Ok(d)) => match &d.first {
                Some((n, name, how)) => summary.push(Line::styled(
                    format!(
                        "first difference: {} output '{}' ({} compared): {}",
                        cx.index.node_title(cx.model, *n),
                        sanitize::str(name),
                        d.compared,
                        sanitize::str(how)
                    ),
                    error_style(),
                )),
                None => summary.push(Line::from(format!("{} intermediate values match", d.compared))),
            },
            Some(Err(e)) => {
                summary.push(Line::styled(format!("values not compared: {}", sanitize::str(e)), error_style()))
            }
            None => {}
        }
        for (op, d, count) in view::by_op(cx.model, o) {
            let share = d.as_secs_f64() / total * 100.0;
            summary.push(Line::from(format!("{:>10} {share:>5.1}% {count:>5}× {op}", view::duration(d))));
        }
        if o.capture_full {
            let cap = view::bytes(crate::worker::KEPT_BYTES as u64);
            summary.push(Line::styled(format!("values past the first {cap} were not kept"), dim()));
        }
        if !o.nonfinite.is_empty() {
            summary.push(Line::styled(
                format!("{} wrote NaN or Inf", crate::view::count(o.nonfinite.len(), "node")),
                error_style(),
            ));
        }
        let summary = Paragraph::new(summary).wrap(ratatui::widgets::Wrap { trim: false });
        frame.render_widget(summary.block(focus_block(" time by operator ".into(), false)), ops);
    }
}

/// Rows of the table: the outputs, then one per timed node.
fn rows(run: &RunState) -> usize {
    match run {
        RunState::Done(o) => o.outputs.len() + o.timings.len() + o.nested_timings.len(),
        _ => 0,
    }
}

impl Component for RunScreen {
    fn step(&mut self, delta: isize, cx: &Shared<'_>) {
        self.cursor.step(delta, rows(cx.run));
    }

    /// Enter: an output opens in the viewer, a timed node is shown on the Graph screen.
    fn enter(&mut self, cx: &Shared<'_>) -> Outcome {
        let Some(o) = cx.done() else { return Outcome::Stay };
        let at = self.cursor.selected;
        if let Some((name, value)) = o.outputs.get(at) {
            match value.tensor() {
                Ok(t) => Outcome::View { name: name.clone(), tensor: t.clone() },
                Err(e) => Outcome::Flash(e.to_string()),
            }
        } else if let Some(&(n, _)) = view::slowest(o).get(at - o.outputs.len()) {
            Outcome::GoTo(Target::Node(n))
        } else {
            Outcome::Stay
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

    fn hint(&self, cx: &Shared<'_>) -> &'static str {
        match cx.run {
            RunState::Running { .. } => "x cancels the run",
            _ => "r runs · R run dialog · Enter opens an output or a node",
        }
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        match cx.run {
            RunState::Idle => {
                let how = match &self.test_data {
                    Some(dir) => format!("r runs the model on {}", sanitize::str(&dir.display().to_string())),
                    None => "r runs the model on inputs made up from their declared types (R chooses how)".into(),
                };
                frame.render_widget(Paragraph::new(how).block(focus_block(" run ".into(), true)), area);
            }
            RunState::Cancelled => {
                let said = "the run was cancelled (x) before it ended; r runs the model again";
                frame.render_widget(Paragraph::new(said).block(focus_block(" run cancelled ".into(), true)), area);
            }
            RunState::Failed(e) => {
                let lines: Vec<Line> =
                    e.lines().map(|l| Line::styled(sanitize::str(l).into_owned(), error_style())).collect();
                // Wrapped: a failure names the node and why, often wider than the screen.
                let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
                frame.render_widget(paragraph.block(focus_block(" run failed ".into(), true)), area);
            }
            RunState::Running { started, .. } => {
                let (done, total, op) = RunScreen::progress(cx.run, cx.model).unwrap_or_default();
                let ratio = if total == 0 { 0.0 } else { done as f64 / total as f64 };
                let label =
                    format!("node {} of {total} ({op}) · {:.1?} · x cancels", (done + 1).min(total), started.elapsed());
                let [gauge, _] = Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(area);
                let bar =
                    Gauge::default().block(focus_block(" running ".into(), true)).ratio(ratio.min(1.0)).label(label);
                frame.render_widget(bar, gauge);
            }
            RunState::Done(o) => self.draw_done(frame, area, cx, o),
        }
    }
}
