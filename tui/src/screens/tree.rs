//! Screen 3: the tree of scopes (main graph, subgraphs, training graphs, functions); Enter
//! makes one current.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::Paragraph;

use crate::component::{Component, Cursor, Outcome, Shared};
use crate::index::Body;
use crate::style::{dim, focus_block, heading, position, row};

#[derive(Debug, Default)]
pub struct TreeScreen {
    cursor: Cursor,
}

impl Component for TreeScreen {
    fn step(&mut self, delta: isize, cx: &Shared<'_>) {
        self.cursor.step(delta, cx.index.scopes.len());
    }

    fn enter(&mut self, cx: &Shared<'_>) -> Outcome {
        let s = self.cursor.selected;
        if s < cx.index.scopes.len() { Outcome::EnterScope(s) } else { Outcome::Stay }
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
        "Enter makes the scope current · ? help · q quit"
    }

    fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, cx: &Shared<'_>) {
        let len = cx.index.scopes.len();
        let window = self.cursor.shown_in(area, len);
        let selected = self.cursor.selected;
        let mut lines = Vec::new();
        for i in window {
            let s = &cx.index.scopes[i];
            let kind = match s.body {
                Body::Graph(_) if s.parent.is_none() => "graph",
                Body::Graph(_) => "subgraph",
                Body::Function(_) => "function",
            };
            let current = if i == cx.scope { "● " } else { "  " };
            let spans = vec![
                Span::raw(format!("{current}{}", "  ".repeat(s.depth))),
                Span::styled(s.title.clone(), heading()),
                Span::styled(format!("  {kind}, {}", crate::view::count(s.nodes.len(), "node")), dim()),
            ];
            lines.push(row(spans, i == selected));
        }
        let block = focus_block(format!(" scopes · {} ", position(selected, len)), true);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}
