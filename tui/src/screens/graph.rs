//! Screen 1: the current scope's nodes in order, and the selected node in detail (its
//! inputs and outputs, its operator's schema, its text). The jumps that start from the
//! selected node (`p`, `c`, `v`) are this screen's too.

use onnx_core::diagnostic::Severity;
use onnx_core::ir::{Model, NodeId};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::component::{Component, Cursor, Focus, Outcome, Shared};
use crate::index::Def;
use crate::keys::Action;
use crate::sanitize;
use crate::search::Target;
use crate::style::{dim, error_style, focus_block, heading, position, row, warning_style};
use crate::view;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DetailTab {
    Node,
    Schema,
    Text,
}

#[derive(Debug)]
pub struct GraphScreen {
    /// The list's cursor in each scope.
    cursors: Vec<Cursor>,
    tab: DetailTab,
    detail_scroll: usize,
    /// The Text tab's node, printed once (a Constant may hold megabytes of numbers).
    text_cache: Option<(NodeId, String)>,
}

impl GraphScreen {
    pub fn new(scopes: usize) -> GraphScreen {
        GraphScreen {
            cursors: vec![Cursor::default(); scopes.max(1)],
            tab: DetailTab::Node,
            detail_scroll: 0,
            text_cache: None,
        }
    }

    /// The node selected in the current scope.
    pub fn selected_node(&self, cx: &Shared<'_>) -> Option<NodeId> {
        cx.nodes().get(self.cursors[cx.scope].selected).copied()
    }

    /// Selects a row of a scope's list.
    pub fn select_in(&mut self, scope: usize, row: usize) {
        self.cursors[scope].selected = row;
    }

    /// Shows a row of a scope: selected, its detail from the top.
    pub fn show(&mut self, scope: usize, row: usize) {
        self.select_in(scope, row);
        self.detail_scroll = 0;
    }

    /// Scrolls the detail pane (the keys that move a list, when the detail pane has them).
    pub fn scroll_detail(&mut self, delta: isize) {
        self.detail_scroll = self.detail_scroll.saturating_add_signed(delta).min(10_000);
    }

    /// `]` and `[`: the next or previous detail tab.
    pub fn next_tab(&mut self, forward: bool) {
        let tabs = [DetailTab::Node, DetailTab::Schema, DetailTab::Text];
        let at = tabs.iter().position(|t| *t == self.tab).unwrap_or(0);
        let next = if forward { at + 1 } else { at + tabs.len() - 1 };
        self.tab = tabs[next % tabs.len()];
        self.detail_scroll = 0;
    }

    /// `p`, `c` and `v`, which work on the selected node (`shown`: this screen is shown;
    /// elsewhere they say so).
    pub fn node_action(&self, a: Action, shown: bool, cx: &Shared<'_>) -> Outcome {
        let key = match a {
            Action::Producer => 'p',
            Action::Consumers => 'c',
            _ => 'v',
        };
        let Some(n) = self.selected_node(cx).filter(|_| shown) else {
            return Outcome::Flash(format!("{key} works on the Graph screen's selected node"));
        };
        match a {
            Action::Producer => producers(cx, n),
            Action::Consumers => consumers(cx, n),
            _ => {
                let outputs = &cx.model.nodes[n].outputs;
                match outputs.iter().position(|o| !o.is_empty()) {
                    Some(i) => Outcome::OpenValue { name: outputs[i].clone(), def: Some(Def::Node(n, i)) },
                    None => Outcome::Stay,
                }
            }
        }
    }

    /// A node in the canonical text, cleaned for the terminal.
    fn node_text(&mut self, model: &Model, n: NodeId) -> &str {
        if self.text_cache.as_ref().is_none_or(|(m, _)| *m != n) {
            let text = onnx_core::print::canonical::node(model, n);
            let lines: Vec<_> = text.lines().map(crate::sanitize::str).collect();
            self.text_cache = Some((n, lines.join("\n")));
        }
        self.text_cache.as_ref().map_or("", |(_, t)| t.as_str())
    }

    fn draw_list(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let nodes = cx.nodes();
        let len = nodes.len();
        let scope = cx.scope;
        let window = self.cursors[scope].shown_in(area, len);
        let selected = self.cursors[scope].selected;
        let types = cx.types();
        let timings = cx.done();
        let width = len.to_string().len();
        let mut lines = Vec::with_capacity(window.len());
        for i in window {
            let n = nodes[i];
            let node = &cx.model.nodes[n];
            let mut spans = vec![Span::styled(format!("{i:>width$} "), dim())];
            spans.push(match cx.marks.get(&n) {
                Some(Severity::Error) => Span::styled("✗ ", error_style()),
                Some(_) => Span::styled("⚠ ", warning_style()),
                None => Span::raw("  "),
            });
            if let Some(o) = timings {
                // The main graph's timings are in node order: row i is timing i; a
                // subgraph's are summed over the times it ran.
                let d = if scope == 0 {
                    o.timings.get(i).filter(|(m, _)| *m == n).map(|(_, d)| *d)
                } else {
                    o.nested_timings.get(&n).copied()
                };
                let d = d.map(view::duration);
                spans.push(Span::raw(format!("{:>9} ", d.unwrap_or_default())));
                if o.nonfinite.contains(&n) {
                    spans.push(Span::styled("NaN/Inf ", error_style()));
                }
            }
            spans.push(Span::styled(view::op_label(cx.model, n), heading()));
            // Long names are shortened in the middle, where names that share a prefix
            // agree, to share two thirds of the row; the detail pane has them whole.
            let named = usize::from(node.name.as_ref().is_some_and(|n| !n.is_empty())) + node.outputs.len();
            let cap = (usize::from(area.width.saturating_sub(2)) * 2 / 3 / named.max(1)).max(12);
            spans.push(Span::raw(format!(" {}", view::middle(&sanitize::opt(node.name.as_ref()), cap))));
            let outs: Vec<String> = node.outputs.iter().map(|o| view::middle(&sanitize::name(o), cap)).collect();
            spans.push(Span::styled(
                format!(" → {} : {}", outs.join(", "), view::output_types(cx.model, types, n)),
                dim(),
            ));
            lines.push(row(spans, i == selected));
        }
        let title =
            format!(" {} · {} ", cx.index.scopes.get(scope).map_or("", |s| s.title.as_str()), position(selected, len));
        let block = focus_block(title, cx.focus == Focus::List);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }

    fn draw_detail(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let tabs = [(DetailTab::Node, "Node"), (DetailTab::Schema, "Schema"), (DetailTab::Text, "Text")];
        let title: Vec<String> =
            tabs.iter().map(|(t, name)| if *t == self.tab { format!("[{name}]") } else { name.to_string() }).collect();
        let block = focus_block(format!(" {} ", title.join(" ")), cx.focus == Focus::Detail);
        let lines = match self.selected_node(cx) {
            None => vec![Line::from("this scope has no nodes")],
            Some(n) => match self.tab {
                DetailTab::Node => node_lines(cx, n),
                DetailTab::Schema => schema_lines(cx.model, n),
                DetailTab::Text => self.node_text(cx.model, n).lines().map(|l| Line::from(l.to_owned())).collect(),
            },
        };
        let scroll = u16::try_from(self.detail_scroll).unwrap_or(u16::MAX);
        let text = Paragraph::new(lines).block(block).wrap(ratatui::widgets::Wrap { trim: false });
        frame.render_widget(text.scroll((scroll, 0)), area);
    }
}

impl Component for GraphScreen {
    fn step(&mut self, delta: isize, cx: &Shared<'_>) {
        self.cursors[cx.scope].step(delta, cx.nodes().len());
        self.detail_scroll = 0;
    }

    fn enter(&mut self, cx: &Shared<'_>) -> Outcome {
        let Some(n) = self.selected_node(cx) else { return Outcome::Stay };
        // A node holding subgraphs: its first one becomes the scope.
        let sub = cx.model.nodes[n].attributes.iter().flat_map(|a| a.subgraphs()).next();
        match sub.and_then(|g| cx.index.scope_of_graph(g)) {
            Some(s) => {
                self.detail_scroll = 0;
                Outcome::EnterScope(s)
            }
            None => Outcome::FocusDetail,
        }
    }

    fn selected(&self, cx: &Shared<'_>) -> usize {
        self.cursors[cx.scope].selected
    }

    fn select(&mut self, row: usize, cx: &Shared<'_>) {
        self.select_in(cx.scope, row);
    }

    fn list(&self, cx: &Shared<'_>) -> Option<Cursor> {
        Some(self.cursors[cx.scope])
    }

    fn hint(&self, _: &Shared<'_>) -> &'static str {
        "j/k move · Enter open · p producer · c consumers · / search · r run · ? help · q quit"
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let [list, detail] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
        self.draw_list(frame, list, cx);
        self.draw_detail(frame, detail, cx);
    }
}

/// `p`: the producers of a node's inputs.
fn producers(cx: &Shared<'_>, n: NodeId) -> Outcome {
    let mut items = Vec::new();
    for name in cx.model.nodes[n].inputs.iter().filter(|s| !s.is_empty()) {
        let label = crate::sanitize::name(name).into_owned();
        match cx.index.def(cx.scope, name) {
            Some((_, Def::Node(p, _))) => {
                items.push((format!("{label} ← {}", cx.index.node_title(cx.model, p)), Target::Node(p)))
            }
            Some((s, _)) => {
                items.push((format!("{label} (input or initializer)"), Target::Value { scope: s, name: name.clone() }))
            }
            None => {}
        }
    }
    Outcome::Choose { what: "producer", items }
}

/// `c`: the consumers of a node's outputs.
fn consumers(cx: &Shared<'_>, n: NodeId) -> Outcome {
    let mut items = Vec::new();
    for name in cx.model.nodes[n].outputs.iter().filter(|s| !s.is_empty()) {
        for &(c, i) in cx.index.consumers(cx.scope, name) {
            let label = format!("{} → {} input {i}", crate::sanitize::name(name), cx.index.node_title(cx.model, c));
            items.push((label, Target::Node(c)));
        }
    }
    Outcome::Choose { what: "consumer", items }
}

fn node_lines(cx: &Shared<'_>, n: NodeId) -> Vec<Line<'static>> {
    let model = cx.model;
    let node = &model.nodes[n];
    let types = cx.types();
    let mut lines = vec![Line::from(vec![
        Span::styled(view::op_label(model, n), heading()),
        Span::raw(format!("  {}", cx.index.node_title(model, n))),
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
        let from = match cx.index.def(cx.scope, name) {
            Some((_, Def::Node(p, _))) => format!("← {}", cx.index.node_title(model, p)),
            Some((_, Def::Input(_))) => "graph input".into(),
            Some((_, Def::Initializer(_))) => "initializer".into(),
            None => "undefined".into(),
        };
        let ty = input_type(cx, n, i).unwrap_or_default();
        lines.push(Line::from(format!("  {i}: {} {ty}  {from}", sanitize::name(name))));
    }
    lines.push(Line::styled("outputs", heading()));
    for (i, name) in node.outputs.iter().enumerate() {
        let ty = types.and_then(|t| t.node_output(model, n, i)).map(view::type_text).unwrap_or_else(|| "?".into());
        let readers = cx.index.consumers(cx.scope, name).len();
        lines.push(Line::from(format!(
            "  {i}: {} {ty}  → {}",
            sanitize::name(name),
            crate::view::count(readers, "consumer")
        )));
    }
    if let Some(t) = types {
        // What `onnx cost` counts for it, from the inferred shapes.
        let macs = onnx_core::cost::node_macs(model, n, |i| t.node_input(model, n, i), |i| t.node_output(model, n, i));
        match macs {
            onnx_core::cost::Macs::Counted(m) => lines.push(Line::from(format!("cost {} MACs", view::macs(&m)))),
            onnx_core::cost::Macs::ShapeUnknown => lines.push(Line::styled("cost unknown (a shape is unknown)", dim())),
            _ => {}
        }
    }
    if let Some(o) = cx.done() {
        if let Some(d) = o.time_of(n) {
            lines.push(Line::from(format!("time {}", view::duration(d))));
        }
        for (k, name) in node.outputs.iter().enumerate() {
            let nested = o.nested_values.get(&(n, k));
            let main = || o.values.get(&name.to_string()).filter(|_| !o.nested_timings.contains_key(&n));
            if let Some(v) = nested.or_else(main) {
                let text = format!("  {} = {} {}", sanitize::name(name), v.describe(), view::preview(v));
                lines.push(Line::styled(text, dim()));
            }
        }
    }
    if let Some(a) = cx.analysis {
        for f in a.diagnostics.iter().filter(|f| f.node == Some(n)) {
            let style = if f.diagnostic.severity == Severity::Error { error_style() } else { warning_style() };
            let text = format!("{}: {}", f.diagnostic.code, sanitize::str(&f.diagnostic.message));
            lines.push(Line::styled(text, style));
        }
    }
    lines
}

/// The type of a node's input: what inference found for its producer, or its declaration.
fn input_type(cx: &Shared<'_>, n: NodeId, i: usize) -> Option<String> {
    let name = cx.model.nodes[n].inputs.get(i)?;
    let (s, def) = cx.index.def(cx.scope, name)?;
    let row = view::ValueRow { name: name.clone(), kind: "", def: Some(def) };
    let text = view::value_type(cx.model, cx.types(), s, cx.index, &row);
    (!text.is_empty()).then_some(text)
}

fn schema_lines(model: &Model, n: NodeId) -> Vec<Line<'static>> {
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
    // Optional and variadic formals are said after the type, as onnx's documentation does.
    let formal = |f: &onnx_core::schema::Formal| {
        use onnx_core::schema::FormalOption;
        let allowed = schema.allowed_types(f).join(", ");
        let how = match f.option {
            FormalOption::Single => String::new(),
            FormalOption::Optional => ", optional".into(),
            FormalOption::Variadic => {
                let mixed = if f.homogeneous { "" } else { " of mixed types" };
                format!(", variadic{mixed}, at least {}", f.min_arity)
            }
        };
        format!("  {} : {}{how} ({allowed})", f.name, f.type_str)
    };
    lines.push(Line::styled("inputs", heading()));
    lines.extend(schema.inputs.iter().map(|f| Line::from(formal(f))));
    lines.push(Line::styled("outputs", heading()));
    lines.extend(schema.outputs.iter().map(|f| Line::from(formal(f))));
    if !schema.attributes.is_empty() {
        lines.push(Line::styled("attributes", heading()));
        // Each one's type, and its default, or whether it must be given.
        for a in &schema.attributes {
            let given = match (&a.default, a.required) {
                (_, true) => ", required".to_owned(),
                (Some(d), false) => format!(" = {d}"),
                (None, false) => ", optional".to_owned(),
            };
            lines.push(Line::from(format!("  {} : {}{given}", a.name, a.ty.name())));
        }
    }
    if let Some(doc) = onnx_core::schema::doc(&schema.domain, &schema.op, schema.since_version) {
        lines.push(Line::styled("documentation", heading()));
        lines.extend(doc.lines().map(|l| Line::from(l.to_owned())));
    }
    lines
}
