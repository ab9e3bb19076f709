//! Screen 1: the current scope's nodes in order, and the selected node in detail.

use onnx_core::diagnostic::Severity;
use onnx_core::ir::NodeId;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::{dim, error_style, heading, position, row, warning_style};
use crate::app::{App, DetailTab, Focus, RunState};
use crate::index::Def;
use crate::sanitize;
use crate::view;

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let [list, detail] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    draw_list(frame, list, app);
    draw_detail(frame, detail, app);
}

fn draw_list(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let len = app.nodes().len();
    let height = usize::from(area.height.saturating_sub(2));
    let scope = app.scope;
    let window = app.graph_cursor[scope].window(height, len);
    let selected = app.graph_cursor[scope].selected;
    let types = app.analysis.as_ref().map(|a| &*a.types);
    let timings = match &app.run {
        RunState::Done(o) if scope == 0 => Some(o),
        _ => None,
    };
    let width = len.to_string().len();
    let mut lines = Vec::with_capacity(window.len());
    for i in window {
        let n = app.nodes()[i];
        let node = &app.model.nodes[n];
        let mut spans = vec![Span::styled(format!("{i:>width$} "), dim())];
        spans.push(match app.marks.get(&n) {
            Some(Severity::Error) => Span::styled("✗ ", error_style()),
            Some(_) => Span::styled("⚠ ", warning_style()),
            None => Span::raw("  "),
        });
        if let Some(o) = timings {
            // The main graph's timings are in node order: row i is timing i.
            let d = o.timings.get(i).filter(|(m, _)| *m == n).map(|(_, d)| view::duration(*d));
            spans.push(Span::raw(format!("{:>9} ", d.unwrap_or_default())));
            if o.nonfinite.contains(&n) {
                spans.push(Span::styled("NaN/Inf ", error_style()));
            }
        }
        spans.push(Span::styled(view::op_label(&app.model, n), heading()));
        spans.push(Span::raw(format!(" {}", sanitize::opt(node.name.as_ref()))));
        let outs: Vec<String> = node.outputs.iter().map(|o| sanitize::name(o).into_owned()).collect();
        spans.push(Span::styled(
            format!(" → {} : {}", outs.join(", "), view::output_types(&app.model, types, n)),
            dim(),
        ));
        lines.push(row(spans, i == selected));
    }
    let title =
        format!(" {} · {} ", app.index.scopes.get(scope).map_or("", |s| s.title.as_str()), position(selected, len));
    let block = focus_block(title, app.focus == Focus::List);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

pub fn focus_block(title: String, focused: bool) -> Block<'static> {
    let block = Block::bordered().title(title);
    if focused { block.border_style(heading()) } else { block.border_style(dim()) }
}

fn draw_detail(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let tabs = [(DetailTab::Node, "Node"), (DetailTab::Schema, "Schema"), (DetailTab::Text, "Text")];
    let title: Vec<String> = tabs
        .iter()
        .map(|(t, name)| if *t == app.detail_tab { format!("[{name}]") } else { name.to_string() })
        .collect();
    let block = focus_block(format!(" {} ", title.join(" ")), app.focus == Focus::Detail);
    let lines = match app.selected_node() {
        None => vec![Line::from("this scope has no nodes")],
        Some(n) => match app.detail_tab {
            DetailTab::Node => node_lines(app, n),
            DetailTab::Schema => schema_lines(app, n),
            DetailTab::Text => app.node_text(n).lines().map(|l| Line::from(l.to_owned())).collect(),
        },
    };
    let scroll = u16::try_from(app.detail_scroll).unwrap_or(u16::MAX);
    let text = Paragraph::new(lines).block(block).wrap(ratatui::widgets::Wrap { trim: false });
    frame.render_widget(text.scroll((scroll, 0)), area);
}

fn node_lines(app: &App, n: NodeId) -> Vec<Line<'static>> {
    let model = &app.model;
    let node = &model.nodes[n];
    let types = app.analysis.as_ref().map(|a| &*a.types);
    let mut lines = vec![Line::from(vec![
        Span::styled(view::op_label(model, n), heading()),
        Span::raw(format!("  {}", app.index.node_title(model, n))),
    ])];
    if let Some(doc) = node.doc_string().filter(|d| !d.is_empty()) {
        lines.push(Line::styled(sanitize::name(doc).into_owned(), dim()));
    }
    if !node.attributes.is_empty() {
        lines.push(Line::styled("attributes", heading()));
        for a in &node.attributes {
            let value = view::attribute_value(model, a.value());
            lines.push(Line::from(format!("  {} = {value}", sanitize::opt(a.name.as_ref()))));
        }
    }
    lines.push(Line::styled("inputs", heading()));
    for (i, name) in node.inputs.iter().enumerate() {
        if name.is_empty() {
            lines.push(Line::styled(format!("  {i}: (absent)"), dim()));
            continue;
        }
        let from = match app.index.def(app.scope, name) {
            Some((_, Def::Node(p, _))) => format!("← {}", app.index.node_title(model, p)),
            Some((_, Def::Input(_))) => "graph input".into(),
            Some((_, Def::Initializer(_))) => "initializer".into(),
            None => "undefined".into(),
        };
        let ty = input_type(app, n, i).unwrap_or_default();
        lines.push(Line::from(format!("  {i}: {} {ty}  {from}", sanitize::name(name))));
    }
    lines.push(Line::styled("outputs", heading()));
    for (i, name) in node.outputs.iter().enumerate() {
        let ty = types.and_then(|t| t.node_output(model, n, i)).map(view::type_text).unwrap_or_else(|| "?".into());
        let readers = app.index.consumers(app.scope, name).len();
        lines.push(Line::from(format!("  {i}: {} {ty}  → {readers} consumer(s)", sanitize::name(name))));
    }
    if let RunState::Done(o) = &app.run {
        if let Some((_, d)) = o.timings.iter().find(|(m, _)| *m == n) {
            lines.push(Line::from(format!("time {}", view::duration(*d))));
        }
        for name in node.outputs.iter() {
            if let Some(v) = o.values.get(&name.to_string()) {
                let text = format!("  {} = {} {}", sanitize::name(name), v.describe(), view::preview(v));
                lines.push(Line::styled(text, dim()));
            }
        }
    }
    if let Some(a) = &app.analysis {
        for f in a.diagnostics.iter().filter(|f| f.node == Some(n)) {
            let style = if f.diagnostic.severity == Severity::Error { error_style() } else { warning_style() };
            let text = format!("{}: {}", f.diagnostic.code, sanitize::str(&f.diagnostic.message));
            lines.push(Line::styled(text, style));
        }
    }
    lines
}

/// The type of a node's input: what inference found for its producer, or its declaration.
fn input_type(app: &App, n: NodeId, i: usize) -> Option<String> {
    let name = app.model.nodes[n].inputs.get(i)?;
    let (s, def) = app.index.def(app.scope, name)?;
    let row = view::ValueRow { name: name.clone(), kind: "", def: Some(def) };
    let text = view::value_type(&app.model, app.analysis.as_ref().map(|a| &*a.types), s, &app.index, &row);
    (!text.is_empty()).then_some(text)
}

fn schema_lines(app: &App, n: NodeId) -> Vec<Line<'static>> {
    let model = &app.model;
    let node = &model.nodes[n];
    let domain = node.schema_domain().unwrap_or("");
    let op = node.op_type.as_ref().and_then(|s| s.as_str()).unwrap_or("");
    let version = model.opset_version(domain).unwrap_or(i64::MAX);
    let Some(schema) = onnx_core::schema::registry().lookup(domain, op, version) else {
        if model.local_function(node).is_some() {
            return vec![Line::from("a model-local function: see it in the Tree screen (3)")];
        }
        return vec![Line::from(format!("no schema for {} in opset {version}", view::op_label(model, n)))];
    };
    let mut lines = vec![
        Line::styled(format!("{} since version {}", schema.op, schema.since_version), heading()),
        Line::styled(schema.doc_url(), dim()),
    ];
    let formal = |f: &onnx_core::schema::Formal| {
        let allowed = schema.allowed_types(f).join(", ");
        format!("  {} : {} ({allowed})", f.name, f.type_str)
    };
    lines.push(Line::styled("inputs", heading()));
    lines.extend(schema.inputs.iter().map(|f| Line::from(formal(f))));
    lines.push(Line::styled("outputs", heading()));
    lines.extend(schema.outputs.iter().map(|f| Line::from(formal(f))));
    if !schema.attributes.is_empty() {
        lines.push(Line::styled("attributes", heading()));
        for a in &schema.attributes {
            let default = a.default.as_ref().map(|d| format!(" = {d}")).unwrap_or_default();
            let required = if a.required { " (required)" } else { "" };
            lines.push(Line::from(format!("  {}{default}{required}", a.name)));
        }
    }
    if let Some(doc) = onnx_core::schema::doc(&schema.domain, &schema.op, schema.since_version) {
        lines.push(Line::styled("documentation", heading()));
        lines.extend(doc.lines().map(|l| Line::from(l.to_owned())));
    }
    lines
}
