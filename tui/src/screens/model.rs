//! Screen 6: the model's facts: header, the main graph's inputs and outputs with their
//! types, opsets, counts, parameters by element type, metadata, the operator histogram.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::component::{Component, Outcome, Shared};
use crate::index::Def;
use crate::sanitize;
use crate::style::{dim, focus_block, heading};
use crate::view;

/// Doc strings longer than this are cut (one exporter stores a 6,000-line config).
const LONGEST_VALUE: usize = 200;

#[derive(Debug, Default)]
pub struct ModelScreen {
    scroll: usize,
    /// The facts, gathered on the first visit (the model never changes, and gathering walks
    /// every node).
    summary: Option<onnx_core::summary::Summary>,
    /// What `onnx cost` counts, gathered once the worker's inference has finished.
    cost: Option<onnx_core::cost::ModelCost>,
}

impl Component for ModelScreen {
    fn step(&mut self, delta: isize, _: &Shared<'_>) {
        self.scroll = self.scroll.saturating_add_signed(delta).min(100_000);
    }

    fn enter(&mut self, _: &Shared<'_>) -> Outcome {
        Outcome::Stay
    }

    fn selected(&self, _: &Shared<'_>) -> usize {
        self.scroll
    }

    fn select(&mut self, row: usize, _: &Shared<'_>) {
        self.scroll = row;
    }

    fn hint(&self, _: &Shared<'_>) -> &'static str {
        "j/k scroll · ? help · q quit"
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let label = cx.label;
        let scroll = u16::try_from(self.scroll).unwrap_or(u16::MAX);
        let s = &*self.summary.get_or_insert_with(|| onnx_core::summary::Summary::of(cx.model));
        // From the types the worker's inference found (not inferred again here, on the
        // thread that draws): until they arrive the section waits.
        if self.cost.is_none()
            && let Some(types) = cx.types()
        {
            self.cost = Some(onnx_core::cost::cost_with_types(cx.model, &types.main_graph_types(cx.model)));
        }
        let cost = self.cost.as_ref();
        let opt = |v: Option<&onnx_core::ir::Str>| sanitize::opt(v).into_owned();
        let mut lines = vec![
            Line::styled("model", heading()),
            Line::from(format!("  file {}", sanitize::str(label))),
            Line::from(format!("  IR version {}", s.ir_version.map_or("unset".into(), |v| v.to_string()))),
            Line::from(format!("  producer {} {}", opt(s.producer_name.as_ref()), opt(s.producer_version.as_ref()))),
            Line::from(format!("  domain {}  model version {}", opt(s.domain.as_ref()), s.model_version.unwrap_or(0))),
            Line::from(format!("  graph {}", opt(s.graph_name.as_ref()))),
        ];
        if let Some(doc) = &s.doc_string {
            lines.push(Line::from(format!("  doc {}", cut(&sanitize::name(doc)))));
        }
        // The room a row has inside the borders, past its indent.
        let room = usize::from(area.width.saturating_sub(4)).max(16);
        lines.extend(interface(cx, room));
        lines.push(Line::styled("opsets", heading()));
        for o in &s.opset_import {
            let d = if o.domain.is_empty() { "ai.onnx".to_owned() } else { sanitize::str(&o.domain).into_owned() };
            lines.push(Line::from(format!("  {d} {}", o.version.map_or("unset".into(), |v| v.to_string()))));
        }
        let c = &s.counts;
        lines.push(Line::styled("counts", heading()));
        lines.push(Line::from(format!(
            "  {} ({} in the main graph), {}, {}, {}",
            view::count(c.nodes, "node"),
            c.main_graph_nodes,
            view::count(c.initializers, "initializer"),
            view::count(c.subgraphs, "subgraph"),
            view::count(c.functions, "function")
        )));
        lines.push(Line::styled("parameters", heading()));
        for (what, list) in [("initializers", &s.initializer_parameters), ("Constant nodes", &s.constant_parameters)] {
            for p in list.iter() {
                lines.push(Line::from(format!(
                    "  {what}: {} × {} ({})",
                    p.elements,
                    p.elem_type,
                    view::bytes(p.bytes)
                )));
            }
        }
        if !s.metadata.is_empty() {
            lines.push(Line::styled("metadata", heading()));
            // One row each: a long key or value (a whole config, a path) keeps its start and
            // end, where what tells them apart usually is.
            for (k, v) in &s.metadata {
                let key = view::middle(&opt(k.as_ref()), room / 2);
                let value = view::middle(&opt(v.as_ref()), room.saturating_sub(key.chars().count() + 3).max(8));
                lines.push(Line::from(format!("  {key} = {value}")));
            }
        }
        lines.push(Line::styled("operators", heading()));
        for op in &s.op_types {
            lines.push(Line::from(format!("  {:>6} {}", op.count, sanitize::str(&op.op_type))));
        }
        match cost {
            Some(cost) => lines.extend(cost_lines(cx, cost)),
            None => {
                lines.push(Line::styled("cost (onnx cost)", heading()));
                lines.push(Line::styled("  waiting for inference", dim()));
            }
        }
        let block = focus_block(" model ".into(), true);
        frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }).scroll((scroll, 0)), area);
    }
}

/// The main graph's inputs (those that are not initializers too, as models before IR 4 list
/// them) and outputs, with their declared types, or what inference found for an output
/// that declares none.
fn interface(cx: &Shared<'_>, room: usize) -> Vec<Line<'static>> {
    let Some(g) = cx.model.graph else { return Vec::new() };
    let graph = &cx.model.graphs[g];
    let initializers: std::collections::HashSet<&onnx_core::ir::Str> =
        graph.initializers.iter().filter_map(|&t| cx.model.tensors[t].name.as_ref()).collect();
    let row = |name: &Option<onnx_core::ir::Str>, ty: Option<String>| {
        let name = view::middle(&sanitize::opt(name.as_ref()), room * 2 / 3);
        Line::from(vec![Span::raw(format!("  {name}  ")), Span::styled(ty.unwrap_or_else(|| "?".into()), dim())])
    };
    let mut lines = vec![Line::styled("inputs", heading())];
    let inputs: Vec<_> =
        graph.inputs.iter().filter(|v| v.name.as_ref().is_none_or(|n| !initializers.contains(n))).collect();
    if inputs.is_empty() {
        lines.push(Line::styled("  (none)", dim()));
    }
    for v in inputs {
        lines.push(row(&v.name, v.ty.as_ref().map(view::type_text)));
    }
    lines.push(Line::styled("outputs", heading()));
    for v in &graph.outputs {
        let inferred = || {
            let (_, def) = cx.index.def(cx.index.scope_of_graph(g)?, v.name.as_ref()?)?;
            let Def::Node(n, i) = def else { return None };
            cx.types()?.node_output(cx.model, n, i).map(view::type_text)
        };
        lines.push(row(&v.name, v.ty.as_ref().map(view::type_text).or_else(inferred)));
    }
    lines
}

/// `onnx cost`'s totals: MACs (a formula where dimensions are symbolic), the peak of live
/// activations, and the operators that cost most.
fn cost_lines(cx: &Shared<'_>, cost: &onnx_core::cost::ModelCost) -> Vec<Line<'static>> {
    use onnx_core::cost::{Count, Macs};
    let mut lines = vec![Line::styled("cost (onnx cost)", heading())];
    let uncounted = cost.uncounted().count();
    let partial =
        if uncounted > 0 { format!(", {} not counted", view::count(uncounted, "node")) } else { String::new() };
    lines.push(Line::from(format!("  {} MACs{partial}", view::macs(&cost.macs))));
    if let Some((peak, at)) = cost.peak {
        let node = cost.nodes.get(at).map_or_else(String::new, |n| cx.index.node_title(cx.model, n.node));
        lines.push(Line::from(format!(
            "  peak activations {} live (at {node})",
            view::bytes(u64::try_from(peak).unwrap_or(u64::MAX))
        )));
    }
    let mut by_op: Vec<(String, Count)> = Vec::new();
    for n in &cost.nodes {
        let Macs::Counted(m) = &n.macs else { continue };
        let op = sanitize::opt(cx.model.nodes[n.node].op_type.as_ref()).into_owned();
        match by_op.iter_mut().find(|(o, _)| *o == op) {
            Some((_, total)) => *total = total.plus(m).unwrap_or_else(|| total.clone()),
            None => by_op.push((op, m.clone())),
        }
    }
    by_op.sort_by_key(|(_, m)| std::cmp::Reverse(m.at(1000)));
    for (op, m) in by_op.iter().take(8).filter(|(_, m)| !m.is_zero()) {
        lines.push(Line::from(format!("  {:>16} {op}", view::macs(m))));
    }
    lines
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(LONGEST_VALUE) {
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
        None => text.to_owned(),
    }
}
