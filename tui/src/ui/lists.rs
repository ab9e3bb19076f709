//! Screens 2–4: the scope's values, the tree of scopes, the checker's findings.

use onnx_core::diagnostic::Severity;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::graph::focus_block;
use super::{dim, error_style, heading, position, row, warning_style};
use crate::app::{App, DiagFilter, Focus, RunState};
use crate::index::{Body, Def};
use crate::sanitize;
use crate::view;

pub fn values(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let [list, detail] = Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
    let scope = app.scope;
    let len = app.value_rows().len();
    let height = usize::from(list.height.saturating_sub(2));
    let window = app.values_cursor.window(height, len);
    let selected = app.values_cursor.selected;
    let types = app.analysis.as_ref().map(|a| &*a.types);
    let mut lines = Vec::new();
    for i in window {
        let r = &app.values.1[i];
        let ty = view::value_type(&app.model, types, scope, &app.index, r);
        let spans = vec![
            Span::styled(format!("{:<11} ", r.kind), dim()),
            Span::raw(sanitize::name(&r.name).into_owned()),
            Span::styled(format!("  {ty}"), dim()),
        ];
        lines.push(row(spans, i == selected));
    }
    let block = focus_block(format!(" values · {} ", position(selected, len)), app.focus == Focus::List);
    frame.render_widget(Paragraph::new(lines).block(block), list);

    let mut info = Vec::new();
    if let Some(r) = app.values.1.get(selected).cloned() {
        info.push(Line::styled(sanitize::name(&r.name).into_owned(), heading()));
        info.push(Line::from(format!("{} {}", r.kind, view::value_type(&app.model, types, scope, &app.index, &r))));
        if let (Some(Def::Initializer(i)), Some(Body::Graph(g))) = (r.def, app.index.scopes.get(scope).map(|s| s.body))
            && let Some(&t) = app.model.graphs[g].initializers.get(i)
        {
            let t = &app.model.tensors[t];
            info.push(Line::from(view::bytes(t.expected_raw_size().unwrap_or(0))));
            if t.is_external() {
                let location = t.external_value("location").map(|l| sanitize::name(l).into_owned());
                info.push(Line::from(format!("stored in {}", location.unwrap_or_default())));
            }
        }
        if let Some(Def::Node(n, _)) = r.def {
            info.push(Line::from(format!("computed by {}", app.index.node_title(&app.model, n))));
        }
        let readers = app.index.consumers(scope, &r.name).len();
        info.push(Line::from(format!("read by {readers} node(s)")));
        if let RunState::Done(o) = &app.run
            && let Some(v) = o.values.get(&r.name.to_string())
        {
            info.push(Line::from(format!("after the run: {}", v.describe())));
        }
        info.push(Line::styled("Enter opens it in the viewer", dim()));
    }
    let block = focus_block(" value ".into(), app.focus == Focus::Detail);
    frame.render_widget(Paragraph::new(info).block(block), detail);
}

pub fn tree(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let len = app.index.scopes.len();
    let height = usize::from(area.height.saturating_sub(2));
    let window = app.tree_cursor.window(height, len);
    let selected = app.tree_cursor.selected;
    let mut lines = Vec::new();
    for i in window {
        let s = &app.index.scopes[i];
        let kind = match s.body {
            Body::Graph(_) if s.parent.is_none() => "graph",
            Body::Graph(_) => "subgraph",
            Body::Function(_) => "function",
        };
        let current = if i == app.scope { "● " } else { "  " };
        let spans = vec![
            Span::raw(format!("{current}{}", "  ".repeat(s.depth))),
            Span::styled(s.title.clone(), heading()),
            Span::styled(format!("  {kind}, {} nodes", s.nodes.len()), dim()),
        ];
        lines.push(row(spans, i == selected));
    }
    let block = focus_block(format!(" scopes · {} ", position(selected, len)), true);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

pub fn diagnostics(frame: &mut Frame<'_>, area: Rect, app: &mut App) {
    let filter = match app.diag_filter {
        DiagFilter::All => "all",
        DiagFilter::Errors => "errors",
        DiagFilter::Warnings => "warnings",
    };
    let Some(_) = &app.analysis else {
        frame.render_widget(Paragraph::new("checking…").block(focus_block(" diagnostics ".into(), true)), area);
        return;
    };
    let len = app.diagnostics().len();
    let height = usize::from(area.height.saturating_sub(2));
    let window = app.diag_cursor.window(height, len);
    let selected = app.diag_cursor.selected;
    let shown = app.diagnostics();
    let mut lines = Vec::new();
    for i in window {
        let f = shown[i];
        let (mark, style) = match f.diagnostic.severity {
            Severity::Error => ("error", error_style()),
            _ => ("warning", warning_style()),
        };
        let spans = vec![
            Span::styled(format!("{mark:<8}"), style),
            Span::styled(format!("{} ", f.diagnostic.code), heading()),
            Span::raw(sanitize::str(&f.diagnostic.message).into_owned()),
            Span::styled(format!("  {}", sanitize::str(&f.place)), dim()),
        ];
        lines.push(row(spans, i == selected));
    }
    if len == 0 {
        lines.push(Line::from("no findings: the checker and inference found the model valid"));
    }
    let title = format!(" diagnostics ({filter}) · {} ", position(selected, len));
    frame.render_widget(Paragraph::new(lines).block(focus_block(title, true)), area);
}
