//! `/`: the search picker. Each change of the query goes to the search thread with a new
//! generation; answers to older ones are dropped. Enter jumps to the chosen hit and keeps
//! the hits for `n`/`N`.

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::component::{Cursor, Effect, Outcome};
use crate::field::Field;
use crate::search::{Hit, PREFIXES, Target};
use crate::style::{centred, dim, focus_block, heading, position, row};

#[derive(Debug, Default)]
pub struct SearchBox {
    query: Field,
    hits: Vec<Hit>,
    cursor: Cursor,
    /// The generation of the newest query sent; older answers are dropped.
    generation: u64,
    waiting: bool,
}

impl SearchBox {
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let mut changed = false;
        match key.code {
            KeyCode::Esc => return Outcome::Close,
            KeyCode::Enter => {
                let at = self.cursor.selected;
                return if at < self.hits.len() {
                    Outcome::Jump { hits: std::mem::take(&mut self.hits), at }
                } else if self.waiting {
                    Outcome::Dismiss("still searching".into())
                } else {
                    Outcome::Dismiss(format!("nothing matches '{}'", self.query.text))
                };
            }
            KeyCode::Down => self.cursor.step(1, self.hits.len()),
            KeyCode::Up => self.cursor.step(-1, self.hits.len()),
            KeyCode::Char('n') if ctrl => self.cursor.step(1, self.hits.len()),
            KeyCode::Char('p') if ctrl => self.cursor.step(-1, self.hits.len()),
            _ => changed = self.query.edit(key, |_| true),
        }
        if !changed {
            return Outcome::Stay;
        }
        self.generation += 1;
        self.waiting = true;
        self.cursor = Cursor::default();
        let effect = Effect::Search { generation: self.generation, query: self.query.text.clone() };
        Outcome::Start { effect, saying: None }
    }

    /// The search thread's answer: kept if it answers the newest query.
    pub fn found(&mut self, generation: u64, hits: Vec<Hit>) {
        if self.generation == generation {
            self.hits = hits;
            self.waiting = false;
            self.cursor = Cursor::default();
        }
    }

    pub fn draw(&mut self, frame: &mut Frame<'_>, area: Rect, ready: bool) {
        let area = centred(area, 80, 70);
        // Borders, the query and the hint.
        let page = usize::from(area.height.saturating_sub(4));
        frame.render_widget(Clear, area);
        let window = self.cursor.window(page, self.hits.len());
        let mut lines = vec![
            Line::from(vec![Span::styled("/", heading()), Span::raw(self.query.text.clone()), Span::raw("█")]),
            Line::styled(format!("narrow with {PREFIXES}; fzf syntax"), dim()),
        ];
        for k in window {
            let label = crate::view::middle(&self.hits[k].label, usize::from(area.width.saturating_sub(4)));
            lines.push(row(vec![Span::raw(label)], k == self.cursor.selected));
        }
        let state = if !ready {
            "indexing…".to_owned()
        } else if self.waiting {
            "searching…".to_owned()
        } else {
            position(self.cursor.selected, self.hits.len())
        };
        let block = focus_block(format!(" search · {state} "), true);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}

/// The last search's hits, for `n`/`N`, and where in them we are.
#[derive(Debug, Default)]
pub struct LastHits {
    hits: Vec<Hit>,
    at: usize,
}

impl LastHits {
    pub fn new(hits: Vec<Hit>, at: usize) -> LastHits {
        LastHits { hits, at }
    }

    /// The hit at where we are.
    pub fn current(&self) -> Option<&Target> {
        self.hits.get(self.at).map(|h| &h.target)
    }

    /// Moves to the next hit (the previous one when not `forward`), round the end: its
    /// target, its number from 1 and how many there are. `None` before any search.
    pub fn step(&mut self, forward: bool) -> Option<(Target, usize, usize)> {
        let len = self.hits.len();
        if len == 0 {
            return None;
        }
        self.at = if forward { (self.at + 1) % len } else { (self.at + len - 1) % len };
        Some((self.hits[self.at].target.clone(), self.at + 1, len))
    }
}
