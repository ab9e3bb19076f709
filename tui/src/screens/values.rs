//! Screen 2: the current scope's values (inputs, initializers, node outputs), and the
//! selected one in detail; Enter opens it in the viewer. `s` shows them in model order or
//! largest first (the bytes an initializer holds, or that a tensor type with every dimension
//! known takes; values of unknown size last, in model order).

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
    /// The rows of one scope, built on first use per scope, in the order shown.
    rows: (usize, Vec<ValueRow>),
    /// Largest first (`s`), else model order.
    by_size: bool,
    /// The order `rows` are in: by size, and whether inference's types were known then
    /// (they may make more sizes known). `None`: model order.
    sorted: Option<bool>,
    /// Each row's bytes, when sorted by size.
    sizes: Vec<Option<u64>>,
    /// The value to select again once the order has changed.
    keep: Option<Str>,
}

impl Default for ValuesScreen {
    fn default() -> ValuesScreen {
        ValuesScreen {
            cursor: Cursor::default(),
            rows: (usize::MAX, Vec::new()),
            by_size: false,
            sorted: None,
            sizes: Vec::new(),
            keep: None,
        }
    }
}

impl ValuesScreen {
    /// The rows of the current scope, in the order chosen.
    fn rows(&mut self, cx: &Shared<'_>) -> &[ValueRow] {
        let typed = cx.types().is_some();
        let wanted = self.by_size.then_some(typed);
        if self.rows.0 != cx.scope || (self.sorted.is_some() && wanted != self.sorted) {
            if self.rows.0 == cx.scope && self.keep.is_none() {
                self.keep = self.rows.1.get(self.cursor.selected).map(|r| r.name.clone());
            }
            self.rows = (cx.scope, values_of(cx.model, cx.index, cx.scope));
            self.sorted = None;
            self.sizes.clear();
        }
        if wanted.is_some() && self.sorted.is_none() {
            let sizes = view::value_sizes(cx.model, cx.types(), cx.index, cx.scope, &self.rows.1);
            let mut order: Vec<(ValueRow, Option<u64>)> =
                std::mem::take(&mut self.rows.1).into_iter().zip(sizes).collect();
            // Stable: equal sizes, and unknown ones (last), stay in model order.
            order.sort_by_key(|(_, size)| std::cmp::Reverse(size.map_or(0, |b| b.saturating_add(1))));
            (self.rows.1, self.sizes) = order.into_iter().unzip();
            self.sorted = wanted;
        }
        if let Some(name) = self.keep.take() {
            self.cursor.selected = self.rows.1.iter().position(|r| r.name == name).unwrap_or(0);
        }
        &self.rows.1
    }

    /// `s`: largest first, or back to model order; the selected value stays selected.
    /// `shown`: the Values screen is shown (elsewhere the key says where it works).
    pub fn toggle_order(&mut self, shown: bool) -> Outcome {
        if !shown {
            return Outcome::Flash("s sorts the Values screen (2)".into());
        }
        self.keep = self.rows.1.get(self.cursor.selected).map(|r| r.name.clone());
        self.by_size = !self.by_size;
        Outcome::Flash(if self.by_size { "values: largest first" } else { "values: in model order" }.into())
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

    fn list(&self, _: &Shared<'_>) -> Option<Cursor> {
        Some(self.cursor)
    }

    fn hint(&self, _: &Shared<'_>) -> &'static str {
        "Enter opens the value · s sort by size · / search · ? help · q quit"
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let [list, detail] = Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
        let scope = cx.scope;
        let len = self.rows(cx).len();
        let window = self.cursor.shown_in(list, len);
        let selected = self.cursor.selected;
        let types = cx.types();
        let rows = &self.rows.1;
        let mut lines = Vec::new();
        for i in window {
            let r = &rows[i];
            let mut ty = view::value_type(cx.model, types, scope, cx.index, r);
            if let Some(Some(bytes)) = self.sizes.get(i) {
                ty = format!("{ty}  {}", view::bytes(*bytes));
            }
            // The name shortened in the middle to leave its type room; whole in the detail.
            let room = usize::from(list.width.saturating_sub(2)).saturating_sub(14 + ty.chars().count()).max(12);
            let spans = vec![
                Span::styled(format!("{:<11} ", r.kind), dim()),
                Span::raw(view::middle(&sanitize::name(&r.name), room)),
                Span::styled(format!("  {ty}"), dim()),
            ];
            lines.push(row(spans, i == selected));
        }
        let order = if self.by_size { "largest first" } else { "model order" };
        let block = focus_block(format!(" values · {order} · {} ", position(selected, len)), cx.focus == Focus::List);
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
