//! Screen 7: the neighbourhood of the Graph screen's selected node, drawn as a small graph
//! ([`crate::flow`]): its producers a few steps up, its consumers a few steps down, branches
//! and merges in lanes. ↑/↓ walk the nodes shown; Enter centres the view on one (and selects
//! it on the Graph screen, so `1` goes back to the list there).

use onnx_core::ir::NodeId;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::component::{Component, Cursor, Outcome, Shared};
use crate::flow::{self, Neighbourhood, Row};
use crate::style::{dim, focus_block, heading, row, warning_style};
use crate::view;

/// How many steps up and down the view follows.
pub const DEPTH: usize = 3;

#[derive(Debug, Default)]
pub struct FlowScreen {
    centre: Option<NodeId>,
    /// The drawn rows for the centre, made when it changes.
    drawn: Option<(NodeId, Neighbourhood, Vec<Row>)>,
    /// Over the drawn rows; only node rows are selected.
    cursor: Cursor,
}

impl FlowScreen {
    /// Centres the view on `n` (the Graph screen's selection when the screen is shown).
    pub fn centre_on(&mut self, n: Option<NodeId>) {
        if self.centre != n {
            self.centre = n;
            self.drawn = None;
            self.cursor = Cursor::default();
        }
    }

    /// The rows for the current centre, drawn once per centre; the cursor starts on it.
    fn rows(&mut self, cx: &Shared<'_>) -> Option<&(NodeId, Neighbourhood, Vec<Row>)> {
        let centre = self.centre?;
        if self.drawn.as_ref().is_none_or(|(c, _, _)| *c != centre) {
            let around = flow::neighbourhood(cx.model, cx.index, centre, DEPTH);
            let rows = flow::draw(&around.nodes, &around.edges);
            self.cursor.selected = rows.iter().position(|r| r.node == Some(centre)).unwrap_or(0);
            self.drawn = Some((centre, around, rows));
        }
        self.drawn.as_ref()
    }

    fn selected_node(&mut self, cx: &Shared<'_>) -> Option<NodeId> {
        let at = self.cursor.selected;
        self.rows(cx)?.2.get(at)?.node
    }
}

impl Component for FlowScreen {
    /// Moves between node rows, passing over the rows that only branch edges out.
    fn step(&mut self, delta: isize, cx: &Shared<'_>) {
        let at = self.cursor.selected;
        let Some((_, _, rows)) = self.rows(cx) else { return };
        let nodes: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].node.is_some()).collect();
        let Some(here) = nodes.iter().position(|&i| i >= at) else { return };
        let to = (here as isize).saturating_add(delta).clamp(0, nodes.len() as isize - 1) as usize;
        self.cursor.selected = nodes[to];
    }

    fn enter(&mut self, cx: &Shared<'_>) -> Outcome {
        match self.selected_node(cx) {
            Some(n) => {
                self.centre_on(Some(n));
                Outcome::Follow(n)
            }
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

    /// A click on a node's row selects it (Enter when selected already); the rows that
    /// only branch edges out are not selected.
    fn click(&mut self, row: usize, cx: &Shared<'_>) -> Outcome {
        let is_node = self.rows(cx).and_then(|(_, _, rows)| rows.get(row)).is_some_and(|r| r.node.is_some());
        if !is_node {
            return Outcome::Stay;
        }
        if row == self.cursor.selected {
            return self.enter(cx);
        }
        self.cursor.selected = row;
        Outcome::Stay
    }

    fn hint(&self, _: &Shared<'_>) -> &'static str {
        "↑/↓ walk the nodes · Enter centres on one · 1 its row in the list · ? help"
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let types = cx.types();
        self.rows(cx);
        let Some((centre, around, rows)) = self.drawn.as_ref() else {
            let text = "no node selected: select one on the Graph screen (1), then 7";
            frame.render_widget(Paragraph::new(text).block(focus_block(" flow ".into(), true)), area);
            return;
        };
        let centre = *centre;
        let window = self.cursor.shown_in(area, rows.len());
        let selected = self.cursor.selected;
        let mut lines = Vec::with_capacity(window.len());
        for i in window {
            let r = &rows[i];
            let lanes = if r.node == Some(centre) { r.lanes.replacen('●', "◆", 1) } else { r.lanes.clone() };
            let mut spans = vec![Span::styled(lanes, dim()), Span::raw(" ")];
            if let Some(n) = r.node {
                spans.push(Span::styled(view::op_label(cx.model, n), heading()));
                spans.push(Span::raw(format!(" {}", view::middle(&cx.index.node_title(cx.model, n), 40))));
                spans.push(Span::styled(format!(" → {}", view::output_types(cx.model, types, n)), dim()));
                let more = |map: &std::collections::HashMap<NodeId, usize>, arrow: &str| {
                    map.get(&n).map(|k| format!("  {arrow} {k} more"))
                };
                for hidden in [more(&around.hidden_above, "↑"), more(&around.hidden_below, "↓")].into_iter().flatten()
                {
                    spans.push(Span::styled(hidden, warning_style()));
                }
            }
            lines.push(row(spans, i == selected));
        }
        let title = format!(
            " flow · {} · {} up and down · {} ",
            view::middle(&cx.index.node_title(cx.model, centre), 40),
            view::count(DEPTH, "step"),
            view::count(around.nodes.len(), "node")
        );
        if lines.is_empty() {
            lines.push(Line::from("nothing to draw"));
        }
        frame.render_widget(Paragraph::new(lines).block(focus_block(title, true)), area);
    }
}
