//! The full-screen tensor viewer: type and shape, statistics (computed on a worker, shown
//! when they arrive), a histogram of the finite values, and a grid over the last two axes
//! at the chosen index of the leading ones. Only the cells on screen are formatted.

use onnx_core::ir::Str;
use onnx_eval::Tensor;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Sparkline};

use crate::component::{Effect, Outcome, RunState, Shared};
use crate::index::{Body, Def};
use crate::keys::{self, Action, Context};
use crate::sanitize;
use crate::stats::{Stats, unravel};
use crate::style::{dim, error_style, focus_block, heading, selected};
use crate::view;

const CELL: usize = 11;

#[derive(Debug)]
pub struct Viewer {
    pub name: String,
    pub tensor: Tensor,
    pub stats: Option<Result<Stats, String>>,
    /// Index along each leading axis (all but the last two).
    lead: Vec<usize>,
    row: usize,
    col: usize,
}

/// A value's tensor: a run's value when there is one, else an initializer of the current
/// scope (read from external data if it lives there).
pub fn tensor_of(cx: &Shared<'_>, name: &Str, def: Option<Def>) -> Result<Tensor, String> {
    // A node inside a subgraph: what it produced last, by node (names may repeat across
    // scopes); the main graph's values by name.
    let in_subgraph = |n: onnx_core::ir::NodeId| cx.index.node_at.get(&n).is_some_and(|&(scope, _)| scope != 0);
    let from_run = match (cx.run, def) {
        (RunState::Done(o), Some(Def::Node(n, k))) if in_subgraph(n) => o.nested_values.get(&(n, k)),
        (RunState::Done(o), _) => o.values.get(&name.to_string()),
        _ => None,
    };
    let from_run = from_run.and_then(|v| v.tensor().ok().cloned());
    // An input that an initializer of the same name gives a default (every initializer is
    // listed among the inputs before IR version 4) has that initializer's value.
    let def = match def {
        Some(Def::Input(_)) => initializer_named(cx, name).map(Def::Initializer).or(def),
        other => other,
    };
    match (from_run, def) {
        (Some(t), _) => Ok(t),
        (None, Some(Def::Initializer(i))) => initializer(cx, i),
        // A Constant's value is in the model: no run needed (in subgraphs too).
        (None, Some(Def::Node(n, 0)))
            if cx.model.nodes[n].schema_domain() == Some("")
                && cx.model.nodes[n].op_type.as_ref().is_some_and(|o| o.as_bytes() == b"Constant") =>
        {
            let value = onnx_eval::invoke::constant_value(cx.model, &cx.model.nodes[n]).map_err(String::from)?;
            value.tensor().cloned().map_err(String::from)
        }
        (None, _) => Err(format!("'{}' has no value yet: run the model (r)", sanitize::name(name))),
    }
}

/// The position of the current graph's initializer called `name`.
fn initializer_named(cx: &Shared<'_>, name: &Str) -> Option<usize> {
    let Some(Body::Graph(g)) = cx.index.scopes.get(cx.scope).map(|s| s.body) else { return None };
    cx.model.graphs[g].initializers.iter().position(|&t| cx.model.tensors[t].name.as_ref() == Some(name))
}

fn initializer(cx: &Shared<'_>, i: usize) -> Result<Tensor, String> {
    let Some(Body::Graph(g)) = cx.index.scopes.get(cx.scope).map(|s| s.body) else {
        return Err("not a graph".into());
    };
    let id = *cx.model.graphs[g].initializers.get(i).ok_or("no such initializer")?;
    let mut t = cx.model.tensors[id].clone();
    if t.is_external() {
        let bytes = onnx_core::external::ExternalReader::new(cx.model_dir.cloned())
            .read(&t)
            .map_err(|e| format!("external data: {e}"))?;
        t.raw_data = Some(bytes);
        t.external_data.clear();
        t.data_location = None;
    }
    Ok(Tensor::from_ir(&t)?)
}

impl Viewer {
    /// The viewer on a tensor, and the work that computes its statistics.
    pub fn open(name: String, tensor: Tensor) -> (Viewer, Effect) {
        let lead = vec![0; tensor.rank().saturating_sub(2)];
        let effect = Effect::Stats { key: name.clone(), tensor: tensor.clone() };
        (Viewer { name, tensor, stats: None, lead, row: 0, col: 0 }, effect)
    }

    /// Statistics computed for the tensor named `key`.
    pub fn stats_arrived(&mut self, key: &str, stats: &Result<Stats, String>) {
        if self.name == key {
            self.stats = Some(stats.clone());
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, page: usize) -> Outcome {
        let Some(a) = keys::action(Context::Viewer, &key) else { return Outcome::Stay };
        let page = page.max(1);
        let shape = &self.tensor.shape;
        let (rows, cols) = match shape.len() {
            0 => (1, 1),
            1 => (1, shape[0]),
            r => (shape[r - 2], shape[r - 1]),
        };
        match a {
            Action::Down => self.row = (self.row + 1).min(rows.saturating_sub(1)),
            Action::Up => self.row = self.row.saturating_sub(1),
            Action::PageDown => self.row = (self.row + page).min(rows.saturating_sub(1)),
            Action::PageUp => self.row = self.row.saturating_sub(page),
            Action::Right => self.col = (self.col + 1).min(cols.saturating_sub(1)),
            Action::Left => self.col = self.col.saturating_sub(1),
            Action::AxisNext | Action::AxisPrev => {
                // The leading axes count like an odometer, last axis fastest.
                let lead_dims = &shape[..self.lead.len()];
                for (k, &d) in self.lead.iter_mut().zip(lead_dims).rev() {
                    if a == Action::AxisNext {
                        if *k + 1 < d {
                            *k += 1;
                            break;
                        }
                        *k = 0;
                    } else {
                        if *k > 0 {
                            *k -= 1;
                            break;
                        }
                        *k = d.saturating_sub(1);
                    }
                }
            }
            Action::Export => {
                let path = crate::export::default_file(&self.name);
                let saying = Some(format!("exporting to {}", path.display()));
                let effect = Effect::Export { path, tensor: self.tensor.clone() };
                return Outcome::Start { effect, saying };
            }
            Action::Escape => return Outcome::Close,
            _ => {}
        }
        Outcome::Stay
    }

    pub fn draw(&self, frame: &mut Frame<'_>, area: Rect) {
        frame.render_widget(Clear, area);
        let [head, stats, hist, grid, keys] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(4),
            Constraint::Length(4),
            Constraint::Min(3),
            Constraint::Length(1),
        ])
        .areas(area);
        let t = &self.tensor;
        let shape: Vec<String> = t.shape.iter().map(ToString::to_string).collect();
        let title = format!(
            "{} · {}[{}] · {} elements",
            sanitize::str(&self.name),
            t.data_type().name(),
            shape.join(","),
            t.len()
        );
        frame.render_widget(Paragraph::new(Line::styled(title, heading())), head);
        frame.render_widget(Paragraph::new(stat_lines(self)), stats);
        if let Some(Ok(s)) = &self.stats
            && !s.histogram.is_empty()
        {
            let block = focus_block(" histogram of finite values ".into(), false);
            // Each bin drawn as wide as the box allows.
            let per_bin = (usize::from(hist.width.saturating_sub(2)) / s.histogram.len()).max(1);
            let bars: Vec<u64> = s.histogram.iter().flat_map(|&c| std::iter::repeat_n(c, per_bin)).collect();
            frame.render_widget(Sparkline::default().data(&bars).block(block), hist);
        }
        draw_grid(frame, grid, self);
        let hint = "j/k h/l move · PgUp/PgDn · < > leading axes · E export .npy · Esc close";
        frame.render_widget(Paragraph::new(Line::styled(hint, dim())), keys);
    }
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
