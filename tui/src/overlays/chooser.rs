//! A chooser: where a jump may go when there are several places (`p` on a node with
//! several inputs, `c` on one with several consumers, the changes `:diff` lists).

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{list_action, list_delta};
use crate::component::{Cursor, Outcome};
use crate::keys::Action;
use crate::search::Target;
use crate::style::{centred, focus_block, row};

#[derive(Debug)]
pub struct Chooser {
    title: String,
    /// Each item and where it goes; an item with nowhere to go in this model (a node only
    /// the other model of `:diff` has) says so when picked.
    pub items: Vec<(String, Option<Target>)>,
    cursor: Cursor,
}

impl Chooser {
    pub fn new(title: String, items: Vec<(String, Option<Target>)>) -> Chooser {
        Chooser { title, items, cursor: Cursor::default() }
    }

    pub fn handle_key(&mut self, key: KeyEvent, page: usize) -> Outcome {
        let Some(a) = list_action(&key) else { return Outcome::Stay };
        self.cursor.step(list_delta(a, page), self.items.len());
        match a {
            Action::Escape => Outcome::Close,
            Action::Enter => match self.items.get(self.cursor.selected) {
                Some((_, Some(target))) => Outcome::Pick(target.clone()),
                Some((_, None)) => Outcome::Flash("only the other model has it".to_owned()),
                None => Outcome::Close,
            },
            _ => Outcome::Stay,
        }
    }

    pub fn draw(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let area = centred(area, 70, 50);
        frame.render_widget(Clear, area);
        let window = self.cursor.window(usize::from(area.height.saturating_sub(2)), self.items.len());
        let lines: Vec<Line> =
            window.map(|k| row(vec![Span::raw(self.items[k].0.clone())], k == self.cursor.selected)).collect();
        let block = focus_block(format!(" {} ", self.title), true);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}
