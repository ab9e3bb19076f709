//! Screen 2: the current scope's values (inputs, initializers, node outputs), and the
//! selected one in detail; Enter opens it in the viewer.

use onnx_core::ir::Str;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::component::{Component, Cursor, Focus, Outcome, Shared};
use crate::index::{Body, Def};
use crate::sanitize;
use crate::style::{dim, focus_block, heading, position, row};
use crate::view::{self, ValueRow, values_of};

#[derive(Debug)]
pub struct ValuesScreen {
    cursor: Cursor,
    /// The rows of one scope, built on first use per scope.
    rows: (usize, Vec<ValueRow>),
}

impl Default for ValuesScreen {
    fn default() -> ValuesScreen {
        ValuesScreen { cursor: Cursor::default(), rows: (usize::MAX, Vec::new()) }
    }
}

impl ValuesScreen {
    /// The rows of the current scope.
    fn rows(&mut self, cx: &Shared<'_>) -> &[ValueRow] {
        if self.rows.0 != cx.scope {
            self.rows = (cx.scope, values_of(cx.model, cx.index, cx.scope));
        }
        &self.rows.1
    }

    /// Selects the current scope's value of this name (the first row when none is).
    pub fn select_name(&mut self, name: &Str, cx: &Shared<'_>) {
        self.cursor.selected = self.rows(cx).iter().position(|r| &r.name == name).unwrap_or(0);
    }
}

impl Component for ValuesScreen {
    fn step(&mut self, delta: isize, cx: &Shared<'_>) {
        let len = self.rows(cx).len();
        self.cursor.step(delta, len);
    }

    fn enter(&mut self, cx: &Shared<'_>) -> Outcome {
        let at = self.cursor.selected;
        match self.rows(cx).get(at).cloned() {
            Some(r) => Outcome::OpenValue { name: r.name, def: r.def },
            None => Outcome::Stay,
        }
    }

    fn selected(&self, _: &Shared<'_>) -> usize {
        self.cursor.selected
    }

    fn select(&mut self, row: usize, _: &Shared<'_>) {
        self.cursor.selected = row;
    }

    fn hint(&self, _: &Shared<'_>) -> &'static str {
        "Enter opens the value · / search · ? help · q quit"
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let [list, detail] = Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
        let scope = cx.scope;
        let len = self.rows(cx).len();
        let height = usize::from(list.height.saturating_sub(2));
        let window = self.cursor.window(height, len);
        let selected = self.cursor.selected;
        let types = cx.types();
        let rows = &self.rows.1;
        let mut lines = Vec::new();
        for i in window {
            let r = &rows[i];
            let ty = view::value_type(cx.model, types, scope, cx.index, r);
            // The name shortened in the middle to leave its type room; whole in the detail.
            let room = usize::from(list.width.saturating_sub(2)).saturating_sub(14 + ty.chars().count()).max(12);
            let spans = vec![
                Span::styled(format!("{:<11} ", r.kind), dim()),
                Span::raw(view::middle(&sanitize::name(&r.name), room)),
                Span::styled(format!("  {ty}"), dim()),
            ];
            lines.push(row(spans, i == selected));
        }
        let block = focus_block(format!(" values · {} ", position(selected, len)), cx.focus == Focus::List);
        frame.render_widget(Paragraph::new(lines).block(block), list);

        let mut info = Vec::new();
        if let Some(r) = rows.get(selected) {
            let model = cx.model;
            info.push(Line::styled(sanitize::name(&r.name).into_owned(), heading()));
            info.push(Line::from(format!("{} {}", r.kind, view::value_type(model, types, scope, cx.index, r))));
            if let (Some(Def::Initializer(i)), Some(Body::Graph(g))) =
                (r.def, cx.index.scopes.get(scope).map(|s| s.body))
                && let Some(&t) = model.graphs[g].initializers.get(i)
            {
                let t = &model.tensors[t];
                info.push(Line::from(view::bytes(t.expected_raw_size().unwrap_or(0))));
                if t.is_external() {
                    let location = t.external_value("location").map(|l| sanitize::name(l).into_owned());
                    info.push(Line::from(format!("stored in {}", location.unwrap_or_default())));
                }
            }
            if let Some(Def::Node(n, _)) = r.def {
                info.push(Line::from(format!("computed by {}", cx.index.node_title(model, n))));
            }
            let readers = cx.index.consumers(scope, &r.name).len();
            info.push(Line::from(format!("read by {}", view::count(readers, "node"))));
            if let Some(o) = cx.done()
                && let Some(v) = o.values.get(&r.name.to_string())
            {
                info.push(Line::from(format!("after the run: {}", v.describe())));
            }
            info.push(Line::styled("Enter opens it in the viewer", dim()));
        }
        let block = focus_block(" value ".into(), cx.focus == Focus::Detail);
        frame.render_widget(Paragraph::new(info).block(block).wrap(ratatui::widgets::Wrap { trim: false }), detail);
    }
}
