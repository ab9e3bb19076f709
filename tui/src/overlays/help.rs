//! `?`: every key binding, per context, from the keymap itself.

use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{list_action, list_delta};
use crate::component::Outcome;
use crate::keys::{Action, BINDINGS, Context};
use crate::style::{centred, dim, focus_block, heading};

#[derive(Debug, Default)]
pub struct Help {
    scroll: usize,
}

impl Help {
    pub fn handle_key(&mut self, key: KeyEvent, page: usize) -> Outcome {
        let Some(a) = list_action(&key) else { return Outcome::Stay };
        self.scroll = self.scroll.saturating_add_signed(list_delta(a, page)).min(BINDINGS.len());
        match a {
            Action::Escape | Action::Enter => Outcome::Close,
            _ => Outcome::Stay,
        }
    }

    /// Draws the keys; the scroll stops where the last line is at the bottom, so paging
    /// past the end shows the last page (and `k` moves from there at once).
    pub fn draw(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let area = centred(area, 90, 90);
        frame.render_widget(Clear, area);
        let mut lines = Vec::new();
        for (context, title) in
            [(Context::Browse, "screens"), (Context::Viewer, "tensor viewer"), (Context::Overlay, "pickers")]
        {
            lines.push(Line::styled(title, heading()));
            for b in BINDINGS.iter().filter(|b| b.context == context) {
                lines.push(Line::from(vec![
                    Span::styled(format!("  {:<22}", b.keys.join(" ")), heading()),
                    Span::raw(b.what),
                ]));
            }
        }
        lines.push(Line::styled(
            "search: fzf syntax ('exact ^prefix suffix$ !not); Enter jumps, n/N walk the hits",
            dim(),
        ));
        lines.push(Line::styled(
            format!("search terms {} narrow the hits, all together with the fuzzy text", crate::search::PREFIXES),
            dim(),
        ));
        let visible = usize::from(area.height.saturating_sub(2));
        self.scroll = self.scroll.min(lines.len().saturating_sub(visible));
        let scroll = u16::try_from(self.scroll).unwrap_or(0);
        let block = focus_block(" keys (Esc closes) ".into(), true);
        frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), area);
    }
}
