//! `:`: the command line, drawn on the status row; Enter hands the line to the app
//! ([`crate::command`]), Esc closes it.

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::component::Outcome;
use crate::field::Field;
use crate::style::{dim, heading};

#[derive(Debug, Default)]
pub struct CommandLine {
    line: Field,
}

impl CommandLine {
    pub fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Esc => Outcome::Close,
            KeyCode::Enter => Outcome::Command(self.line.text.clone()),
            _ => {
                self.line.edit(key, |_| true);
                Outcome::Stay
            }
        }
    }

    /// On the last row of the terminal, over the status line.
    pub fn draw(&self, frame: &mut Frame<'_>, area: Rect) {
        let row = Rect { y: area.y + area.height.saturating_sub(1), height: 1.min(area.height), ..area };
        frame.render_widget(Clear, row);
        let hint = if self.line.text.is_empty() { format!("   {}", crate::command::HELP) } else { String::new() };
        let line = Line::from(vec![
            Span::styled(":", heading()),
            Span::raw(self.line.text.clone()),
            Span::raw("█"),
            Span::styled(hint, dim()),
        ]);
        frame.render_widget(Paragraph::new(line), row);
    }
}
